#pragma once
// CollectionManager: the writer's collections (docs/format.md §9.2) — the built-in ones, which of them
// are saved, their save/reduction configs once prepared, which are active at a (mode, mode step),
// and which collections a tensor name belongs to (ECMAScript regex search or tensor_names).
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/writer/save_config.hpp>

namespace smdebug {

namespace collection_keys {
inline constexpr std::string_view default_ = "default", all = "all", weights = "weights", biases = "biases",
                                  gradients = "gradients", losses = "losses", metrics = "metrics",
                                  sm_metrics = "sm_metrics", optimizer_variables = "optimizer_variables",
                                  feature_importance = "feature_importance", average_shap = "average_shap";
}  // namespace collection_keys

// Scalar collections: raw values only, no reductions, no histograms (docs/format.md §9.2).
inline bool is_scalar_collection(std::string_view name) noexcept {
    using namespace collection_keys;
    return name == losses || name == metrics || name == sm_metrics || name == feature_importance || name == average_shap;
}

// Built-in collections and their patterns (the PyTorch hook's set).
inline std::vector<Collection> builtin_collections() {
    auto make = [](std::string_view name, std::vector<std::string> regex) {
        Collection c;
        c.name = std::string(name);
        c.include_regex = std::move(regex);
        return c;
    };
    using namespace collection_keys;
    return {make(all, {}),
            make(default_, {}),
            make(weights, {"^(?!gradient).*weight"}),
            make(biases, {"^(?!gradient).*bias"}),
            make(gradients, {"^gradient"}),
            make(losses, {"[Ll]oss_(?!input).*output"})};
}

class CollectionManager {
public:
    CollectionManager() {
        for (auto& c : builtin_collections()) {
            builtin_.insert(c.name);
            std::string key = c.name;
            entries_.emplace(std::move(key), Entry{std::move(c), {}, {}});
        }
    }

    // The collection `name`, created empty when missing. A collection created after prepare()
    // gets the hook's configs at once. Invalidates the tensor -> collections cache (the caller
    // may change patterns through the reference).
    Collection& get(std::string_view name) {
        tensor_cache_.clear();
        ++version_;
        return entry(name).collection;
    }
    const Collection* find(std::string_view name) const {
        auto it = entries_.find(name);
        return it == entries_.end() ? nullptr : &it->second.collection;
    }
    bool is_builtin(std::string_view name) const { return builtin_.contains(name); }

    // Marks `name` as saved (include_collections); creates it when missing.
    void include(std::string_view name) {
        if (included_.contains(name)) return;
        entry(name);
        included_.emplace(name);
        tensor_cache_.clear();
        ++version_;
    }
    bool included(std::string_view name) const {
        return included_.contains(name) || included_.contains(collection_keys::all);
    }
    bool prepared() const noexcept { return prepared_; }
    // Changes whenever a collection may have changed or was included (active() may differ).
    std::uint64_t version() const noexcept { return version_; }

    // Checks every non-built-in collection has patterns or names, and gives every collection a
    // complete save config (missing modes from `hook_save`) and a reduction config
    // (`hook_reduction`, or raw-only for scalar collections). docs/format.md §9.1–§9.3.
    void prepare(const SaveConfig& hook_save, const ReductionConfig& hook_reduction) {
        hook_save_ = hook_save;
        fill_missing_modes(hook_save_, SaveConfig(SaveConfigMode{}));
        hook_reduction_ = hook_reduction;
        for (const auto& [name, e] : entries_)
            if (!is_builtin(name) && e.collection.include_regex.empty() && e.collection.tensor_names.empty())
                throw InvalidCollectionConfiguration("collection " + name + " has neither include_regex nor tensor_names");
        for (auto& [name, e] : entries_) prepare_one(e.collection);
        prepared_ = true;
        tensor_cache_.clear();
        ++version_;
    }

    // Included collections that save at this mode step (never gradients / optimizer_variables in
    // EVAL or PREDICT).
    std::vector<const Collection*> active(Mode mode, std::int64_t mode_step) const {
        std::vector<const Collection*> out;
        for (const auto& [name, e] : entries_) {
            if (!included(name)) continue;
            if ((mode == Mode::EVAL || mode == Mode::PREDICT) &&
                (name == collection_keys::gradients || name == collection_keys::optimizer_variables))
                continue;
            const auto& sc = e.collection.save_config;
            if (sc && (*sc)[mode] && (*sc)[mode]->should_save(mode_step)) out.push_back(&e.collection);
        }
        return out;
    }

    // Included collections holding `tensor` (by name, or by a pattern found anywhere in it).
    // Pattern matches add the name to the collection's tensor_names, as the reference does, so
    // the exported collections list it. Cached per name.
    const std::vector<const Collection*>& collections_for(const std::string& tensor) { return membership(tensor).included; }

    // Whether any collection, included or not, names or matches `tensor`.
    bool known(const std::string& tensor) { return membership(tensor).any; }

    // Adds `tensor` to `collection` (created when missing; not included by this call).
    void add_tensor_name(std::string_view collection, const std::string& tensor) {
        auto& c = entry(collection).collection;
        if (c.has_tensor_name(tensor)) return;
        c.add_tensor_name(tensor);
        tensor_cache_.erase(tensor);
    }

    // The collections file content (every collection, in name order).
    collections_file::CollectionsFile snapshot(int num_workers) const {
        collections_file::CollectionsFile f;
        f.num_workers = num_workers;
        for (const auto& [name, e] : entries_) f.collections.push_back(e.collection);
        return f;
    }

private:
    struct Entry {
        Collection collection;
        std::vector<std::string> compiled_from;
        detail::CompiledRegex compiled;  // the reader's dialect: ECMAScript, searched anywhere

        bool matches(const std::string& tensor) {
            if (compiled_from != collection.include_regex) {
                compiled.clear();
                for (const auto& p : collection.include_regex) compiled.add(p);
                compiled_from = collection.include_regex;
            }
            return compiled.search(tensor);
        }
    };

    struct Membership {
        std::vector<const Collection*> included;
        bool any = false;
    };

    const Membership& membership(const std::string& tensor) {
        auto it = tensor_cache_.find(tensor);
        if (it != tensor_cache_.end()) return it->second;
        Membership m;
        for (auto& [name, e] : entries_) {
            const bool by_name = e.collection.has_tensor_name(tensor);
            if (!by_name && !e.matches(tensor)) continue;
            m.any = true;
            if (!included(name)) continue;
            if (!by_name) e.collection.add_tensor_name(tensor);
            m.included.push_back(&e.collection);
        }
        return tensor_cache_.emplace(tensor, std::move(m)).first->second;
    }

    Entry& entry(std::string_view name) {
        auto it = entries_.find(name);
        if (it == entries_.end()) {
            Collection c;
            c.name = std::string(name);
            it = entries_.emplace(std::string(name), Entry{std::move(c), {}, {}}).first;
            if (prepared_) prepare_one(it->second.collection);
        }
        return it->second;
    }

    void prepare_one(Collection& c) const {
        if (is_scalar_collection(c.name)) c.save_histogram = false;
        if (!c.save_config) c.save_config = hook_save_;
        else fill_missing_modes(*c.save_config, hook_save_);
        if (is_scalar_collection(c.name)) {
            ReductionConfig raw;
            raw.save_raw_tensor = true;
            c.reduction_config = raw;
        } else if (!c.reduction_config) {
            c.reduction_config = hook_reduction_;
        }
    }

    std::map<std::string, Entry, std::less<>> entries_;
    std::set<std::string, std::less<>> builtin_;
    std::set<std::string, std::less<>> included_;
    bool prepared_ = false;
    std::uint64_t version_ = 0;
    SaveConfig hook_save_ = SaveConfig(SaveConfigMode{});
    ReductionConfig hook_reduction_;
    std::unordered_map<std::string, Membership> tensor_cache_;
};

}  // namespace smdebug
