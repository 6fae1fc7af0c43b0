#pragma once
// Shared pieces of the built-in rules: the runtime rule interface the registry hands out, tensor
// selection by collections and patterns, and element loops over any numeric dtype.
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/query/trial.hpp>
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


// Names of tensors saved at `step` that belong to one of `collections` or match one of `regex`
// (sorted, no repeats). A collection the trial does not have contributes nothing.
template <Store S>
std::vector<std::string> tensors_at_step(Trial<S>& trial, std::int64_t step, const std::vector<std::string>& collections,
                                         const std::vector<std::string>& regex) {
    std::set<std::string> names;
    for (const auto& c : collections)
        for (auto& n : trial.tensor_names(names_query(step, c))) names.insert(std::move(n));
    if (!regex.empty())
        for (auto& n : trial.tensor_names(names_query(step, std::nullopt, regex))) names.insert(std::move(n));
    return {names.begin(), names.end()};
}
template <Store S>
std::vector<std::string> all_tensors_at_step(Trial<S>& trial, std::int64_t step) {
    return trial.tensor_names(names_query(step));
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
