#pragma once
// The collections a Hook's options include (writer/hook.hpp): `losses` always, include_collections,
// include_regex (into `default`), save_all (`all`, every tensor) and each configured collection
// with its settings. save_tensor may include more later (see hook.hpp).
#include <smdebug/core/collection.hpp>
#include <smdebug/writer/collection_manager.hpp>
#include <smdebug/writer/hook_config.hpp>

namespace smdebug {

inline void include_option_collections(CollectionManager& colls, const HookOptions& opts) {
    colls.include(collection_keys::losses);
    if (opts.include_collections)
        for (const auto& c : *opts.include_collections) colls.include(c);
    if (opts.include_regex) {
        auto& d = colls.get(collection_keys::default_);
        d.include_regex.insert(d.include_regex.end(), opts.include_regex->begin(), opts.include_regex->end());
        colls.include(collection_keys::default_);
    }
    if (opts.save_all) {
        colls.get(collection_keys::all).include_regex.push_back(".*");
        colls.include(collection_keys::all);
    }
    for (const auto& cs : opts.collections) {
        auto& c = colls.get(cs.name);
        c.include_regex.insert(c.include_regex.end(), cs.include_regex.begin(), cs.include_regex.end());
        for (const auto& t : cs.tensor_names) c.add_tensor_name(t);
        if (cs.save_config) c.save_config = cs.save_config;
        if (cs.reduction_config) c.reduction_config = cs.reduction_config;
        if (cs.save_histogram) c.save_histogram = *cs.save_histogram;
        colls.include(cs.name);
    }
}

}  // namespace smdebug
