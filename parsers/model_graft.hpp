// Copying a subtree of one model, with its attributes and the DataPaths
// inside it, under a component of another model.
//
// The run loader loads each host's topology into a model of its own (that is
// what load_hwloc_xml returns) and grafts it into the merged model of the run;
// hosts with identical topologies are loaded once and grafted many times.
// (A model-level operation that would belong in core/; it lives here because
// core is another module's.)
#pragma once

#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

// Copies `root` of `from` and its whole subtree under `parent` of `to` (as
// its last child), with every attribute, and every DataPath of `from` whose
// both ends lie in the subtree (with its attributes, bandwidth, latency and
// orientation; user DataPath types are re-interned by name).
//
// \return the id of the copy of root in `to`.
// \return an Error when root is not a live component of `from`, or parent is
//         neither kNoComponent nor a live component of `to`.
Result<ComponentId> graft_subtree(const Model& from, ComponentId root, Model& to, ComponentId parent);

}  // namespace stacksage
