// torch_mlp OUT_DIR [--seed N] [--steps K]
//
// Trains a 3-layer MLP with LibTorch and records it with smdebug's TorchHook: weights, biases,
// gradients and losses at every step. The model, data and schedule are exactly those of the
// Python run below, so the reference smdebug.pytorch.Hook records the same trial (same names,
// steps, collection members and values): Debian's LibTorch and python3-torch share one ATen.
//
//   torch.manual_seed(seed); torch.set_num_threads(1)
//   X = torch.randn(64, 6); W = torch.randn(6, 3); y = (X @ W).argmax(1)
//   model = MLP()   # fc1 Linear(6,12), relu1, fc2 Linear(12,8), relu2, fc3 Linear(8,3)
//   opt = SGD(model.parameters(), lr=0.05, momentum=0.9); loss_fn = nn.CrossEntropyLoss()
//   step i: rows j = (i*8) % 64 .. j+8; loss = loss_fn(model(X[j:j+8]), y[j:j+8]); backward; step
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include <torch/torch.h>

#include <smdebug/torch/torch_hook.hpp>

struct MLPImpl : torch::nn::Module {
    MLPImpl()
        : fc1(register_module("fc1", torch::nn::Linear(6, 12))),
          relu1(register_module("relu1", torch::nn::ReLU())),
          fc2(register_module("fc2", torch::nn::Linear(12, 8))),
          relu2(register_module("relu2", torch::nn::ReLU())),
          fc3(register_module("fc3", torch::nn::Linear(8, 3))) {}

    torch::Tensor forward(torch::Tensor x) { return fc3(relu2(fc2(relu1(fc1(x))))); }

    torch::nn::Linear fc1;
    torch::nn::ReLU relu1;
    torch::nn::Linear fc2;
    torch::nn::ReLU relu2;
    torch::nn::Linear fc3;
};
TORCH_MODULE(MLP);

static int usage() {
    std::cerr << "usage: torch_mlp OUT_DIR [--seed N] [--steps K]\n";
    return 2;
}

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string out_dir = argv[1];
    long seed = 0, steps = 10;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if ((a == "--seed" || a == "--steps") && i + 1 < argc) {
            char* end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0) return usage();
            (a == "--seed" ? seed : steps) = v;
        } else {
            return usage();
        }
    }
    try {
        torch::manual_seed(seed);
        torch::set_num_threads(1);
        const auto X = torch::randn({64, 6});
        const auto W = torch::randn({6, 3});
        const auto y = torch::matmul(X, W).argmax(1);

        MLP model;
        torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
        torch::nn::CrossEntropyLoss loss_fn;

        smdebug::HookOptions options;
        options.save_config = smdebug::SaveConfig(smdebug::SaveConfigMode{.save_interval = 1});
        options.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
        smdebug::TorchHook<> hook(out_dir, options);
        hook.register_module(model);
        hook.set_mode(smdebug::Mode::TRAIN);

        for (long i = 0; i < steps; ++i) {
            const long j = (i * 8) % 64;
            const auto xb = X.slice(0, j, j + 8), yb = y.slice(0, j, j + 8);
            optimizer.zero_grad();
            const auto logits = hook.forward(model, xb);
            const auto loss = hook.loss(loss_fn, logits, yb);
            loss.backward();
            optimizer.step();
            std::cout << "step " << i << " loss " << loss.item<float>() << "\n";
        }
        hook.close();
        std::cout << "trial written to " << out_dir << "\n";
    } catch (const std::exception& e) {
        std::cerr << "torch_mlp: " << e.what() << "\n";
        return 1;
    }
}
