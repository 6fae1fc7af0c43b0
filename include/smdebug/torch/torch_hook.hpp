#pragma once
// TorchHook<Store>: records LibTorch training as the Python smdebug.pytorch hook records PyTorch
// training — same tensor names, collections, steps and values — over smdebug's Hook<Store>.
//
//   smdebug::TorchHook<> hook("/tmp/run1", options);   // or a HookConfig, or from JSON
//   hook.register_module(model);                        // parameters, gradient hooks
//   for (...) {
//       auto logits = hook.forward(model, x);           // begins the step, then model->forward(x)
//       auto loss = hook.loss(criterion, logits, y);    // criterion->forward(logits, y), recorded
//       optimizer.zero_grad(); loss.backward(); optimizer.step();
//   }
//   hook.close();
//
// Names (the Python hook's): parameters "<ModelClass>_<path>" (MLP_fc1.weight) in `weights` /
// `biases`; gradients "gradient/<ModelClass>_<path>" in `gradients`, captured by tensor hooks
// while backward() runs; a module's inputs and outputs "<module>_input_<i>" / "<module>_output_<i>"
// where <module> is the root's class name, a loss's class name (CrossEntropyLoss_output_0, in
// `losses`) or a submodule's path (fc1_output_0). LibTorch modules have no forward hooks, so
// submodule inputs/outputs are recorded where the forward pass calls them: hook.call("fc1", fc1, x),
// hook.sequential(seq, x) for a Sequential's children, or record_inputs / record_outputs.
// As in Python, a module's inputs/outputs are saved only when a collection names or matches them
// (they never join `default`).
//
// When values are taken: parameters when the step begins (before the step's forward, the values
// that forward uses), gradients of the step's backward, inputs/outputs as the forward computes
// them. CPU tensors of a supported dtype are not copied; others (CUDA, non-contiguous, bfloat16)
// are copied to host only when the tensor is saved in this step.
//
// Cost when a step saves nothing: begin_step() is the Hook's next_step() plus one look at the
// active collections; every gradient hook, forward() and loss() then return after one branch.
// With USE_SMDEBUG=0 (or a non-writing rank) no gradient hook is registered at all.
//
// Gradient hooks may run on autograd's device threads (CUDA); saving is serialized by a mutex.
// A TorchHook must outlive nothing: its destructor removes its gradient hooks from the parameters.
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/torch/module_names.hpp>
#include <smdebug/torch/torch_tensor.hpp>
#include <smdebug/writer/hook.hpp>

namespace smdebug {

inline constexpr std::string_view gradient_prefix = "gradient/";

namespace detail {

// Module-like arguments: a torch::nn::Module subclass, or a ModuleHolder / shared_ptr to one.
template <class M>
torch::nn::Module& as_module(M& m) {
    if constexpr (std::is_base_of_v<torch::nn::Module, std::remove_cvref_t<M>>) return m;
    else return *m;
}

template <class M, class... Args>
decltype(auto) call_forward(M& m, Args&&... args) {
    if constexpr (std::is_base_of_v<torch::nn::Module, std::remove_cvref_t<M>>) return m.forward(std::forward<Args>(args)...);
    else return m->forward(std::forward<Args>(args)...);
}

}  // namespace detail

template <WritableStore S = AnyStore>
class TorchHook {
public:
    using hook_type = Hook<S>;

    explicit TorchHook(std::string_view out_dir, HookOptions options = {})
        : TorchHook(std::make_unique<Hook<S>>(out_dir, std::move(options))) {}
    explicit TorchHook(const HookConfig& config) : TorchHook(std::make_unique<Hook<S>>(config)) {}
    explicit TorchHook(std::unique_ptr<Hook<S>> hook) : hook_(std::move(hook)) {
        if (!hook_) throw UsageError("TorchHook: null Hook");
    }

    // From the JSON hook configuration (SMDEBUG_CONFIG_FILE_PATH, ...), see Hook::create_from_json_file.
    static std::unique_ptr<TorchHook> create_from_json_file(const std::string& path = {}, int rank = 0, int world_size = 1) {
        return std::make_unique<TorchHook>(Hook<S>::create_from_json_file(path, rank, world_size));
    }

    TorchHook(const TorchHook&) = delete;
    TorchHook& operator=(const TorchHook&) = delete;

    // Removes the gradient hooks; the Hook's destructor then finishes the trial (see Hook::~Hook).
    ~TorchHook() {
        for (auto& p : params_)
            if (p.hooked) {
                try {
                    p.tensor.remove_hook(p.hook_handle);
                } catch (...) {  // a destructor must not throw; the parameter is gone with its hooks
                }
            }
    }

    Hook<S>& hook() noexcept { return *hook_; }
    const Hook<S>& hook() const noexcept { return *hook_; }

    // ---- registration ------------------------------------------------------------------------------

    // Records `model`'s parameters as "<ModelClass>_<path>" at every saved step and their gradients
    // as "gradient/<ModelClass>_<path>". `model`: a Module, a ModuleHolder or a shared_ptr to one.
    // Register before the first step; a module is registered once.
    template <class M>
    void register_module(M& model) {
        torch::nn::Module& m = detail::as_module(model);
        for (const auto& r : roots_)
            if (r.module == &m) throw UsageError("TorchHook: module " + r.class_name + " is already registered");
        Root root{&m, python_class_name(m), {}};
        for (const auto& item : m.named_parameters(/*recurse=*/true)) {
            const std::size_t index = params_.size();
            Param p{root.class_name + "_" + item.key(), {}, item.value(), 0, false};
            p.gradient_name = std::string(gradient_prefix) + p.name;
            if (hook_->writes() && p.tensor.requires_grad()) {
                p.hook_handle = p.tensor.register_hook([this, index](const at::Tensor& grad) { on_gradient(index, grad); });
                p.hooked = true;
            }
            params_.push_back(std::move(p));
            root.params.push_back(index);
        }
        roots_.push_back(std::move(root));
    }

    // ---- steps -------------------------------------------------------------------------------------

    void set_mode(Mode mode) { hook_->set_mode(mode); }

    // Closes the previous step and begins the next (Hook::next_step), then, when the step saves
    // anything, records the parameters of every registered module. forward() does this for you.
    void begin_step() {
        start_step();
        if (saving()) for (const auto& r : roots_) log_params(r);
    }

    // Python's forward pre-hook + forward + forward hook of a registered root module: begins the
    // step, records the module's parameters, runs model->forward(args...) and records its inputs
    // and outputs as "<ModelClass>_input_<i>" / "<ModelClass>_output_<i>" (when collections match).
    template <class M, class... Args>
    decltype(auto) forward(M& model, Args&&... args) {
        const Root& root = root_of(detail::as_module(model));
        start_step();
        if (saving()) {
            log_params(root);
            record_inputs(root.class_name, args...);
        }
        decltype(auto) out = detail::call_forward(model, std::forward<Args>(args)...);
        if (saving()) record_outputs(root.class_name, out);
        return out;
    }

    // A loss module's forward, recorded as the Python hook's register_loss records it:
    // "<LossClass>_output_0" (in `losses`) and "<LossClass>_input_<i>".
    template <class L, class... Args>
    decltype(auto) loss(L& loss_module, Args&&... args) {
        return call(python_class_name(detail::as_module(loss_module)), loss_module, std::forward<Args>(args)...);
    }

    // A submodule's forward, its inputs and outputs recorded under `module_name` (the path
    // Python's named_modules() gives it: "fc1", "block.conv1").
    template <class M, class... Args>
    decltype(auto) call(std::string_view module_name, M& module, Args&&... args) {
        if (saving()) record_inputs(module_name, args...);
        decltype(auto) out = detail::call_forward(module, std::forward<Args>(args)...);
        if (saving()) record_outputs(module_name, out);
        return out;
    }

    // Runs a Sequential's children in order on `x`, recording each child's input and output
    // under "<prefix><index>" (prefix: the Sequential's path plus ".", or "" for a root Sequential).
    at::Tensor sequential(torch::nn::Sequential& seq, at::Tensor x, std::string_view prefix = "") {
        std::size_t i = 0;
        for (auto& child : *seq) {
            if (!saving()) {
                x = child.template forward<at::Tensor>(x);
            } else {
                const std::string name = std::string(prefix) + std::to_string(i);
                record_inputs(name, x);
                x = child.template forward<at::Tensor>(x);
                record_outputs(name, x);
            }
            ++i;
        }
        return x;
    }

    // Records tensors as "<module_name>_input_<i>" (non-tensor arguments keep their index).
    template <class... Args>
    void record_inputs(std::string_view module_name, const Args&... args) {
        if (!saving()) return;
        std::size_t i = 0;
        (record_io(module_name, "_input_", i++, args), ...);
    }

    // Records a module's output: a tensor as "<module_name>_output_0", a vector or tuple of
    // tensors element by element.
    template <class Out>
    void record_outputs(std::string_view module_name, const Out& out) {
        if (!saving()) return;
        if constexpr (std::is_convertible_v<const Out&, const at::Tensor&>) {
            record_io(module_name, "_output_", 0, out);
        } else if constexpr (requires { std::tuple_size<Out>::value; }) {
            std::apply([&](const auto&... e) {
                std::size_t i = 0;
                (record_io(module_name, "_output_", i++, e), ...);
            }, out);
        } else {
            std::size_t i = 0;
            for (const auto& e : out) record_io(module_name, "_output_", i++, e);
        }
    }

    // Saves a torch tensor through the Hook (see Hook::save_tensor): CPU tensors of a supported
    // dtype without a copy, others copied to host once.
    template <class... C>
        requires(std::convertible_to<const C&, std::string_view> && ...)
    bool save_tensor(std::string_view name, const at::Tensor& value, const C&... collections) {
        std::scoped_lock lock(mutex_);
        at::Tensor holder;
        return hook_->save_tensor(name, torch_tensor_view(value, holder, name), collections...);
    }

    // Closes the trial (Hook::close): last step, collections, end marker.
    void close() { hook_->close(); }

    // Whether the current step saves anything (some included collection is active).
    bool saving() const noexcept { return saving_.load(std::memory_order_relaxed); }

private:
    struct Param {
        std::string name;
        std::string gradient_name;
        at::Tensor tensor;
        unsigned hook_handle;
        bool hooked;
    };
    struct Root {
        const torch::nn::Module* module;
        std::string class_name;
        std::vector<std::size_t> params;
    };

    const Root& root_of(const torch::nn::Module& m) const {
        for (const auto& r : roots_)
            if (r.module == &m) return r;
        throw UsageError("TorchHook: module " + python_class_name(m) + " is not registered (call register_module first)");
    }

    void start_step() {
        hook_->next_step();
        bool saving = false;
        if (hook_->writes()) {
            active_ = hook_->step_collections();  // save configs, or every step with an anomaly window
            saving = !active_.empty();
        }
        saving_.store(saving, std::memory_order_relaxed);
    }

    void log_params(const Root& r) {
        for (auto i : r.params) save_if_active(params_[i].name, params_[i].tensor);
    }

    void on_gradient(std::size_t index, const at::Tensor& grad) {
        if (!saving() || !grad.defined()) return;
        save_if_active(params_[index].gradient_name, grad);
    }

    template <class T>
    void record_io(std::string_view module_name, std::string_view kind, std::size_t index, const T& value) {
        if constexpr (std::is_convertible_v<const T&, const at::Tensor&>) {
            const at::Tensor& t = value;
            if (!t.defined()) return;
            std::string name;
            name.reserve(module_name.size() + kind.size() + 4);
            name.append(module_name).append(kind).append(std::to_string(index));
            save_if_active(name, t);
        }
    }

    // Saves `value` when one of the step's active collections names or matches `name`: the
    // Python hook's rule for the tensors it records itself (they never join `default`). Tensors
    // not saved are never touched (no copy of CUDA tensors).
    void save_if_active(const std::string& name, const at::Tensor& value) {
        std::scoped_lock lock(mutex_);
        const auto& colls = member_of(name);
        bool active = false;
        for (const auto* c : active_)
            for (const auto& m : colls) active = active || c->name == m;
        if (!active) return;
        at::Tensor holder;
        hook_->save_tensor(name, torch_tensor_view(value, holder, name));
    }

    // Names of the collections (included or not) that list `name` or whose pattern it matches.
    // Cached per name until the Hook's collections change.
    const std::vector<std::string>& member_of(const std::string& name) {
        if (hook_->collections().version() != members_version_) {
            members_.clear();
            members_version_ = hook_->collections().version();
        }
        auto it = members_.find(name);
        if (it != members_.end()) return it->second;
        std::vector<std::string> names;
        for (const auto& c : hook_->collections().snapshot(1).collections) {
            bool match = c.has_tensor_name(name);
            for (const auto& p : c.include_regex) {
                if (match) break;
                detail::CompiledRegex re;
                re.add(p);
                match = re.search(name);
            }
            if (match) names.push_back(c.name);
        }
        return members_.emplace(name, std::move(names)).first->second;
    }

    std::unique_ptr<Hook<S>> hook_;
    std::vector<Param> params_;
    std::vector<Root> roots_;
    std::atomic<bool> saving_{false};
    std::vector<const Collection*> active_;
    std::unordered_map<std::string, std::vector<std::string>> members_;
    std::uint64_t members_version_ = 0;
    std::mutex mutex_;
};

}  // namespace smdebug
