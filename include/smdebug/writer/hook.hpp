#pragma once
// Hook<Store>: saves tensors from C++ training into an smdebug trial (docs/format.md §2–§11)
// that smdebug-cpp's Trial and the reference Python smdebug both read.
//
//   Hook<AnyStore> hook("/tmp/run1", options);      // or "s3://bucket/prefix", or a JSON config
//   hook.set_mode(Mode::TRAIN);
//   for (...) {
//       hook.next_step();                            // closes the previous step, begins the next
//       hook.save_tensor("Net_fc1.weight", w);       // any xtensor expression, range, scalar ...
//       hook.save_tensor("CrossEntropyLoss_output_0", loss);
//       hook.save_scalar("lr", lr);
//   }
//   hook.close();                                    // last step, collections, end marker
//
// Steps. Counters follow docs/format.md §7: next_step() advances the global step and the current
// mode's step (first step 0; a mode's counter starts when the mode is first used; in GLOBAL mode
// the mode step is the global step). set_mode() takes effect at the next step boundary: a step
// keeps the mode it began with. Saving before the first next_step() begins step 0 implicitly.
//
// What is saved. A tensor belongs to the included collections that name it or whose pattern is
// found in its name (ECMAScript regex search). Collections are included by the options
// (include_collections, include_regex -> `default`, save_all -> `all`, configured collections;
// `losses` always) and by save_tensor in two cases, as the reference's save_tensor does: a
// collection name the call introduces is created and included, and a tensor saved without
// collection names that no collection names or matches joins `default`, which is then included.
// A tensor is saved in a step when one of its collections saves at the step's mode step
// (docs/format.md §9.1), and then, per docs/format.md §9.3: its shape (see
// HookOptions::record_shape_with_raw_value), its reductions (computed in double, stored as
// "smdebug/reductions/[abs_]<red>/<name>", float64 shape [1]), a TensorBoard histogram, its raw
// value, a TensorBoard scalar. Zero-element tensors are not stored raw (the reference reader cannot
// read them); their shape is recorded instead. Saving one name twice in a step is an error.
//
// Files. Each step's records are encoded as they are saved and written when the step closes:
// the event file, then the index file (StepWriter), each durable before the next. Closed steps
// are written in order by a background writer (writer/detail/step_queue.hpp; HookOptions::
// background_writer), so next_step() returns without waiting for I/O unless the writer's queue
// is full (back-pressure). It does not even wake the writer, which polls while steps keep coming
// (a wake costs the training thread ~30 us on a VM), and the buffers of written steps are reused
// for the next ones. The collections file is written after the first step with files, and
// again at close() if it changed. close() writes training_job_end.ts (not when TRAINING_JOB_NAME
// is set) once every step is on the store.
//
// Durability and errors. flush() returns once every closed step is durable; close() returns
// once everything is. A step whose files cannot be written is kept and retried (nothing is
// dropped): the store's error (a StorageError) is thrown by the next next_step(), flush() or
// close() — once per failure — and the writer then retries that step first. Without the
// background writer next_step() writes and throws at once, as flush() does.
//
// Thread safety: a Hook is used by one thread at a time; many Hooks in one process are independent
// (docs/thread-safety.md). It is neither copyable nor movable (hold it by unique_ptr).
//
// This header declares; a Hook is made of detail::HookImpl (writer/detail/hook_impl.hpp), defined
// in writer/impl/hook.ipp: included here in header-only mode, compiled once by <smdebug/src.hpp> in
// separate mode (core/config.hpp). Only the conversions of save_tensor's arguments are templates here.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/config.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/storage/store.hpp>
#include <smdebug/writer/hook_config.hpp>
#include <smdebug/writer/tensor_input.hpp>

namespace smdebug {

class Collection;
class CollectionManager;
namespace detail {
template <WritableStore S> class HookImpl;
}

// The out_dir already holds a finished trial (training_job_end.ts): the hook refuses to mix runs.
class OutDirAlreadyExists : public SMDebugRuntimeError {
public:
    using SMDebugRuntimeError::SMDebugRuntimeError;
};

inline constexpr std::string_view scalar_prefix = "scalar/";

template <WritableStore S>
class Hook {
public:
    using store_type = S;

    // out_dir: a folder ("~" expanded) or, for S = AnyStore / S3Store, "s3://bucket/prefix".
    explicit Hook(std::string_view out_dir, HookOptions options = {});
    explicit Hook(const HookConfig& config);
    Hook(S store, HookOptions options);
    // Hook from the JSON configuration at `path` (default: SMDEBUG_CONFIG_FILE_PATH, then
    // /opt/ml/input/config/debughookconfig.json); a missing file raises ObjectNotFound.
    static std::unique_ptr<Hook> create_from_json_file(const std::string& path = {}, int rank = 0, int world_size = 1);
    Hook(const Hook&) = delete;
    Hook& operator=(const Hook&) = delete;
    // Finalizes like close(); an error is reported on stderr (a destructor must not throw).
    ~Hook();

    // ---- steps and modes -------------------------------------------------------------------------

    // The mode of the steps that begin from now on.
    void set_mode(Mode mode);
    Mode mode() const noexcept;
    // Closes the current step (queues its files for writing) and begins the next. Throws the
    // store's error when an earlier step could not be written (the background writer) or this
    // one (without it); the hook has moved on either way and retries the files later.
    void next_step();
    // Returns once every closed step (every step before the current one) and the collections
    // file are durable on the store; throws the store's error when one could not be written
    // (it stays queued: call again to retry).
    void flush();
    std::int64_t global_step() const noexcept;  // -1 before the first step
    Mode step_mode() const noexcept;            // mode of the current step
    std::int64_t mode_step() const noexcept;    // its mode step (-1 before)

    // The included collections the current step records: those whose save configs save it, or,
    // with HookOptions::anomaly_window, every included one (writer/flight_recorder.hpp). Empty on
    // a step that records nothing (and before the first step, or when this hook does not write).
    const std::vector<const Collection*>& step_collections();

    // ---- saving ------------------------------------------------------------------------------------

    // Saves `value` as tensor `name` if one of its collections saves this step (see the top of
    // this file). `collections` (strings) name collections the tensor joins. The value is
    // converted only when it is saved. Returns whether anything (raw value, reductions or shape)
    // was recorded.
    template <TensorInput V, class... C>
        requires(std::convertible_to<const C&, std::string_view> && ...)
    bool save_tensor(std::string_view name, const V& value, const C&... collections) {
        const std::array<std::string_view, sizeof...(C)> named{std::string_view(collections)...};
        if (!wants(name, named)) return false;
        return write(name, to_tensor_value(value));
    }
    // Raw memory: count(shape) elements of `dtype`, row-major, little-endian (not strings).
    template <class... C>
        requires(std::convertible_to<const C&, std::string_view> && ...)
    bool save_tensor(std::string_view name, const void* data, Shape shape, DType dtype, const C&... collections) {
        const std::array<std::string_view, sizeof...(C)> named{std::string_view(collections)...};
        if (!wants(name, named)) return false;
        return write(name, tensor_view(data, std::move(shape), dtype));
    }
    template <TensorElement T, class... C>
        requires(std::convertible_to<const C&, std::string_view> && ...)
    bool save_tensor(std::string_view name, const T* data, Shape shape, const C&... collections) {
        return save_tensor(name, static_cast<const void*>(data), std::move(shape), dtype_of_v<std::remove_cv_t<T>>, collections...);
    }
    // Records "scalar/<name>" = value (shape [1], the argument's dtype), written into the
    // current step when it closes, whatever the save configs say. Saving a name again in the
    // same step replaces the value. `timestamp` (seconds since the epoch) sets the wall time.
    template <TensorElement T>
    void save_scalar(std::string_view name, T value, std::optional<double> timestamp = std::nullopt) {
        save_scalar_value(name, to_tensor_value(value), timestamp);
    }

    // What save_tensor and save_scalar do once their arguments are converted: whether `name` is
    // saved this step (registering it with the `named` collections; false before anything is
    // converted), the write of its value, and the scalar's record.
    bool wants(std::string_view name, std::span<const std::string_view> named);
    bool write(std::string_view name, const TensorValue& value);
    void save_scalar_value(std::string_view name, TensorValue value, std::optional<double> timestamp);

    // ---- collections -----------------------------------------------------------------------------

    // The collection `name` (created when missing), to adjust before the first step. Including it
    // is separate: include_collection(). (writer/collection_manager.hpp defines the manager.)
    Collection& collection(std::string_view name);
    void include_collection(std::string_view name);
    const CollectionManager& collections() const noexcept;

    // ---- lifecycle -------------------------------------------------------------------------------

    // Writes the current step, any step still pending, the collections file and (unless inside
    // SageMaker) training_job_end.ts. Throws when files cannot be written (call again to retry);
    // afterwards the hook accepts no more data. Idempotent.
    void close();

    bool enabled() const noexcept;
    bool writes() const noexcept;  // false: disabled, or a non-chief rank with include_workers one
    bool closed() const noexcept;
    const std::string& worker() const noexcept;
    int num_workers() const noexcept;
    const S& store() const noexcept;
    // The out_dir as given (or the store's root).
    std::string out_dir() const;
    // Files (closed steps, collections file) queued and not yet durable on the store.
    std::size_t pending_steps() const;

private:
    std::unique_ptr<detail::HookImpl<S>> impl_;
};

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/writer/impl/hook.ipp>
#else
#include <smdebug/storage/any_store.hpp>
namespace smdebug {
extern template class Hook<AnyStore>;
}  // namespace smdebug
#endif
