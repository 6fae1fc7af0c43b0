#pragma once
// `smdebug summary PATH`: workers, modes, step ranges, collections and a table of tensors.
#include <cstdio>
#include <iostream>

#include "common.hpp"

namespace cli {

inline int run_summary(const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 1) {
        std::cerr << "usage: smdebug summary PATH\n";
        return usage;
    }
    auto trial = create_trial(args.positional[0]);
    const auto workers = trial.workers();
    const auto steps = trial.steps();
    std::cout << "trial      " << trial.path() << "\n";
    std::cout << "workers    " << workers.size() << ":";
    for (const auto& w : workers) std::cout << " " << w;
    std::cout << "\nended      " << (trial.loaded_all_steps() ? "yes" : "no") << "\n";
    std::cout << "steps      " << steps.size();
    if (!steps.empty()) std::cout << " (global " << steps.front() << ".." << steps.back() << ")";
    std::cout << "\n";
    for (Mode m : trial.modes()) {
        const auto ms = trial.steps(m);
        std::cout << "  " << mode_name(m) << ": " << ms.size() << " steps";
        if (!ms.empty()) std::cout << " (" << ms.front() << ".." << ms.back() << ")";
        std::cout << "\n";
    }
    std::cout << "collections";
    for (const auto& [name, c] : trial.collections()) std::cout << " " << name;
    std::cout << "\n\n";
    std::printf("%-48s %-9s %-18s %s\n", "tensor", "dtype", "shape", "steps");
    int bad = 0;
    for (const auto& name : trial.tensor_names()) {
        auto t = trial.tensor(name);
        const auto ts = t.steps(Mode::GLOBAL, true);
        std::string dtype = "-", shape = "-";
        for (auto s : ts) {
            try {
                const auto v = t.value(s);
                dtype = std::string(dtype_name(v.dtype()));
                shape = shape_text(v.shape());
                break;
            } catch (const TensorUnavailableForStep&) {
                try { shape = shape_text(t.shape(s)); } catch (const SMDebugError&) {}
                dtype = "(reductions)";
            } catch (const FormatError& e) {
                std::cerr << "smdebug: bad data: " << e.what() << "\n";
                ++bad;
                break;
            }
        }
        std::printf("%-48s %-9s %-18s %zu\n", name.c_str(), dtype.c_str(), shape.c_str(), ts.size());
    }
    return bad ? bad_data : ok;
}

}  // namespace cli
