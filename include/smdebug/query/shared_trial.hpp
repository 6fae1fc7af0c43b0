#pragma once
// SharedTrial<Store>: one Trial that many threads may use at once.
//
// A Trial is not thread-safe: it refreshes itself lazily from inside queries (steps(),
// tensor_names(), value() may list and load new index files), so even "reading" calls change it.
// SharedTrial owns a Trial and runs every call under one mutex: queries from many threads and a
// thread refreshing it never overlap. Calls are serialised, not parallel: for parallel reads give
// each thread its own Trial over the same store (stores and S3 clients are thread-safe), or read
// many values in one call (Tensor::values batches its reads).
//
//   SharedTrial<LocalStore> shared(LocalStore("/tmp/run1"));
//   // any thread:
//   auto steps = shared.steps();
//   TensorValue w = shared.value("Net_fc1.weight", steps.back());
//   auto n = shared.with([](Trial<LocalStore>& t) { return t.tensor("loss").values().size(); });
//
// with() hands out the Trial only for the duration of the call: a Tensor<S>, reference or
// iterator taken from it must not leave the function. TensorValues own their data and may.
//
// Code that holds several SharedTrials at once (a rule over a base trial and others) takes their
// locks itself, in one order for the whole program (e.g. by address), with lock(), and reaches each
// Trial through trial(lock). The Trial never moves, so a reference kept from there stays valid for
// the SharedTrial's life; it may be used only while the lock is held again.
#include <cassert>
#include <concepts>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

template <Store S>
class SharedTrial {
public:
    explicit SharedTrial(S store, TrialOptions options = {}) : trial_(std::move(store), std::move(options)) {}
    // The Trial that make() returns, built in place (a Trial cannot move), e.g.
    // SharedTrial<AnyStore>(std::in_place, [&] { return create_trial(path, options); }).
    template <class Make>
        requires std::same_as<std::invoke_result_t<Make>, Trial<S>>
    SharedTrial(std::in_place_t, Make&& make) : trial_(std::forward<Make>(make)()) {}
    SharedTrial(const SharedTrial&) = delete;
    SharedTrial& operator=(const SharedTrial&) = delete;

    // Runs f(Trial<S>&) with the trial locked; returns what f returns.
    template <class F>
    decltype(auto) with(F&& f) {
        std::lock_guard lock(mu_);
        return std::forward<F>(f)(trial_);
    }

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false) {
        return with([&](Trial<S>& t) { return t.steps(mode, show_incomplete_steps); });
    }
    std::vector<std::string> tensor_names(const TensorNamesQuery& q = {}) {
        return with([&](Trial<S>& t) { return t.tensor_names(q); });
    }
    bool has_tensor(const std::string& name) {
        return with([&](Trial<S>& t) { return t.has_tensor(name); });
    }
    TensorValue value(const std::string& name, std::int64_t step, const StepQuery& q = {}) {
        return with([&](Trial<S>& t) { return t.tensor(name).value(step, q); });
    }
    void refresh() {
        with([](Trial<S>& t) { t.refresh_data(); });
    }

    std::unique_lock<std::mutex> lock() { return std::unique_lock(mu_); }
    // The Trial, for the holder of lock().
    Trial<S>& trial(const std::unique_lock<std::mutex>& held) noexcept {
        assert(held.owns_lock() && held.mutex() == &mu_);
        (void)held;
        return trial_;
    }

private:
    std::mutex mu_;
    Trial<S> trial_;
};

}  // namespace smdebug
