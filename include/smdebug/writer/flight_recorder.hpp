#pragma once
// FlightRecorder: the Hook's anomaly window (HookOptions::anomaly_window; writer/hook.hpp).
//
// With a window of K steps every step records the included collections, whatever their save
// configs say. A step the save configs ask for is written as usual. Any other step is sealed and
// kept in memory, among the steps of the last K global steps, at most max_bytes of event data
// (the oldest kept step is dropped first). When a step records a non-finite value (NaN or an
// infinity in a floating-point or complex tensor, the loss included), the kept steps are written,
// oldest first, then that step. The recorder then waits for a step without a non-finite value
// before it fires again: a run whose weights stay NaN leaves one window, not every later step.
// Kept steps that never precede an anomaly are dropped (close() does not write them).
//
// Cost: recording every step costs what saving every step costs on the training thread (the
// copies and encoding), without the file writes; the scan for non-finite values reads each
// recorded tensor once more.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/writer/collection_manager.hpp>
#include <smdebug/writer/step_writer.hpp>

namespace smdebug {

namespace detail {

template <class T>
bool any_non_finite(std::span<const std::byte> bytes) {
    const std::size_t n = bytes.size() / sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
        T x;
        std::memcpy(&x, bytes.data() + i * sizeof(T), sizeof(T));
        if (!std::isfinite(x)) return true;
    }
    return false;
}

}  // namespace detail

// Whether `v` holds a NaN or an infinity (floating-point and complex dtypes; never the others).
inline bool has_non_finite(const TensorValue& v) {
    if (v.is_string() || v.empty()) return false;
    const auto b = v.bytes();
    switch (v.dtype()) {
        case DType::float16: {
            for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
                std::uint16_t h;
                std::memcpy(&h, b.data() + i, 2);
                if ((h & 0x7c00u) == 0x7c00u) return true;  // exponent all ones: inf or NaN
            }
            return false;
        }
        case DType::float32:
        case DType::complex64: return detail::any_non_finite<float>(b);
        case DType::float64:
        case DType::complex128: return detail::any_non_finite<double>(b);
        default: return false;
    }
}

namespace detail {

class FlightRecorder {
public:
    FlightRecorder() = default;
    FlightRecorder(std::size_t window, std::size_t max_bytes) : window_(window), max_bytes_(max_bytes) {}

    bool enabled() const noexcept { return window_ > 0; }

    // At a step's beginning: the collections it records (see collections()).
    std::vector<const Collection*> begin_step(const CollectionManager& colls, Mode mode, std::int64_t mode_step) {
        anomaly_ = false;
        return collections(colls, mode, mode_step);
    }

    // The included collections whose save configs save at this mode step; when there are none and
    // the recorder is on, every included collection of the mode (the step is then kept, not written).
    std::vector<const Collection*> collections(const CollectionManager& colls, Mode mode, std::int64_t mode_step) {
        auto active = colls.active(mode, mode_step);
        keeping_ = enabled() && active.empty();
        if (!keeping_) return active;
        return recordable(colls, mode);
    }

    // The current step is kept in memory rather than written (unless an anomaly comes).
    bool keeping() const noexcept { return keeping_; }

    // Every tensor the step records.
    void observe(const TensorValue& v) {
        if (enabled() && !anomaly_ && has_non_finite(v)) anomaly_ = true;
    }

    // The steps to write, oldest first, now that `step` is sealed; keeps `step` when it is not.
    std::vector<StepWriter> seal(StepWriter step) {
        std::vector<StepWriter> out;
        const bool fire = anomaly_ && armed_;
        if (enabled()) armed_ = !anomaly_;
        if (fire) {
            const std::int64_t first = step.step() - static_cast<std::int64_t>(window_);
            for (auto& k : kept_)
                if (k.step() >= first) out.push_back(std::move(k));
            kept_.clear();
            kept_bytes_ = 0;
            out.push_back(std::move(step));
        } else if (!keeping_) {
            out.push_back(std::move(step));
        } else {
            const std::int64_t newest = step.step();
            kept_bytes_ += step.event_bytes();
            kept_.push_back(std::move(step));
            while (!kept_.empty() && (kept_.front().step() < newest - static_cast<std::int64_t>(window_) + 1 || kept_bytes_ > max_bytes_)) {
                kept_bytes_ -= kept_.front().event_bytes();
                kept_.pop_front();
            }
        }
        return out;
    }

    std::size_t kept_steps() const noexcept { return kept_.size(); }

private:
    // Included collections that apply in `mode` (not gradients / optimizer_variables in EVAL or
    // PREDICT, as CollectionManager::active), cached until the collections change.
    const std::vector<const Collection*>& recordable(const CollectionManager& colls, Mode mode) {
        if (cache_version_ != colls.version() || cache_mode_ != mode || !cached_) {
            recordable_.clear();
            for (const auto& c : colls.snapshot(1).collections) {
                if (!colls.included(c.name)) continue;
                if ((mode == Mode::EVAL || mode == Mode::PREDICT) &&
                    (c.name == collection_keys::gradients || c.name == collection_keys::optimizer_variables))
                    continue;
                const Collection* p = colls.find(c.name);
                if (p && p->save_config && (*p->save_config)[mode]) recordable_.push_back(p);
            }
            cache_version_ = colls.version();
            cache_mode_ = mode;
            cached_ = true;
        }
        return recordable_;
    }

    std::size_t window_ = 0;
    std::size_t max_bytes_ = 0;
    bool keeping_ = false, anomaly_ = false, armed_ = true;
    std::deque<StepWriter> kept_;
    std::size_t kept_bytes_ = 0;
    std::vector<const Collection*> recordable_;
    std::uint64_t cache_version_ = 0;
    Mode cache_mode_ = Mode::GLOBAL;
    bool cached_ = false;
};

}  // namespace detail
}  // namespace smdebug
