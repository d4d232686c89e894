// Copying a subtree, with its DataPaths and a chosen set of attributes, from
// one model into another: the sys-sage thesis' export of a subtree, and its
// "future work", the import of a subtree under a chosen parent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"

namespace stacksage {

// The attribute lists of one copy of a subtree, in the order of the copy,
// for the next copies of the same subtree into the same model to share
// (Model::share_attributes): a run grafts one topology on thousands of nodes.
struct SharedSubtreeAttributes {
    std::vector<Model::SharedAttributes> components;  // in walk order
    std::vector<Model::SharedAttributes> datapaths;   // in copy order
    bool filled = false;
};

struct CopyOptions {
    // Attribute names to copy; nullopt copies every attribute.
    std::optional<std::vector<std::string>> attribute_names;
    // Copy DataPaths whose two ends are both inside the subtree.
    bool datapaths = true;
    // When given: empty, the copy fills it with its lists; filled (by an
    // earlier copy of the same src subtree, unchanged, into the same dst),
    // the copy shares those lists instead of copying the attributes.
    SharedSubtreeAttributes* shared = nullptr;
};

// Copies the subtree of src_root in src under dst_parent in dst
// (kNoComponent: as a new root), keeping children order, kinds, names, OS
// indices, the chosen attributes and the inner DataPaths (user-named types are
// interned in dst by name).
// \return the id of the copy of src_root in dst, or kNoComponent when
//         src_root is not a live component of src or dst_parent is not a live
//         component of dst.
ComponentId import_subtree(Model& dst, ComponentId dst_parent, const Model& src, ComponentId src_root,
                           const CopyOptions& options = {});

// A new model holding only that subtree: what a subtree export writes.
Model extract_subtree(const Model& src, ComponentId root, const CopyOptions& options = {});

}  // namespace stacksage
