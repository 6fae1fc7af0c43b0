// quickstart [--out DIR]
//
// Trains a two-layer MLP (2 -> 16 -> 3, ReLU, softmax cross-entropy) in plain C++ with xtensor on
// a generated three-class dataset (mini-batch SGD), saving weights, biases, gradients and losses through the smdebug
// Hook (TRAIN and EVAL phases), then opens the trial it wrote, prints a summary and runs the
// built-in rules that apply to this run (their findings, or that they found nothing).
//
// Without --out every run writes a fresh ./smdebug-quickstart-<date>-<time>[-N] folder, so the
// command can be repeated. The trial is readable by the Python smdebug as well:
//   from smdebug.trials import create_trial; t = create_trial("smdebug-quickstart-...")
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/writer/hook.hpp>

namespace fs = std::filesystem;
using namespace smdebug;
using Matrix = xt::xtensor<float, 2>;
using Vector = xt::xtensor<float, 1>;

namespace {

// a (n x k) times b^T (m x k) -> n x m
Matrix matmul_t(const Matrix& a, const Matrix& b) {
    Matrix out = xt::zeros<float>({a.shape(0), b.shape(0)});
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < b.shape(0); ++j) {
            float s = 0;
            for (std::size_t k = 0; k < a.shape(1); ++k) s += a(i, k) * b(j, k);
            out(i, j) = s;
        }
    return out;
}

// a^T (k x n)^T times b (n x m) -> k x m, i.e. sum over rows
Matrix t_matmul(const Matrix& a, const Matrix& b) {
    Matrix out = xt::zeros<float>({a.shape(1), b.shape(1)});
    for (std::size_t r = 0; r < a.shape(0); ++r)
        for (std::size_t i = 0; i < a.shape(1); ++i)
            for (std::size_t j = 0; j < b.shape(1); ++j) out(i, j) += a(r, i) * b(r, j);
    return out;
}

// Three overlapping Gaussian blobs around the unit circle, shuffled.
void make_dataset(std::size_t per_class, std::mt19937& rng, Matrix& x, std::vector<int>& y) {
    std::normal_distribution<float> noise(0.0f, 0.45f);
    const std::size_t n = 3 * per_class;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    x = Matrix::from_shape({n, 2});
    y.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i / per_class);
        const float angle = 2.0943951f * static_cast<float>(c);
        x(order[i], 0) = std::cos(angle) + noise(rng);
        x(order[i], 1) = std::sin(angle) + noise(rng);
        y[order[i]] = c;
    }
}

struct Mlp {
    Matrix w1, w2;  // PyTorch nn.Linear layout: (out_features, in_features)
    Vector b1, b2;
};

struct Pass {
    Matrix x, h, probs;
    float loss = 0;
    float accuracy = 0;
};

Pass forward(const Mlp& m, const Matrix& x, const std::vector<int>& y) {
    Pass p;
    p.x = x;
    p.h = xt::maximum(matmul_t(x, m.w1) + m.b1, 0.0f);
    Matrix logits = matmul_t(p.h, m.w2) + m.b2;
    const Matrix shifted = logits - xt::view(xt::amax(logits, {1}), xt::all(), xt::newaxis());
    const Matrix e = xt::exp(shifted);
    p.probs = e / xt::view(xt::sum(e, {1}), xt::all(), xt::newaxis());
    int correct = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        p.loss -= std::log(std::max(p.probs(i, static_cast<std::size_t>(y[i])), 1e-12f));
        const auto row = xt::view(p.probs, i, xt::all());
        correct += static_cast<int>(std::distance(row.begin(), std::max_element(row.begin(), row.end()))) == y[i];
    }
    p.loss /= static_cast<float>(y.size());
    p.accuracy = static_cast<float>(correct) / static_cast<float>(y.size());
    return p;
}

struct Grads {
    Matrix w1, w2;
    Vector b1, b2;
};

Grads backward(const Mlp& m, const Pass& p, const std::vector<int>& y) {
    Matrix dlogits = p.probs;
    for (std::size_t i = 0; i < y.size(); ++i) dlogits(i, static_cast<std::size_t>(y[i])) -= 1.0f;
    dlogits /= static_cast<float>(y.size());
    Grads g;
    g.w2 = t_matmul(dlogits, p.h);
    g.b2 = xt::sum(dlogits, {0});
    Matrix dh = Matrix::from_shape({dlogits.shape(0), m.w2.shape(1)});
    for (std::size_t i = 0; i < dh.shape(0); ++i)
        for (std::size_t j = 0; j < dh.shape(1); ++j) {
            float s = 0;
            for (std::size_t k = 0; k < dlogits.shape(1); ++k) s += dlogits(i, k) * m.w2(k, j);
            dh(i, j) = p.h(i, j) > 0 ? s : 0.0f;
        }
    g.w1 = t_matmul(dh, p.x);
    g.b1 = xt::sum(dh, {0});
    return g;
}

std::string fresh_out_dir() {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    std::string base = std::string("smdebug-quickstart-") + stamp;
    std::string dir = base;
    for (int n = 2; fs::exists(dir); ++n) dir = base + "-" + std::to_string(n);
    return (fs::current_path() / dir).string();
}

std::string shape_text(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

}  // namespace

int run_demo(std::string out_dir);

// Every failure (a full disk, an unwritable folder) ends with one line and exit 1, never an abort.
int main(int argc, char** argv) {
    std::string out_dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
        else {
            std::cerr << "usage: quickstart [--out DIR]\n";
            return a == "-h" || a == "--help" ? 0 : 2;
        }
    }
    int code = 0;
    try {
        code = run_demo(out_dir);
    } catch (const std::exception& e) {
        std::cerr << "quickstart: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {  // a full disk under a redirected stdout is a failure too
        std::cerr << "quickstart: cannot write standard output: " << std::strerror(errno) << "\n";
        return 1;
    }
    return code;
}

int run_demo(std::string out_dir) {
    if (out_dir.empty()) out_dir = fresh_out_dir();

    std::mt19937 rng(7);
    Matrix train_x, eval_x;
    std::vector<int> train_y, eval_y;
    make_dataset(200, rng, train_x, train_y);
    make_dataset(50, rng, eval_x, eval_y);

    xt::random::seed(7);
    Mlp model{xt::random::randn<float>({16, 2}) * 0.5f, xt::random::randn<float>({3, 16}) * 0.5f, xt::zeros<float>({16}),
              xt::zeros<float>({3})};

    // What to save: weights, biases, gradients and losses every 10th TRAIN step and every 2nd EVAL
    // step; gradients also as reductions (stored next to the raw values).
    HookOptions options;
    options.save_config = SaveConfig(save_config_mode(10));
    options.save_config[Mode::EVAL] = save_config_mode(2);
    options.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
    CollectionSettings gradients;
    gradients.name = "gradients";
    gradients.reduction_config.emplace();
    gradients.reduction_config->add_reductions_string("mean,std,l2_norm,abs_max");
    gradients.reduction_config->save_raw_tensor = true;
    options.collections.push_back(gradients);
    options.enabled = true;  // this demo writes whatever USE_SMDEBUG says

    const int train_steps = 100, eval_steps = 10;
    const std::size_t batch = 40;
    const float lr = 0.5f;
    {
        Hook<AnyStore> hook(out_dir, options);

        hook.set_mode(Mode::TRAIN);
        std::vector<std::size_t> order(train_y.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        for (int step = 0; step < train_steps; ++step) {
            hook.next_step();
            if (step % static_cast<int>(order.size() / batch) == 0) std::shuffle(order.begin(), order.end(), rng);
            const std::size_t start = (static_cast<std::size_t>(step) * batch) % order.size();
            Matrix xb = Matrix::from_shape({batch, 2});
            std::vector<int> yb(batch);
            for (std::size_t i = 0; i < batch; ++i) {
                xt::view(xb, i, xt::all()) = xt::view(train_x, order[start + i], xt::all());
                yb[i] = train_y[order[start + i]];
            }
            // parameters at the start of the step, as the PyTorch hook saves them
            hook.save_tensor("MLP_fc1.weight", model.w1);
            hook.save_tensor("MLP_fc1.bias", model.b1);
            hook.save_tensor("MLP_fc2.weight", model.w2);
            hook.save_tensor("MLP_fc2.bias", model.b2);
            const Pass p = forward(model, xb, yb);
            hook.save_tensor("CrossEntropyLoss_output_0", xt::xtensor<float, 0>(p.loss));
            const Grads g = backward(model, p, yb);
            hook.save_tensor("gradient/MLP_fc1.weight", g.w1);
            hook.save_tensor("gradient/MLP_fc1.bias", g.b1);
            hook.save_tensor("gradient/MLP_fc2.weight", g.w2);
            hook.save_tensor("gradient/MLP_fc2.bias", g.b2);
            hook.save_tensor("accuracy", p.accuracy, "metrics");  // a scalar collection, saved with the others
            if (step == 0) hook.save_scalar("learning_rate", lr);  // save_scalar: written whatever the schedule
            model.w1 -= lr * g.w1;
            model.b1 -= lr * g.b1;
            model.w2 -= lr * g.w2;
            model.b2 -= lr * g.b2;
        }

        hook.set_mode(Mode::EVAL);
        const std::size_t eval_batch = eval_y.size() / static_cast<std::size_t>(eval_steps);
        for (int step = 0; step < eval_steps; ++step) {
            hook.next_step();
            const std::size_t start = static_cast<std::size_t>(step) * eval_batch;
            const Matrix xb = xt::view(eval_x, xt::range(start, start + eval_batch), xt::all());
            const std::vector<int> yb(eval_y.begin() + static_cast<std::ptrdiff_t>(start),
                                      eval_y.begin() + static_cast<std::ptrdiff_t>(start + eval_batch));
            const Pass p = forward(model, xb, yb);
            hook.save_tensor("CrossEntropyLoss_output_0", xt::xtensor<float, 0>(p.loss));
            hook.save_tensor("accuracy", p.accuracy, "metrics");
        }
        hook.close();
    }
    std::cout << "trial written to " << out_dir << "\n\n";

    // ---- read it back ----------------------------------------------------------------------------
    TrialOptions topts;
    topts.training_end_delay_refresh = std::chrono::milliseconds(0);  // the run has ended: no waiting
    auto trial = create_trial(out_dir, topts);
    std::cout << "workers: ";
    for (const auto& w : trial.workers()) std::cout << w << " ";
    std::cout << "\n";
    for (Mode m : {Mode::TRAIN, Mode::EVAL}) {
        std::cout << mode_name(m) << " steps:";
        for (auto s : trial.steps(m)) std::cout << " " << s;
        std::cout << "\n";
    }
    const auto last = trial.steps().back();
    std::cout << "\ntensors (shape at their last saved step):\n";
    for (const auto& name : trial.tensor_names()) {
        auto t = trial.tensor(name);
        const auto steps = t.steps();
        std::cout << "  " << std::left << std::setw(28) << name << std::setw(10) << shape_text(t.shape(steps.back()))
                  << steps.size() << " steps\n";
    }
    std::cout << "\nloss per step:\n";
    auto loss = trial.tensor("CrossEntropyLoss_output_0");
    for (Mode m : {Mode::TRAIN, Mode::EVAL})
        for (auto s : loss.steps(m)) {
            const auto v = loss.value(s, m).as<double>();
            const auto acc = trial.tensor("accuracy").value(s, m).as<double>();
            std::cout << "  " << std::setw(6) << mode_name(m) << " step " << std::setw(3) << s << "  loss " << std::fixed
                      << std::setprecision(4) << v() << "  accuracy " << std::setprecision(3) << acc(0) << "\n";
        }
    auto g = trial.tensor("gradient/MLP_fc1.weight");
    std::cout << "\nstored reductions of gradient/MLP_fc1.weight at global step " << g.steps().back() << ":";
    for (const auto& r : g.reduction_values(g.steps().back()))
        std::cout << " " << (r.abs ? "abs_" : "") << r.reduction << "=" << std::setprecision(5) << r.value;
    std::cout << "\n(last global step " << last << ")\n";

    // ---- built-in rules that apply to this run -------------------------------------------------
    // (WeightUpdateRatio needs weights at consecutive steps; this run saves every 10th.)
    std::cout << "\nrules:\n";
    const std::vector<std::pair<std::string, RuleParams>> rules = {
        {"ExplodingTensor", {}},
        {"VanishingGradient", {}},
        {"AllZero", {{"collection_names", "weights"}}},
        {"LossNotDecreasing", {{"num_steps", "20"}, {"mode", "TRAIN"}}},
        {"Overfit", {{"ratio_threshold", "0.1"}}},
        {"Overtraining", {}},
    };
    for (const auto& [name, params] : rules) {
        auto rule = make_rule(name, trial, params);
        std::vector<RuleFiring> found;
        InvokeOptions run;
        run.on_fire = [&](const RuleFiring& f) { found.push_back(f); };
        invoke_rule(*rule, run);
        std::cout << "  " << std::left << std::setw(18) << name;
        if (found.empty()) {
            std::cout << "no finding\n";
            continue;
        }
        std::cout << "fired at " << found.size() << " step(s); first at step " << found.front().step << ": " << found.front().finding << "\n";
    }
    return 0;
}
