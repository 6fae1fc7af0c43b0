#pragma once
// Trial<Store>'s definitions: each query forwards to detail::TrialImpl (query/detail/trial_impl.hpp).
#include <smdebug/query/detail/trial_impl.hpp>
#include <smdebug/query/impl/tensor.ipp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

template <Store S>
Trial<S>::Trial(S store, TrialOptions options)
    : impl_(std::make_unique<detail::TrialImpl<S>>(*this, std::move(store), std::move(options))) {}

template <Store S>
Trial<S>::~Trial() = default;

template <Store S>
const S& Trial<S>::store() const noexcept {
    return impl_->store();
}

template <Store S>
const std::string& Trial<S>::name() const noexcept {
    return impl_->name();
}

template <Store S>
std::string Trial<S>::path() const {
    return impl_->path();
}

template <Store S>
const TrialOptions& Trial<S>::options() const noexcept {
    return impl_->options();
}

template <Store S>
std::vector<std::string> Trial<S>::tensor_names(const TensorNamesQuery& q) {
    return impl_->tensor_names(q);
}

template <Store S>
bool Trial<S>::has_tensor(const std::string& name) {
    return impl_->has_tensor(name);
}

template <Store S>
Tensor<S> Trial<S>::tensor(const std::string& name) {
    return impl_->tensor(name);
}

template <Store S>
std::vector<std::int64_t> Trial<S>::steps(Mode mode, bool show_incomplete_steps) {
    return impl_->steps(mode, show_incomplete_steps);
}

template <Store S>
std::vector<Mode> Trial<S>::modes() const {
    return impl_->modes();
}

template <Store S>
std::optional<std::pair<Mode, std::int64_t>> Trial<S>::mode_modestep(std::int64_t global_step) {
    return impl_->mode_modestep(global_step);
}

template <Store S>
std::optional<Mode> Trial<S>::mode(std::int64_t global_step) {
    return impl_->mode(global_step);
}

template <Store S>
std::optional<std::int64_t> Trial<S>::mode_step(std::int64_t global_step) {
    return impl_->mode_step(global_step);
}

template <Store S>
std::optional<std::int64_t> Trial<S>::global_step(Mode mode, std::int64_t mode_step) {
    return impl_->global_step(mode, mode_step);
}

template <Store S>
StepState Trial<S>::has_passed_step(std::int64_t step, Mode mode) {
    return impl_->has_passed_step(step, mode);
}

template <Store S>
void Trial<S>::wait_for_steps(const std::vector<std::int64_t>& required, Mode mode, std::optional<std::chrono::milliseconds> timeout) {
    impl_->wait_for_steps(required, mode, timeout);
}

template <Store S>
bool Trial<S>::wait_for_change(std::chrono::milliseconds timeout) {
    return impl_->wait_for_change(timeout);
}

template <Store S>
std::vector<std::string> Trial<S>::workers() {
    return impl_->workers();
}

template <Store S>
int Trial<S>::num_workers() const noexcept {
    return impl_->num_workers();
}

template <Store S>
std::map<std::string, std::vector<std::int64_t>> Trial<S>::worker_steps() {
    return impl_->worker_steps();
}

template <Store S>
const std::map<std::string, Collection>& Trial<S>::collections() const noexcept {
    return impl_->collections();
}

template <Store S>
const std::vector<std::string>& Trial<S>::collection_names_in_file_order() const noexcept {
    return impl_->collection_names_in_file_order();
}

template <Store S>
const Collection& Trial<S>::collection(const std::string& name) const {
    return impl_->collection(name);
}

template <Store S>
std::int64_t Trial<S>::last_complete_step() const noexcept {
    return impl_->last_complete_step();
}

template <Store S>
const std::optional<std::string>& Trial<S>::last_index_token() const noexcept {
    return impl_->last_index_token();
}

template <Store S>
std::int64_t Trial<S>::reference_token_step() const noexcept {
    return impl_->reference_token_step();
}

template <Store S>
bool Trial<S>::loaded_all_steps() const noexcept {
    return impl_->loaded_all_steps();
}

template <Store S>
bool Trial<S>::dynamic_refresh() const noexcept {
    return impl_->dynamic_refresh();
}

template <Store S>
void Trial<S>::set_dynamic_refresh(bool on) noexcept {
    impl_->set_dynamic_refresh(on);
}

template <Store S>
bool Trial<S>::training_ended() const {
    return impl_->training_ended();
}

template <Store S>
std::optional<std::int64_t> Trial<S>::last_step() const {
    return impl_->last_step();
}

template <Store S>
std::int64_t Trial<S>::incomplete_step_wait_window() const noexcept {
    return impl_->incomplete_step_wait_window();
}

template <Store S>
std::chrono::milliseconds Trial<S>::training_end_delay_refresh() const noexcept {
    return impl_->training_end_delay_refresh();
}

template <Store S>
const RefreshStats& Trial<S>::refresh_stats() const noexcept {
    return impl_->refresh_stats();
}

template <Store S>
void Trial<S>::refresh_data() {
    impl_->refresh_data();
}

template <Store S>
void Trial<S>::maybe_refresh() {
    impl_->maybe_refresh();
}

template <Store S>
std::map<std::string, TensorValue> Trial<S>::values_at(std::int64_t step, std::span<const std::string> names, const StepQuery& q) {
    return impl_->values_at(step, names, q);
}

template <Store S>
std::map<std::string, TensorValue> Trial<S>::values_at(std::int64_t step, const StepQuery& q) {
    return impl_->values_at(step, q);
}

template <Store S>
std::vector<ValueResult> Trial<S>::read(std::span<const ValueRequest> requests, const ReadOptions& options) {
    return impl_->read(requests, options);
}

template <Store S>
std::vector<ValueResult> Trial<S>::read(std::span<const Tensor<S>> tensors, std::span<const ValueRequest> requests, std::span<const std::size_t> tensor_of, const ReadOptions& options) {
    return impl_->read(tensors, requests, tensor_of, options);
}

template <Store S>
void Trial<S>::read(std::span<RecordRead> records, std::span<const detail::Location* const> located, const ReadOptions& options) {
    impl_->read(records, located, options);
}

template <Store S>
std::map<std::string, std::map<std::int64_t, TensorValue>> Trial<S>::values(std::span<const std::pair<std::string, std::vector<std::int64_t>>> wanted, const StepQuery& q) {
    return impl_->values(wanted, q);
}

template <Store S>
bool Trial<S>::is_complete(std::int64_t global_step) const {
    return impl_->is_complete(global_step);
}

template <Store S>
const detail::StepIndex& Trial<S>::index() const noexcept {
    return impl_->index();
}

template <Store S>
const detail::TensorData* Trial<S>::find_tensor_data(const std::string& name) const {
    return impl_->index().find_tensor(name);
}

template <Store S>
const detail::RecordReader<S>& Trial<S>::records() const noexcept {
    return impl_->records();
}

template <Store S>
detail::RecordReader<S>& Trial<S>::records() noexcept {
    return impl_->records();
}

}  // namespace smdebug
