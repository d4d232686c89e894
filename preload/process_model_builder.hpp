// The process's own model, built from its event log as the analyzer reads
// it: from the image parsers/process_log.hpp interprets, the one interpreter
// of the logs, not from a second reading of the events.
//
// The process becomes a Process component and each of its threads a Flow
// under it, in their own subtree apart from the hardware; each interval in
// which a thread was allowed to run on a PU becomes a MayRunOn DataPath from
// the Flow to that PU (a Thread component of the node's topology), with
// keys::start_ns, keys::end_ns and the event that opened it ("reason").
// Affinity changes close the open intervals of their target and open new
// ones; so do the thread snapshots taken at MPI_Init and MPI_Finalize when
// they disagree with what is known (a mask changed behind our back), and a
// thread's end when its mask then differs (an interval of no length).
// Paths are added in the order the log recorded the changes.
#pragma once

#include <vector>

#include "core/model.hpp"
#include "parsers/process_log.hpp"

namespace stacksage::preload {

// Adds image's process and its threads to model. node: the Node component
// of the host's topology in model, whose PUs the intervals point to.
// unknown_cpus, when given, receives the CPUs named in masks that the
// topology does not have (their intervals are left out).
//
// \return the Process component.
ComponentId add_process_model(Model& model, ComponentId node, const ProcessImage& image,
                              std::vector<unsigned>* unknown_cpus = nullptr);

}  // namespace stacksage::preload
