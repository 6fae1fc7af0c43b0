#pragma once
// Hook<Store>'s definitions: each call forwards to detail::HookImpl (writer/detail/hook_impl.hpp).
#include <smdebug/writer/detail/hook_impl.hpp>
#include <smdebug/writer/hook.hpp>

namespace smdebug {

template <WritableStore S>
Hook<S>::Hook(std::string_view out_dir, HookOptions options)
    : impl_(std::make_unique<detail::HookImpl<S>>(out_dir, std::move(options))) {}

template <WritableStore S>
Hook<S>::Hook(const HookConfig& config) : impl_(std::make_unique<detail::HookImpl<S>>(config)) {}

template <WritableStore S>
Hook<S>::Hook(S store, HookOptions options) : impl_(std::make_unique<detail::HookImpl<S>>(std::move(store), std::move(options))) {}

template <WritableStore S>
std::unique_ptr<Hook<S>> Hook<S>::create_from_json_file(const std::string& path, int rank, int world_size) {
    auto cfg = load_hook_config(path);
    cfg.options.rank = rank;
    cfg.options.world_size = world_size;
    return std::make_unique<Hook>(cfg);
}

template <WritableStore S>
Hook<S>::~Hook() = default;

template <WritableStore S>
void Hook<S>::set_mode(Mode mode) {
    impl_->set_mode(mode);
}

template <WritableStore S>
Mode Hook<S>::mode() const noexcept {
    return impl_->mode();
}

template <WritableStore S>
void Hook<S>::next_step() {
    impl_->next_step();
}

template <WritableStore S>
void Hook<S>::flush() {
    impl_->flush();
}

template <WritableStore S>
std::int64_t Hook<S>::global_step() const noexcept {
    return impl_->global_step();
}

template <WritableStore S>
Mode Hook<S>::step_mode() const noexcept {
    return impl_->step_mode();
}

template <WritableStore S>
std::int64_t Hook<S>::mode_step() const noexcept {
    return impl_->mode_step();
}

template <WritableStore S>
const std::vector<const Collection*>& Hook<S>::step_collections() {
    return impl_->step_collections();
}

template <WritableStore S>
bool Hook<S>::wants(std::string_view name, std::span<const std::string_view> named) {
    return impl_->wants(name, named);
}

template <WritableStore S>
bool Hook<S>::write(std::string_view name, const TensorValue& value) {
    return impl_->write(name, value);
}

template <WritableStore S>
void Hook<S>::save_scalar_value(std::string_view name, TensorValue value, std::optional<double> timestamp) {
    impl_->save_scalar_value(name, std::move(value), timestamp);
}

template <WritableStore S>
Collection& Hook<S>::collection(std::string_view name) {
    return impl_->collection(name);
}

template <WritableStore S>
void Hook<S>::include_collection(std::string_view name) {
    impl_->include_collection(name);
}

template <WritableStore S>
const CollectionManager& Hook<S>::collections() const noexcept {
    return impl_->collections();
}

template <WritableStore S>
void Hook<S>::close() {
    impl_->close();
}

template <WritableStore S>
bool Hook<S>::enabled() const noexcept {
    return impl_->enabled();
}

template <WritableStore S>
bool Hook<S>::writes() const noexcept {
    return impl_->writes();
}

template <WritableStore S>
bool Hook<S>::closed() const noexcept {
    return impl_->closed();
}

template <WritableStore S>
const std::string& Hook<S>::worker() const noexcept {
    return impl_->worker();
}

template <WritableStore S>
int Hook<S>::num_workers() const noexcept {
    return impl_->num_workers();
}

template <WritableStore S>
const S& Hook<S>::store() const noexcept {
    return impl_->store();
}

template <WritableStore S>
std::string Hook<S>::out_dir() const {
    return impl_->out_dir();
}

template <WritableStore S>
std::size_t Hook<S>::pending_steps() const {
    return impl_->pending_steps();
}

}  // namespace smdebug
