// What loading one process image's event log has to tell the user: torn
// lines, events skipped or altered, masks clipped, creations not followed.
// Each is a LoadNote of the log's file (run_loader.cpp adds the file name).
#pragma once

#include <vector>

#include "core/load_note.hpp"
#include "parsers/process_log.hpp"

namespace stacksage {

// The image's notes, in the order the reports list them: the log's framing
// first (torn lines, unknown events, a newer schema), then what only an
// altered file explains, then the interpreter's own notes (image.notes).
// Each LoadNote's `file` is left empty.
std::vector<LoadNote> notes_of_image(const ProcessImage& image);

}  // namespace stacksage
