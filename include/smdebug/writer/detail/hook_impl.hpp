#pragma once
// detail::HookImpl<Store>: what a Hook<Store> (writer/hook.hpp, which documents it) is made of and
// does. Hook forwards to it (writer/impl/hook.ipp), so that the public header declares and this
// one is compiled once in separate mode (core/config.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>
#include <utility>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/reduction_names.hpp>
#include <smdebug/writer/step_writer.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/open_store.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/store.hpp>
#include <smdebug/writer/collection_manager.hpp>
#include <smdebug/writer/flight_recorder.hpp>
#include <smdebug/writer/hook.hpp>
#include <smdebug/writer/hook_collections.hpp>
#include <smdebug/writer/hook_config.hpp>
#include <smdebug/writer/tensor_input.hpp>
#include <smdebug/writer/detail/step_queue.hpp>
#include <smdebug/writer/tensorboard.hpp>

namespace smdebug::detail {

template <WritableStore S>
class HookImpl {
public:
    using store_type = S;

    // out_dir: a folder ("~" expanded) or, for S = AnyStore / S3Store, "s3://bucket/prefix".
    explicit HookImpl(std::string_view out_dir, HookOptions options = {}) : HookImpl(make_store(out_dir), std::move(options)) {
        out_dir_ = std::string(text::trim(out_dir));
    }
    explicit HookImpl(const HookConfig& config) : HookImpl(config.out_dir, config.options) {}

    HookImpl(S store, HookOptions options) : store_(std::move(store)), opts_(std::move(options)) {
        enabled_ = opts_.enabled.value_or(smdebug_enabled_by_env());
        if (opts_.world_size < 1 || opts_.rank < 0 || opts_.rank >= opts_.world_size)
            throw UsageError("Hook: rank " + std::to_string(opts_.rank) + " is not within world size " + std::to_string(opts_.world_size));
        worker_ = opts_.worker_name.empty() ? "worker_" + std::to_string(opts_.rank) : opts_.worker_name;
        num_workers_ = opts_.include_workers == IncludeWorkers::all ? opts_.world_size : 1;
        writes_ = enabled_ && (opts_.include_workers == IncludeWorkers::all || opts_.rank == 0);
        end_marker_ = opts_.write_end_marker.value_or(!is_sagemaker_job());
        fill_missing_modes(opts_.save_config, SaveConfig(SaveConfigMode{}));
        if (!opts_.reduction_config) {
            opts_.reduction_config.emplace();
            opts_.reduction_config->save_raw_tensor = true;  // hook default: raw tensors (docs/format.md §9.3)
        }
        include_option_collections(colls_, opts_);
        recorder_ = detail::FlightRecorder(opts_.anomaly_window, opts_.anomaly_window_bytes);  // anomaly window
        if (!enabled_) return;
        if (smdebug::exists(store_, paths::end_marker))
            throw OutDirAlreadyExists("The path " + smdebug::describe(store_, "") + " already holds a finished trial (" +
                                      std::string(paths::end_marker) + "); provide a directory path that does not already exist");
        if (writes_ && (opts_.export_tensorboard || opts_.tensorboard_dir)) {
            if (opts_.tensorboard_dir) tb_.emplace(open_store(*opts_.tensorboard_dir), "");
            else tb_.emplace(AnyStore(store_), "tensorboard/");
        }
        if (writes_) {
            queue_.emplace(store_, opts_.background_writer, opts_.writer_queue_steps, opts_.writer_queue_bytes,
                           opts_.writer_poll_before_sleep, opts_.writer_steps_in_flight);
            if (opts_.write_manifest) queue_->record_manifests(worker_);
        }
    }

    HookImpl(const HookImpl&) = delete;
    HookImpl& operator=(const HookImpl&) = delete;

    // Finalizes like close(); an error is reported on stderr (a destructor must not throw).
    ~HookImpl() {
        try {
            close();
        } catch (const std::exception& e) {
            std::cerr << "smdebug: Hook for " << smdebug::describe(store_, "") << " could not finish: " << e.what() << " ("
                      << pending_steps() << " file(s) not written)\n";
        } catch (...) {
            std::cerr << "smdebug: Hook for " << smdebug::describe(store_, "") << " could not finish (unknown error)\n";
        }
    }

    // ---- steps and modes -------------------------------------------------------------------------

    // The mode of the steps that begin from now on.
    void set_mode(Mode mode) {
        require_open();
        mode_ = mode;
    }
    Mode mode() const noexcept { return mode_; }

    // Closes the current step (queues its files for writing) and begins the next. Throws the
    // store's error when an earlier step could not be written (the background writer) or this
    // one (without it); the hook has moved on either way and retries the files later.
    void next_step() {
        require_open();
        seal_step();
        begin_step();
        if (queue_ && !queue_->background()) {
            flush();
            return;
        }
        after_boundary();
        if (queue_ && opts_.writer_bounded_lag && !latency_bound(store_)) {  // HookOptions::writer_bounded_lag
            const auto before_previous_boundary = std::exchange(pushed_at_last_boundary_, queue_->pushed());
            queue_->wait_written(before_previous_boundary);
        }
    }

    // Returns once every closed step (every step before the current one) and the collections
    // file are durable on the store; throws the store's error when one could not be written
    // (it stays queued: call again to retry).
    void flush() {
        if (!queue_) return;
        queue_->drain();
        if (wrote_step_ && !collections_exported_) {
            export_collections();
            queue_->drain();
        }
        if (tb_) tb_->flush();
    }

    std::int64_t global_step() const noexcept { return global_step_; }  // -1 before the first step
    Mode step_mode() const noexcept { return step_mode_; }              // mode of the current step
    std::int64_t mode_step() const noexcept { return step_mode_step_; } // its mode step (-1 before)

    const std::vector<const Collection*>& step_collections() {
        if (writes_ && global_step_ >= 0 && active_version_ != colls_.version()) {
            active_ = recorder_.collections(colls_, step_mode_, step_mode_step_);
            active_version_ = colls_.version();
        }
        return active_;
    }

    // ---- saving ------------------------------------------------------------------------------------

    // The non-template halves of Hook's save_tensor and save_scalar (writer/hook.hpp): whether
    // `name` is saved this step (registering it with `named` collections), then the write.
    bool wants(std::string_view name, std::span<const std::string_view> named) { return collections_for_save(name, named); }
    bool write(std::string_view name, const TensorValue& value) { return write_tensor(name, value); }
    void save_scalar_value(std::string_view name, TensorValue tv, std::optional<double> timestamp) {
        require_open();
        if (global_step_ < 0) begin_step();
        if (!writes_) return;
        std::string full = std::string(scalar_prefix) + std::string(name);
        auto it = std::find_if(scalars_.begin(), scalars_.end(), [&](const PendingScalar& s) { return s.name == full; });
        if (it != scalars_.end()) *it = PendingScalar{std::move(full), std::move(tv), timestamp};
        else scalars_.push_back(PendingScalar{std::move(full), std::move(tv), timestamp});
    }

    // ---- collections -----------------------------------------------------------------------------

    // The collection `name` (created when missing), to adjust before the first step. Including it
    // is separate: include_collection().
    Collection& collection(std::string_view name) { return colls_.get(name); }
    void include_collection(std::string_view name) { colls_.include(name); }
    const CollectionManager& collections() const noexcept { return colls_; }

    // ---- lifecycle -------------------------------------------------------------------------------

    // Writes the current step, any step still pending, the collections file and (unless inside
    // SageMaker) training_job_end.ts. Throws when files cannot be written (call again to retry);
    // afterwards the hook accepts no more data. Idempotent.
    void close() {
        if (closed_) return;
        closing_ = true;  // no more data, also when this call fails and is retried
        if (writes_) {
            seal_step();
            flush();
            if (!colls_.prepared()) colls_.prepare(opts_.save_config, *opts_.reduction_config);
            export_collections();
            queue_->drain();
            queue_->finish_manifests();
            if (end_marker_) write_end_marker(store_);
            queue_->stop();
        }
        closed_ = true;
    }

    bool enabled() const noexcept { return enabled_; }
    bool writes() const noexcept { return writes_; }           // false: disabled, or a non-chief rank with include_workers one
    bool closed() const noexcept { return closed_; }
    const std::string& worker() const noexcept { return worker_; }
    int num_workers() const noexcept { return num_workers_; }
    const S& store() const noexcept { return store_; }
    // The out_dir as given (or the store's root).
    std::string out_dir() const { return out_dir_.empty() ? smdebug::describe(store_, "") : out_dir_; }
    // Files (closed steps, collections file) queued and not yet durable on the store.
    std::size_t pending_steps() const { return queue_ ? queue_->pending() : 0; }

private:
    struct PendingScalar {
        std::string name;
        TensorValue value;
        std::optional<double> timestamp;
    };

    static S make_store(std::string_view out_dir) {
        if constexpr (std::same_as<S, AnyStore>) {
            return open_store(out_dir);
        } else if constexpr (std::same_as<S, LocalStore>) {
            if (is_s3_path(out_dir)) throw UsageError("Hook<LocalStore> cannot write to " + std::string(out_dir));
            return LocalStore(expand_home(text::trim(out_dir)));
        } else {
            return S(std::string(out_dir));
        }
    }

    void require_open() const {
        if (closing_) throw UsageError("Hook for " + out_dir() + " is closed");
    }

    double now() const { return opts_.clock ? opts_.clock() : wall_time_now(); }

    void begin_step() {
        if (enabled_ && !colls_.prepared()) colls_.prepare(opts_.save_config, *opts_.reduction_config);
        ++global_step_;
        auto& ms = mode_steps_[mode_index(mode_)];
        ms = ms.value_or(-1) + 1;
        mode_steps_[mode_index(Mode::GLOBAL)] = global_step_;
        step_mode_ = mode_;
        step_mode_step_ = *ms;
        saved_names_.clear();
        if (writes_) {
            active_ = recorder_.begin_step(colls_, step_mode_, step_mode_step_);
            active_version_ = colls_.version();
            writer_.emplace(global_step_, worker_, step_mode_, step_mode_step_);
            if (queue_) writer_->reuse_buffer(queue_->take_spare_buffer());
            writer_->reserve(last_step_bytes_, last_step_records_);
            if (tb_) tb_->begin_step(step_mode_, global_step_);
        }
    }

    // Moves the current step (with its scalars) to the queue of steps to write.
    void seal_step() {
        if (!writer_) return;
        for (const auto& s : scalars_) {
            const double t = s.timestamp.value_or(now());
            writer_->add_tensor(s.name, s.value, t);
            if (tb_ && is_real(s.value)) tb_->add_scalar(s.name, scalar_as_double(s.value), t);
        }
        scalars_.clear();
        if (!writer_->empty()) {
            last_step_bytes_ = writer_->event_bytes();
            last_step_records_ = writer_->record_count();
            for (auto& step : recorder_.seal(std::move(*writer_))) {  // this step, kept ones, or none (anomaly window)
                queue_->push(std::move(step));
                wrote_step_ = true;
            }
        }
        writer_.reset();
        if (tb_) tb_->seal();
    }

    // After a step boundary with the background writer: the collections file follows the first
    // step with files; an error the writer met is thrown (once). TensorBoard files are written here.
    void after_boundary() {
        if (!queue_) return;
        if (wrote_step_ && !collections_exported_) export_collections();
        queue_->take_error();
        if (tb_) tb_->flush();
    }

    // Queues the collections file when it changed since it was last queued.
    void export_collections() {
        const auto file = colls_.snapshot(num_workers_);
        auto text = collections_file::serialize(file);
        if (collections_exported_ && text == exported_collections_) return;
        queue_->push(detail::FileJob{std::string(paths::collections_key(worker_)), text});
        exported_collections_ = std::move(text);
        collections_exported_ = true;
    }

    // Registers the tensor with the named collections and decides whether it is saved this
    // step; fills save_colls_ with its collections that save now.
    bool collections_for_save(std::string_view name, std::span<const std::string_view> named) {
        require_open();
        if (global_step_ < 0) begin_step();
        if (!writes_) return false;
        const std::string n(name);
        for (auto c : named) {
            const bool existed = colls_.find(c) != nullptr;
            colls_.add_tensor_name(c, n);
            if (!existed) colls_.include(c);  // a collection introduced here is saved
        }
        if (named.empty() && !colls_.known(n)) {      // a tensor no collection describes: `default`
            colls_.add_tensor_name(collection_keys::default_, n);
            colls_.include(collection_keys::default_);
        }
        if (active_version_ != colls_.version()) {  // a collection was included or changed
            active_ = recorder_.collections(colls_, step_mode_, step_mode_step_);
            active_version_ = colls_.version();
        }
        save_colls_.clear();
        for (const auto* c : colls_.collections_for(n))
            if (std::find(active_.begin(), active_.end(), c) != active_.end()) save_colls_.push_back(c);
        return !save_colls_.empty();
    }

    bool write_tensor(std::string_view name, const TensorValue& value) {
        if (value.is_string() && value.rank() != 1)
            throw UsageError("tensor " + std::string(name) + ": string tensors must be 1-D, not rank " + std::to_string(value.rank()));
        if (!saved_names_.emplace(name).second)
            throw UsageError("tensor " + std::string(name) + " was already saved in step " + std::to_string(global_step_));
        recorder_.observe(value);  // anomaly window: a non-finite value
        const double t = now();
        bool raw = false, shape = false;
        for (const auto* c : save_colls_) {
            raw = raw || c->reduction_config->save_raw_tensor;
            shape = shape || c->reduction_config->save_shape;
        }
        const bool stored_raw = raw && !value.empty();
        bool recorded = false;
        // 1. shape
        if ((shape && (!stored_raw || opts_.record_shape_with_raw_value)) || (raw && value.empty())) {
            writer_->add_shape(name, value.shape());
            recorded = true;
        }
        // 2. reductions: per collection reductions, norms, abs reductions, abs norms; each once
        std::vector<std::pair<std::string, bool>> done;
        for (const auto* c : save_colls_) {
            if (is_scalar_collection(c->name)) continue;
            const auto& rc = *c->reduction_config;
            for (const auto* list : {&rc.reductions, &rc.norms, &rc.abs_reductions, &rc.abs_norms}) {
                const bool abs = list == &rc.abs_reductions || list == &rc.abs_norms;
                for (const auto& r : *list) {
                    if (std::find(done.begin(), done.end(), std::pair(r, abs)) != done.end()) continue;
                    done.emplace_back(r, abs);
                    if (auto v = reduction_of(name, value, r, abs)) {
                        writer_->add_tensor(reduction_tensor_name(name, r, abs), TensorValue::from<double>(std::span<const double>(&*v, 1), Shape{1}), t);
                        recorded = true;
                    }
                }
            }
        }
        // 3. TensorBoard histogram (first collection that wants one)
        if (tb_) {
            for (const auto* c : save_colls_) {
                if (is_scalar_collection(c->name) || !c->save_histogram) continue;
                tb_->add_histogram(c->name + "/" + std::string(name), value, t);
                break;
            }
        }
        // 4. raw value
        if (stored_raw) {
            writer_->add_tensor(name, value, t);
            recorded = true;
        }
        // 5. TensorBoard scalar (scalar collections, one-element numeric tensors)
        if (tb_ && value.size() == 1 && is_real(value))
            for (const auto* c : save_colls_)
                if (is_scalar_collection(c->name)) {
                    tb_->add_scalar(name, scalar_as_double(value), t);
                    break;
                }
        return recorded;
    }

    // A reduction the writer can compute (numeric/bool, non-empty, not complex), else a warning.
    std::optional<double> reduction_of(std::string_view name, const TensorValue& value, const std::string& r, bool abs) {
        try {
            return compute_reduction(value, r, abs);
        } catch (const SMDebugError& e) {
            if (warned_.emplace(std::string(name) + "\n" + r).second)
                std::cerr << "smdebug: not saving reduction " << (abs ? "abs_" : "") << r << " of " << name << ": " << e.what() << "\n";
            return std::nullopt;
        }
    }

    static bool is_real(const TensorValue& v) noexcept {
        return !v.is_string() && v.dtype() != DType::complex64 && v.dtype() != DType::complex128;
    }
    static double scalar_as_double(const TensorValue& v) { return v.as<double>().flat(0); }

    S store_;
    std::string out_dir_;
    HookOptions opts_;
    bool enabled_ = true, writes_ = false, end_marker_ = true, closing_ = false, closed_ = false;
    std::string worker_;
    int num_workers_ = 1;
    CollectionManager colls_;

    Mode mode_ = Mode::GLOBAL;
    std::int64_t global_step_ = -1;
    std::array<std::optional<std::int64_t>, 4> mode_steps_;
    Mode step_mode_ = Mode::GLOBAL;
    std::int64_t step_mode_step_ = -1;
    std::vector<const Collection*> active_;
    std::uint64_t active_version_ = 0;
    std::vector<const Collection*> save_colls_;
    std::set<std::string, std::less<>> saved_names_;
    std::set<std::string> warned_;

    std::optional<StepWriter> writer_;
    std::vector<PendingScalar> scalars_;
    std::size_t last_step_bytes_ = 0, last_step_records_ = 0;  // sizes of the last step written
    std::uint64_t pushed_at_last_boundary_ = 0;  // the queue's pushed() when next_step() last returned
    detail::FlightRecorder recorder_;            // HookOptions::anomaly_window
    std::optional<detail::StepQueue<S>> queue_;  // when this hook writes; declared after store_
    bool wrote_step_ = false;
    bool collections_exported_ = false;
    std::string exported_collections_;
    std::optional<tensorboard::Writer> tb_;
};

}  // namespace smdebug::detail
