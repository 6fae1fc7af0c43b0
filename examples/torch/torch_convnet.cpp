// torch_convnet OUT_DIR [--steps K] [--lr X] [--seed N]
//
// Trains a small conv net with LibTorch on synthetic 1x16x16 images (the class is the quadrant
// holding a bright square, plus noise) and records it with smdebug's TorchHook every 5 steps:
// weights, biases, gradients, losses and the activations of the conv blocks (recorded by
// hook.call / hook.sequential, since LibTorch modules have no forward hooks). A large --lr
// (e.g. 50) wrecks the training (the logits saturate, the loss drops to 0, the gradients vanish):
// VanishingGradient then fires live.
//
// While it trains, the built-in rules ExplodingTensor and VanishingGradient run live on the trial
// being written, each on its own thread with its own Trial: they wait for each saved step, print
// `rule <name> fired at step <g>: <finding>` as soon as a step trips them, and return once the
// hook writes the end of training. The trial also reads back with the `smdebug` CLI or Python's
// smdebug.
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include <smdebug/query/create_trial.hpp>
#include <smdebug/rules/rules.hpp>
#include <smdebug/torch/torch_hook.hpp>

struct ConvNetImpl : torch::nn::Module {
    ConvNetImpl()
        : features(register_module("features", torch::nn::Sequential(
                                                   torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)), torch::nn::ReLU(),
                                                   torch::nn::MaxPool2d(2),
                                                   torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)), torch::nn::ReLU(),
                                                   torch::nn::MaxPool2d(2)))),
          fc(register_module("fc", torch::nn::Linear(16 * 4 * 4, 4))) {}

    // The forward pass, recording each feature layer's input/output and fc's through the hook.
    torch::Tensor forward(smdebug::TorchHook<>& hook, torch::Tensor x) {
        x = hook.sequential(features, x, "features.");
        return hook.call("fc", fc, x.flatten(1));
    }

    torch::nn::Sequential features;
    torch::nn::Linear fc;
};
TORCH_MODULE(ConvNet);

// n images 1x16x16: noise plus a bright 4x4 square in the quadrant given by the label.
static std::pair<torch::Tensor, torch::Tensor> synthetic_images(long n) {
    auto labels = torch::randint(0, 4, {n}, torch::kLong);
    auto images = 0.3 * torch::randn({n, 1, 16, 16});
    auto acc = labels.accessor<long, 1>();
    for (long i = 0; i < n; ++i) {
        const long r = (acc[i] / 2) * 8 + 2, c = (acc[i] % 2) * 8 + 2;
        images[i].slice(1, r, r + 4).slice(2, c, c + 4) += 1.0;
    }
    return {images, labels};
}

static int usage() {
    std::cerr << "usage: torch_convnet OUT_DIR [--steps K] [--lr X] [--seed N]\n";
    return 2;
}

// Runs a built-in rule over the trial as the job writes it; returns how often it fired.
std::size_t run_rule_live(const std::string& out_dir, const std::string& rule_name, std::mutex& out) {
    smdebug::TrialOptions options;
    options.wait_for_trial = true;  // the hook may not have written anything yet
    options.poll_interval = std::chrono::milliseconds(200);
    auto trial = smdebug::create_trial(out_dir, options);
    auto rule = smdebug::make_rule(rule_name, trial, smdebug::RuleParams{});
    std::size_t fired = 0;
    smdebug::InvokeOptions run;
    run.on_fire = [&](const smdebug::RuleFiring& f) {
        ++fired;
        std::lock_guard lock(out);
        std::cout << "rule " << rule_name << " fired at step " << f.step << ": " << f.finding << "\n";
    };
    smdebug::invoke_rule(*rule, run);  // returns when training has ended (D17)
    return fired;
}

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string out_dir = argv[1];
    long steps = 100, seed = 0;
    double lr = 0.05;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc) return usage();
        char* end = nullptr;
        if (a == "--lr") lr = std::strtod(argv[++i], &end);
        else if (a == "--steps") steps = std::strtol(argv[++i], &end, 10);
        else if (a == "--seed") seed = std::strtol(argv[++i], &end, 10);
        else return usage();
        if (*end != '\0') return usage();
    }
    std::mutex out;
    std::vector<std::thread> rule_threads;
    std::vector<std::size_t> firings(2, 0);
    const char* rule_names[] = {"ExplodingTensor", "VanishingGradient"};
    try {
        for (std::size_t r = 0; r < 2; ++r)
            rule_threads.emplace_back([&, r] {
                try {
                    firings[r] = run_rule_live(out_dir, rule_names[r], out);
                } catch (const std::exception& e) {
                    std::lock_guard lock(out);
                    std::cerr << "torch_convnet: rule " << rule_names[r] << ": " << e.what() << "\n";
                }
            });
        torch::manual_seed(seed);
        auto [images, labels] = synthetic_images(512);
        ConvNet model;
        torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(lr).momentum(0.9));
        torch::nn::CrossEntropyLoss loss_fn;

        smdebug::HookOptions options;
        options.save_config = smdebug::SaveConfig(smdebug::SaveConfigMode{.save_interval = 5});
        options.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
        options.collections.push_back(smdebug::CollectionSettings{.name = "activations", .include_regex = {"_output_0$"}});
        smdebug::TorchHook<> hook(out_dir, options);
        hook.register_module(model);
        hook.set_mode(smdebug::Mode::TRAIN);

        for (long step = 0; step < steps; ++step) {
            const long j = (step * 32) % 512;
            const auto x = images.slice(0, j, j + 32), y = labels.slice(0, j, j + 32);
            optimizer.zero_grad();
            hook.begin_step();  // model->forward takes the hook: begin the step explicitly
            const auto logits = model->forward(hook, x);
            const auto loss = hook.loss(loss_fn, logits, y);
            loss.backward();
            optimizer.step();
            if (step % 10 == 0) {
                const double accuracy = logits.argmax(1).eq(y).to(torch::kFloat).mean().item<double>();
                std::lock_guard lock(out);
                std::cout << "step " << step << " loss " << loss.item<double>() << " accuracy " << accuracy << "\n";
            }
        }
        hook.close();  // writes the end of training: the rules finish the steps left and return
        for (auto& t : rule_threads) t.join();
        std::cout << "trial written to " << out_dir << "\n";
        for (std::size_t r = 0; r < 2; ++r)
            std::cout << rule_names[r] << ": " << (firings[r] ? "fired at " + std::to_string(firings[r]) + " step(s)" : std::string("no finding")) << "\n";
    } catch (const std::exception& e) {
        std::cerr << "torch_convnet: " << e.what() << "\n";
        for (auto& t : rule_threads) t.detach();
        return 1;
    }
}
