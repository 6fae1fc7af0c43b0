#pragma once
// Refresh scopes (D20): switch a trial's automatic refreshing off (or on) for a block of queries
// and restore it on exit, for one trial, several, or a run-time list of them.
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace smdebug {

// Anything with the dynamic-refresh switch of a Trial.
template <class T>
concept RefreshableTrial = requires(T& t, bool on) {
    { t.dynamic_refresh() } -> std::convertible_to<bool>;
    t.set_dynamic_refresh(on);
};

namespace detail {
// The trial behind an element of a list of trials: a trial, a (smart) pointer to one, or a
// reference_wrapper.
template <class E>
auto* trial_address(E&& e) {
    using T = std::remove_cvref_t<E>;
    if constexpr (RefreshableTrial<T>) return &e;
    else if constexpr (requires { e.get(); } && !requires { *e; }) return trial_address(e.get());
    else return trial_address(*e);
}
template <class R>
using trial_of_range = std::remove_pointer_t<decltype(trial_address(std::declval<std::ranges::range_reference_t<R>>()))>;
}  // namespace detail

// A list or span of trials (or pointers, smart pointers, reference_wrappers to trials).
template <class R>
concept TrialRange = std::ranges::input_range<R> && !RefreshableTrial<std::remove_cvref_t<R>> &&
                     requires { typename detail::trial_of_range<R>; } && RefreshableTrial<detail::trial_of_range<R>>;

// RAII refresh scope for a fixed set of trials: switches automatic refreshing on or off and
// restores each trial's previous setting on exit, exceptions included. Scopes nest.
template <class... Trials>
class RefreshScope {
public:
    RefreshScope(bool on, Trials&... trials) : saved_{{&trials, trials.dynamic_refresh()}...} {
        (trials.set_dynamic_refresh(on), ...);
    }
    ~RefreshScope() { restore(std::index_sequence_for<Trials...>{}); }
    RefreshScope(const RefreshScope&) = delete;
    RefreshScope& operator=(const RefreshScope&) = delete;

private:
    template <std::size_t... I>
    void restore(std::index_sequence<I...>) noexcept {
        // Last in, first restored: a trial named twice ends with its original setting.
        constexpr std::size_t n = sizeof...(I);
        ((std::get<n - 1 - I>(saved_).first->set_dynamic_refresh(std::get<n - 1 - I>(saved_).second)), ...);
    }
    std::tuple<std::pair<Trials*, bool>...> saved_;
};

// The same for a list of trials known at run time.
template <class T>
class RefreshScopeList {
public:
    template <class R>
    RefreshScopeList(bool on, R&& trials) {
        for (auto&& e : trials) {
            T* t = detail::trial_address(e);
            saved_.emplace_back(t, t->dynamic_refresh());
        }
        for (auto& [t, prev] : saved_) t->set_dynamic_refresh(on);
    }
    ~RefreshScopeList() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->set_dynamic_refresh(it->second);
    }
    RefreshScopeList(const RefreshScopeList&) = delete;
    RefreshScopeList& operator=(const RefreshScopeList&) = delete;
    std::size_t size() const noexcept { return saved_.size(); }

private:
    std::vector<std::pair<T*, bool>> saved_;
};

// `auto scope = no_refresh(a, b);` — no automatic refresh for a and b until the scope ends.
template <RefreshableTrial... Trials>
    requires(sizeof...(Trials) > 0)
[[nodiscard]] RefreshScope<Trials...> no_refresh(Trials&... trials) { return RefreshScope<Trials...>(false, trials...); }
template <RefreshableTrial... Trials>
    requires(sizeof...(Trials) > 0)
[[nodiscard]] RefreshScope<Trials...> refresh(Trials&... trials) { return RefreshScope<Trials...>(true, trials...); }

// `auto scope = no_refresh(trials);` for a vector / span / list of trials or pointers to trials.
template <TrialRange R>
[[nodiscard]] RefreshScopeList<detail::trial_of_range<R>> no_refresh(R&& trials) {
    return RefreshScopeList<detail::trial_of_range<R>>(false, trials);
}
template <TrialRange R>
[[nodiscard]] RefreshScopeList<detail::trial_of_range<R>> refresh(R&& trials) {
    return RefreshScopeList<detail::trial_of_range<R>>(true, trials);
}
// `auto scope = no_refresh({&a, &b});`
template <RefreshableTrial T>
[[nodiscard]] RefreshScopeList<T> no_refresh(std::initializer_list<T*> trials) { return RefreshScopeList<T>(false, trials); }
template <RefreshableTrial T>
[[nodiscard]] RefreshScopeList<T> refresh(std::initializer_list<T*> trials) { return RefreshScopeList<T>(true, trials); }

}  // namespace smdebug
