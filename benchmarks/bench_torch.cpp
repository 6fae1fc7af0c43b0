// Cost of TorchHook on a LibTorch training step.
//
//   bench_torch [--benchmark_filter=...] [--benchmark_repetitions=5]   (writes under $TMPDIR or /tmp)
//
// MLPStep/*: one SGD step of examples/torch_mlp's model (6-12-8-3 MLP, batch 8, one thread):
//   no_hook       - LibTorch alone;
//   hook_idle     - TorchHook registered (6 gradient hooks), no step saved (the schedule never fires);
//   hook_saving   - every step saves weights, biases, gradients and the loss (13 tensors) to a
//                   local folder, the step's files written (and fsync'ed) at the next step.
// hook_idle - no_hook is the per-step overhead when nothing is saved; hook_saving - no_hook the
// cost of a saved step. HookBookkeeping measures the hook's own calls of an idle step without
// LibTorch's compute: begin_step() (Hook::next_step + active collections) and the branch taken
// by forward/loss/record calls.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <smdebug/torch/torch_hook.hpp>

namespace fs = std::filesystem;
using namespace smdebug;

namespace {

fs::path scratch(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    fs::path p = fs::path(tmp && *tmp ? tmp : "/tmp") / ("smdebug-bench-torch-" + std::to_string(::getpid())) / name;
    fs::remove_all(p);
    fs::create_directories(p.parent_path());
    return p;
}

struct MLPImpl : torch::nn::Module {
    MLPImpl()
        : fc1(register_module("fc1", torch::nn::Linear(6, 12))),
          fc2(register_module("fc2", torch::nn::Linear(12, 8))),
          fc3(register_module("fc3", torch::nn::Linear(8, 3))) {}
    torch::Tensor forward(torch::Tensor x) { return fc3(torch::relu(fc2(torch::relu(fc1(x))))); }
    torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(MLP);

HookOptions options(bool saving) {
    HookOptions o;
    o.enabled = true;
    o.write_end_marker = true;
    // Idle: the schedule starts at step 1 and repeats every 10^12 steps: never within a run.
    o.save_config = SaveConfig(saving ? SaveConfigMode{.save_interval = 1} : SaveConfigMode{.save_interval = 1'000'000'000'000, .start_step = 1});
    o.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
    return o;
}

enum class Variant { no_hook, hook_idle, hook_saving };

void mlp_step(benchmark::State& state, Variant variant) {
    torch::manual_seed(0);
    torch::set_num_threads(1);
    const auto X = torch::randn({64, 6});
    const auto y = torch::matmul(X, torch::randn({6, 3})).argmax(1);
    MLP model;
    torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    torch::nn::CrossEntropyLoss loss_fn;
    const auto dir = scratch("mlp");
    std::unique_ptr<TorchHook<LocalStore>> hook;
    if (variant != Variant::no_hook) {
        hook = std::make_unique<TorchHook<LocalStore>>(dir.string(), options(variant == Variant::hook_saving));
        hook->register_module(model);
        hook->set_mode(Mode::TRAIN);
    }
    long i = 0;
    for (auto _ : state) {
        const long j = (i++ * 8) % 64;
        const auto xb = X.slice(0, j, j + 8), yb = y.slice(0, j, j + 8);
        opt.zero_grad();
        torch::Tensor loss;
        if (hook) loss = hook->loss(loss_fn, hook->forward(model, xb), yb);
        else loss = loss_fn(model->forward(xb), yb);
        loss.backward();
        opt.step();
    }
    if (hook) hook->close();
    hook.reset();
    fs::remove_all(dir.parent_path());
    state.SetItemsProcessed(state.iterations());
}

void HookBookkeeping(benchmark::State& state) {
    const auto dir = scratch("bookkeeping");
    TorchHook<LocalStore> hook(dir.string(), options(false));
    const auto t = torch::ones({8, 3});
    hook.set_mode(Mode::TRAIN);
    for (auto _ : state) {
        hook.begin_step();
        hook.record_inputs("fc1", t);
        hook.record_outputs("fc1", t);
        benchmark::DoNotOptimize(hook.saving());
    }
    hook.close();
    fs::remove_all(dir.parent_path());
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK_CAPTURE(mlp_step, no_hook, Variant::no_hook)->Name("MLPStep/no_hook");
BENCHMARK_CAPTURE(mlp_step, hook_idle, Variant::hook_idle)->Name("MLPStep/hook_idle");
BENCHMARK_CAPTURE(mlp_step, hook_saving, Variant::hook_saving)->Name("MLPStep/hook_saving");
BENCHMARK(HookBookkeeping);

BENCHMARK_MAIN();
