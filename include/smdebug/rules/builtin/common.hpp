#pragma once
// Shared pieces of the built-in rules: the runtime rule interface the registry hands out, tensor
// selection by collections and patterns, and element loops over any numeric dtype.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/param_table.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/rules/rule.hpp>

namespace smdebug {

// The interface of every built-in rule (and of any rule the registry constructs): a Rule whose
// invoke_at_step / set_required_tensors are virtual, so rules chosen at run time share one type.
template <Store S>
class RuntimeRule : public RuleBase<S> {
public:
    explicit RuntimeRule(Trial<S>& base, std::string name, std::vector<Trial<S>*> others = {}, Actions actions = {})
        : RuleBase<S>(base, std::move(name), std::move(others), std::move(actions)) {
        this->req_.skip_unavailable(true);  // a tensor that cannot be read at a step is skipped alone
    }
    virtual ~RuntimeRule() = default;
    virtual bool invoke_at_step(std::int64_t step) = 0;
    virtual void set_required_tensors(std::int64_t) {}
    // What the rule wants its user to know about the steps it was given, besides its findings:
    // e.g. that it never had enough steps to compare (LossNotDecreasing). One line each; `smdebug
    // rule` prints them on stderr, `smdebug diagnose` in its JSON.
    virtual std::vector<std::string> notes() const { return {}; }
};

namespace detail {

inline TensorNamesQuery names_query(std::optional<std::int64_t> step, std::optional<std::string> collection = std::nullopt,
                                    std::vector<std::string> regex = {}) {
    TensorNamesQuery q;
    q.step = step;
    q.collection = std::move(collection);
    q.regex = std::move(regex);
    return q;
}


template <Store S>
std::vector<std::string> all_tensors_at_step(Trial<S>& trial, std::int64_t step) {
    return trial.tensor_names(names_query(step));
}

// The tensors that belong to one of `collections` or match one of `regex` (a union; a collection
// the trial does not have contributes nothing), asked at each step of one trial. One listing of
// the step serves every collection and pattern; the patterns (the rule's and the collections')
// are compiled at the first step, not at every step, and each name's answer is remembered (a
// trial's collections are loaded once, when it is opened, and never change).
class TensorSelection {
public:
    TensorSelection() = default;  // selects nothing
    TensorSelection(std::vector<std::string> collections, std::vector<std::string> regex)
        : collections_(std::move(collections)), regex_(std::move(regex)) {}

    bool empty() const noexcept { return collections_.empty() && regex_.empty(); }

    // The selected names saved at `step` (sorted, no repeats).
    template <Store S>
    std::vector<std::string> at_step(Trial<S>& trial, std::int64_t step) {
        if (empty()) return {};
        auto names = all_tensors_at_step(trial, step);
        prepare(trial.collections());
        std::erase_if(names, [&](const std::string& n) { return !selects(n); });
        return names;
    }

private:
    struct Member {
        const Collection* collection;
        CompiledRegex include;
    };

    void prepare(const std::map<std::string, Collection>& trial_collections) {
        if (prepared_) return;
        CompiledRegex compiled;  // a bad pattern throws here, at every step, as an uncached query would
        for (const auto& p : regex_) compiled.add(p);
        std::vector<Member> members;
        for (const auto& name : collections_) {
            const auto it = trial_collections.find(name);
            if (it == trial_collections.end()) continue;
            Member m{&it->second, {}};
            for (const auto& p : it->second.include_regex) m.include.add(p);
            members.push_back(std::move(m));
        }
        compiled_ = std::move(compiled);
        members_ = std::move(members);
        prepared_ = true;
    }
    bool selects(const std::string& name) {
        if (const auto it = known_.find(name); it != known_.end()) return it->second;
        bool in = compiled_.search(name);
        for (const auto& m : members_) in = in || m.collection->has_tensor_name(name) || m.include.search(name);
        known_.emplace(name, in);
        return in;
    }

    std::vector<std::string> collections_, regex_;
    bool prepared_ = false;
    CompiledRegex compiled_;
    std::vector<Member> members_;
    std::unordered_map<std::string, bool> known_;
};

// Names of tensors saved at `step` that belong to one of `collections` or match one of `regex`
// (sorted, no repeats), for a one-off question; a rule asking at every step keeps a TensorSelection.
template <Store S>
std::vector<std::string> tensors_at_step(Trial<S>& trial, std::int64_t step, const std::vector<std::string>& collections,
                                         const std::vector<std::string>& regex) {
    return TensorSelection(collections, regex).at_step(trial, step);
}

template <class T>
constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// Calls f(std::span<const T>) with the elements of a numeric or bool value; false for strings
// and complex values (which the rules do not inspect).
template <class F>
bool with_elements(const TensorValue& v, F&& f) {
    if (v.is_string()) return false;
    return visit_dtype(v.dtype(), [&](auto tag) -> bool {
        using T = decltype(tag);
        if constexpr (is_complex_v<T>) return false;
        else {
            f(v.template elements<T>());
            return true;
        }
    });
}

// Index of the first element that is NaN (or, unless nan_only, ±inf); -1 when none.
template <class T>
std::int64_t first_nonfinite(std::span<const T> e, bool nan_only) {
    if constexpr (std::is_same_v<T, float>) {
        // Blocks of 256, checked with a branch-free OR of "exponent all ones" that the compiler
        // vectorises; the element is located only inside a block that has one.
        const std::size_t n = e.size();
        for (std::size_t b = 0; b < n; b += 256) {
            const std::size_t end = std::min(n, b + 256);
            std::uint32_t any = 0;
            for (std::size_t i = b; i < end; ++i) {
                std::uint32_t bits;
                std::memcpy(&bits, &e[i], 4);
                any |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
            }
            if (!any) continue;
            for (std::size_t i = b; i < end; ++i)
                if (std::isnan(e[i]) || (!nan_only && std::isinf(e[i]))) return static_cast<std::int64_t>(i);
        }
        return -1;
    } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16>) {
        for (std::size_t i = 0; i < e.size(); ++i) {
            const double x = to_double(e[i]);
            if (std::isnan(x) || (!nan_only && std::isinf(x))) return static_cast<std::int64_t>(i);
        }
        return -1;
    } else {
        return -1;  // integers and bools are always finite
    }
}

inline std::vector<double> as_doubles(const TensorValue& v) {
    std::vector<double> out;
    with_elements(v, [&](auto e) {
        out.reserve(e.size());
        for (const auto& x : e) out.push_back(to_double(x));
    });
    return out;
}

}  // namespace detail
}  // namespace smdebug
