// A Model (sub)tree as indented text, in the spirit of lstopo's console output
// but with stacksage's component types:
//
//   Node P#0 cpuset=0-3 "n01"
//     Chip(package) L#0 P#0 cpuset=0-3
//       Cache(L2) L#0 1.25 MiB cpuset=0-1
//         Core L#0 P#0 cpuset=0-1
//           Thread L#0 P#0 cpuset=0
//
// For people (terminal output, test failure messages, bug reports); scripts
// should read the JSON form (core/model_json.hpp) instead.
#pragma once

#include <cstdint>
#include <string>

#include "core/ids.hpp"

namespace stacksage {

class Model;

struct PrintOptions {
    // Levels printed below the root: 0 prints the root alone; -1 prints all.
    int max_depth = -1;
    // Appends the attributes not already on the line, in the order they were
    // set: {cache_level=2, cache_kind="unified"}.
    bool show_attributes = false;
    // Appends the DataPaths leaving and entering each component, counted by
    // type: [out MemoryAccess:3] [in MayRunOn:2 RanOn:1].
    bool show_datapaths = false;
    // Spaces per level.
    int indent = 2;
    // Prints one of a run of consecutive siblings that look alike (same type,
    // kind and size, and subtrees that look alike), then one line
    // "... N more alike, cpuset=<union of theirs>": a 160-PU node fits a screen.
    bool fold_alike_siblings = false;
};

// One line describing the component: the type, "(kind)" when the kind is set,
// "L#n" when the integer logical_index attribute is set, "P#n" when the OS
// index is known, the size_bytes attribute in binary units (KiB, MiB, ...),
// "cpuset=<list>" when the cpuset attribute is set ("cpuset=none" when empty),
// the quoted name when set, then what the options add. options.max_depth and
// options.indent do not apply.
//
// \return the line, without indentation or newline.
// \return "" when id is not a live component.
std::string component_summary(const Model& model, ComponentId id, const PrintOptions& options = {});

// The subtree of root as text: one component_summary() line per component,
// depth-first with children in order, each indented by its depth below root.
//
// \return the lines, each ended by '\n'.
// \return "" when root is not a live component.
std::string print_subtree(const Model& model, ComponentId root, const PrintOptions& options = {});

// A byte count in the largest binary unit that keeps it at least 1.
//
// \return the size with up to two decimals: "512 B", "32 KiB", "1.25 MiB",
//         "31.5 GiB"; negative counts get a leading '-'.
std::string human_size(std::int64_t bytes);

}  // namespace stacksage
