// Tests of the LibTorch layer (smdebug/torch/): TorchHook names, collections, values and steps,
// read back through Trial<LocalStore>. Its own executable: the other test TUs never see Torch.
// LibTorch first: it brings glog, whose CHECK would replace Catch2's (and abort instead of report).
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <smdebug/query/trial.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/torch/torch_hook.hpp>

#include "../unit/test_support.hpp"

namespace fs = std::filesystem;
using namespace smdebug;
using test::TempDir;

namespace {

// A model with nested submodules: a custom block, a Sequential and a top-level Linear.
struct BlockImpl : torch::nn::Module {
    BlockImpl() : fc(register_module("fc", torch::nn::Linear(4, 5))) {}
    torch::Tensor forward(torch::Tensor x) { return torch::relu(fc(x)); }
    torch::nn::Linear fc;
};
TORCH_MODULE(Block);

namespace inner {
struct NetImpl : torch::nn::Module {
    NetImpl()
        : block(register_module("block", Block())),
          head(register_module("head", torch::nn::Sequential(torch::nn::Linear(5, 3), torch::nn::Tanh(), torch::nn::Linear(3, 2)))),
          out(register_module("out", torch::nn::Linear(torch::nn::LinearOptions(2, 2).bias(false)))) {}
    torch::Tensor forward(torch::Tensor x) { return out(head->forward(block(x))); }
    Block block;
    torch::nn::Sequential head;
    torch::nn::Linear out;
};
TORCH_MODULE(Net);
}  // namespace inner

HookOptions options(std::int64_t interval = 1) {
    HookOptions o;
    o.enabled = true;
    o.write_end_marker = true;
    o.save_config = SaveConfig(SaveConfigMode{.save_interval = interval});
    o.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
    return o;
}

std::unique_ptr<Trial<LocalStore>> open_trial(const fs::path& dir) {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    return std::make_unique<Trial<LocalStore>>(LocalStore(dir), o);
}

std::vector<float> floats(const TensorValue& v) {
    auto a = v.as<float>();
    return {a.begin(), a.end()};
}
std::vector<float> floats(const torch::Tensor& t) {
    auto c = t.detach().to(torch::kFloat).contiguous();
    return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}
std::vector<std::size_t> shape_of(const torch::Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

std::set<std::string> members(Trial<LocalStore>& trial, const std::string& collection) {
    const auto& names = trial.collection(collection).tensor_names;
    return {names.begin(), names.end()};
}

const std::set<std::string> parameter_names = {"Net_block.fc.weight", "Net_block.fc.bias", "Net_head.0.weight",
                                               "Net_head.0.bias",     "Net_head.2.weight",  "Net_head.2.bias",
                                               "Net_out.weight"};

}  // namespace

TEST_CASE("class names as the Python hook's Module._get_name()", "[torch][names]") {
    CHECK(python_class_name("torch::nn::LinearImpl") == "Linear");
    CHECK(python_class_name("torch::nn::CrossEntropyLossImpl") == "CrossEntropyLoss");
    CHECK(python_class_name("a::b::MLPImpl") == "MLP");
    CHECK(python_class_name("MLP") == "MLP");
    CHECK(python_class_name("Impl") == "Impl");
    CHECK(python_class_name("ns::Wrap<x::YImpl>") == "Wrap<x::YImpl>");
    inner::Net net;
    CHECK(python_class_name(*net) == "Net");
    CHECK(python_class_name(*torch::nn::CrossEntropyLoss()) == "CrossEntropyLoss");
}

TEST_CASE("nested model: names, collections and values equal to LibTorch's", "[torch][hook]") {
    torch::manual_seed(3);
    TempDir dir("torch");
    inner::Net net;
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1));
    torch::nn::CrossEntropyLoss loss_fn;
    const auto x = torch::randn({6, 4});
    const auto y = torch::tensor({0, 1, 1, 0, 1, 0}, torch::kLong);

    std::vector<std::map<std::string, std::vector<float>>> expected(3);  // step -> name -> values
    {
        TorchHook<LocalStore> hook(dir.path.string(), options());
        hook.register_module(net);
        hook.set_mode(Mode::TRAIN);
        for (int step = 0; step < 3; ++step) {
            for (const auto& p : net->named_parameters()) expected[step]["Net_" + p.key()] = floats(p.value());
            opt.zero_grad();
            const auto logits = hook.forward(net, x);
            const auto loss = hook.loss(loss_fn, logits, y);
            loss.backward();
            for (const auto& p : net->named_parameters()) expected[step]["gradient/Net_" + p.key()] = floats(p.value().grad());
            expected[step]["CrossEntropyLoss_output_0"] = floats(loss);
            opt.step();
        }
        hook.close();
    }

    auto trial = open_trial(dir.path);
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 1, 2});
    CHECK(trial->steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2});
    std::set<std::string> want = parameter_names;
    for (const auto& p : parameter_names) want.insert("gradient/" + p);
    want.insert("CrossEntropyLoss_output_0");
    const auto names = trial->tensor_names();
    CHECK(std::set<std::string>(names.begin(), names.end()) == want);

    CHECK(members(*trial, "weights") == std::set<std::string>{"Net_block.fc.weight", "Net_head.0.weight", "Net_head.2.weight", "Net_out.weight"});
    CHECK(members(*trial, "biases") == std::set<std::string>{"Net_block.fc.bias", "Net_head.0.bias", "Net_head.2.bias"});
    std::set<std::string> grads;
    for (const auto& p : parameter_names) grads.insert("gradient/" + p);
    CHECK(members(*trial, "gradients") == grads);
    CHECK(members(*trial, "losses") == std::set<std::string>{"CrossEntropyLoss_output_0"});

    for (int step = 0; step < 3; ++step)
        for (const auto& [name, values] : expected[step]) {
            CAPTURE(step, name);
            const auto v = trial->tensor(name).value(step);
            CHECK(v.dtype() == DType::float32);
            CHECK(floats(v) == values);  // bit-identical: the bytes LibTorch held
        }
    // Shapes as LibTorch's; the loss is a 0-d tensor, as Python stores it.
    CHECK(trial->tensor("Net_block.fc.weight").value(0).shape() == shape_of(net->block->fc->weight));
    CHECK(trial->tensor("CrossEntropyLoss_output_0").value(0).shape().empty());
    // Each step's parameters are those its forward used: they change between steps (SGD).
    CHECK(expected[0]["Net_out.weight"] != expected[1]["Net_out.weight"]);
    CHECK(trial->training_ended());
}

TEST_CASE("SaveConfig and modes are honoured; no gradients in EVAL", "[torch][save_config]") {
    torch::manual_seed(1);
    TempDir dir("torch");
    inner::Net net;
    torch::nn::CrossEntropyLoss loss_fn;
    const auto x = torch::randn({2, 4});
    const auto y = torch::tensor({0, 1}, torch::kLong);
    {
        TorchHook<LocalStore> hook(dir.path.string(), options(3));
        hook.register_module(net);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 7; ++i) {
            hook.loss(loss_fn, hook.forward(net, x), y).backward();
            CHECK(hook.saving() == (i % 3 == 0));
        }
        hook.set_mode(Mode::EVAL);
        for (int i = 0; i < 4; ++i) {
            torch::NoGradGuard no_grad;
            hook.loss(loss_fn, hook.forward(net, x), y);
        }
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 3, 6});
    CHECK(trial->steps(Mode::EVAL) == std::vector<std::int64_t>{0, 3});
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 3, 6, 7, 10});
    CHECK(trial->tensor("gradient/Net_out.weight").steps() == std::vector<std::int64_t>{0, 3, 6});
    CHECK(trial->tensor("Net_out.weight").steps() == std::vector<std::int64_t>{0, 3, 6, 7, 10});
    CHECK(trial->tensor("CrossEntropyLoss_output_0").steps(Mode::EVAL) == std::vector<std::int64_t>{0, 3});
}

TEST_CASE("submodule inputs and outputs: saved only when a collection matches", "[torch][io]") {
    torch::manual_seed(2);
    TempDir dir("torch");
    torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2));
    torch::nn::Linear extra(2, 2);
    const auto x = torch::randn({5, 3});
    auto o = options();
    o.include_collections = std::vector<std::string>{"losses"};
    o.collections.push_back(CollectionSettings{.name = "relu_io", .include_regex = {"^1_(in|out)put_0$", "^extra_output_"}});
    torch::Tensor relu_out, seq_out, extra_out;
    {
        TorchHook<LocalStore> hook(dir.path.string(), o);
        hook.register_module(seq);
        hook.begin_step();
        seq_out = hook.sequential(seq, x);
        extra_out = hook.call("extra", extra, seq_out);
        hook.record_outputs("pair", std::vector<torch::Tensor>{seq_out, extra_out});  // matches nothing: not saved
        relu_out = torch::relu(seq[0]->as<torch::nn::Linear>()->forward(x));
        hook.close();
    }
    auto trial = open_trial(dir.path);
    const auto names = trial->tensor_names();
    CHECK(std::set<std::string>(names.begin(), names.end()) == std::set<std::string>{"1_input_0", "1_output_0", "extra_output_0"});
    CHECK(floats(trial->tensor("1_output_0").value(0)) == floats(relu_out));
    CHECK(floats(trial->tensor("extra_output_0").value(0)) == floats(extra_out));
    CHECK(members(*trial, "relu_io") == std::set<std::string>{"1_input_0", "1_output_0", "extra_output_0"});
    CHECK(trial->collection("default").tensor_names.empty());  // inputs/outputs never join `default`
}

TEST_CASE("tensors that need a copy: non-contiguous, bfloat16, int64; unsupported dtypes are refused", "[torch][tensor]") {
    TempDir dir("torch");
    auto m = torch::arange(12, torch::kFloat).reshape({3, 4});
    auto bf = torch::tensor({1.5f, -2.0f, 0.25f}).to(torch::kBFloat16);
    auto ints = torch::arange(5, torch::kLong);
    {
        TorchHook<LocalStore> hook(dir.path.string(), options());
        hook.begin_step();
        CHECK(hook.save_tensor("transposed", m.t()));
        CHECK(hook.save_tensor("bf16", bf));
        CHECK(hook.save_tensor("ints", ints, "custom"));
        CHECK_THROWS_AS(hook.save_tensor("undef", torch::Tensor()), UsageError);
        CHECK_THROWS_AS(hook.save_tensor("qint", torch::quantize_per_tensor(m, 0.1, 0, torch::kQInt8)), UsageError);
        hook.close();
    }
    auto trial = open_trial(dir.path);
    const auto t = trial->tensor("transposed").value(0);
    CHECK(t.shape() == std::vector<std::size_t>{4, 3});
    CHECK(floats(t) == floats(m.t()));
    const auto b = trial->tensor("bf16").value(0);
    CHECK(b.dtype() == DType::float32);
    CHECK(floats(b) == std::vector<float>{1.5f, -2.0f, 0.25f});
    const auto i = trial->tensor("ints").value(0);
    CHECK(i.dtype() == DType::int64);
    auto ia = i.as<std::int64_t>();
    CHECK(std::vector<std::int64_t>(ia.begin(), ia.end()) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(members(*trial, "custom") == std::set<std::string>{"ints"});
}

TEST_CASE("a disabled hook writes nothing and registers no gradient hooks", "[torch][disabled]") {
    TempDir dir("torch", TempDir::absent);
    inner::Net net;
    auto o = options();
    o.enabled = false;
    {
        TorchHook<LocalStore> hook(dir.path.string(), o);
        hook.register_module(net);
        for (int i = 0; i < 3; ++i) {
            hook.forward(net, torch::randn({2, 4})).sum().backward();
            CHECK_FALSE(hook.saving());
        }
        hook.close();
    }
    CHECK_FALSE(fs::exists(dir.path));
}

TEST_CASE("registration errors", "[torch][hook]") {
    TempDir dir("torch");
    inner::Net net, other;
    TorchHook<LocalStore> hook(dir.path.string(), options());
    hook.register_module(net);
    CHECK_THROWS_AS(hook.register_module(net), UsageError);
    CHECK_THROWS_AS(hook.forward(other, torch::randn({1, 4})), UsageError);
}

TEST_CASE("the trial follows the Python hook's file conventions (docs/format.md §2, §4)", "[torch][format]") {
    TempDir dir("torch");
    inner::Net net;
    {
        TorchHook<LocalStore> hook(dir.path.string(), options());
        hook.register_module(net);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 2; ++i) hook.forward(net, torch::randn({2, 4})).sum().backward();
        hook.close();
    }
    CHECK(fs::exists(dir.path / "training_job_end.ts"));
    CHECK(fs::exists(dir.path / "collections/000000000/worker_0_collections.json"));
    CHECK(fs::exists(dir.path / "index/000000000/000000000000_worker_0.json"));
    CHECK(fs::exists(dir.path / "index/000000000/000000000001_worker_0.json"));
    CHECK(fs::exists(dir.path / "events/000000000000/000000000000_worker_0.tfevents"));
    auto trial = open_trial(dir.path);
    CHECK(trial->workers() == std::vector<std::string>{"worker_0"});
    CHECK(trial->mode(1) == Mode::TRAIN);
    CHECK(trial->mode_step(1) == 1);
}

TEST_CASE("the TorchHook outlives nothing: parameters keep working after it is gone", "[torch][hook]") {
    TempDir dir("torch");
    inner::Net net;
    {
        TorchHook<LocalStore> hook(dir.path.string(), options());
        hook.register_module(net);
        hook.forward(net, torch::randn({2, 4})).sum().backward();
    }
    net->zero_grad();
    net->forward(torch::randn({2, 4})).sum().backward();  // would call into a dead hook if not removed
    CHECK(net->out->weight.grad().defined());
}
