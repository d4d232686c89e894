// JSON form of a whole Model: components, tree, DataPaths and attributes.
//
// The schema is documented in docs/model-json.md. Ids in the file are
// compacted (live components, then live DataPaths, renumbered in id order), so
// a model that had components removed is written without holes, and
// export -> import -> export gives the same bytes.
//
// This is the interchange format (readable by scripts, diffable, stable across
// versions); the in-place memory image is a separate format.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

// Major version of the schema this build writes and the newest it reads.
// Readers refuse files with a higher version; additions that older readers
// can safely ignore do not change it.
inline constexpr int kModelJsonVersion = 1;

// The JSON form of every live component and DataPath of the model.
// Strings are copied as they are: dumping a model whose strings are not valid
// UTF-8 needs nlohmann's error_handler_t::replace (as write_model_json does).
//
// \return the document; never fails.
nlohmann::json model_to_json(const Model& model);

// Rebuilds a model from its JSON form. Component i of the file becomes
// component i of the new model, DataPath j becomes DataPath j, user DataPath
// types keep their numbers, and children and attributes keep their order.
//
// \return the model.
// \return an Error naming what is wrong and where ("component 12: parent 99
//         out of range (the file has 40 components)") when the document is
//         not a stacksage model, has a newer version, or is inconsistent
//         (unknown types, bad indices, parent cycles, children lists that
//         disagree with parents, ill-typed values, bad cpusets). Never a
//         partial model.
Result<Model> model_from_json(const nlohmann::json& document);

// Writes the model's JSON form to path, UTF-8, one component or DataPath per
// line. The text goes to "<path>.tmp" first and is renamed over path, so a
// failed write leaves any previous file in place. Strings that are not valid
// UTF-8 are written with U+FFFD in place of the bad bytes.
//
// \return Ok.
// \return an Error starting with the path when it cannot be written.
Status write_model_json(const Model& model, const std::string& path);

// Reads a model written by write_model_json (or by hand, or by a script).
//
// \return the model, as model_from_json builds it.
// \return an Error starting with the path when the file cannot be opened, is
//         not JSON ("invalid JSON at byte N: ..."), or is refused by
//         model_from_json (its message follows the path).
Result<Model> read_model_json(const std::string& path);

}  // namespace stacksage
