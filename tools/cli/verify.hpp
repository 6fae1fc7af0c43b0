#pragma once
// `smdebug verify PATH [--reduce NAME] [--abs]`: reads every saved record (raw values and stored
// reductions, every step and worker) through the public API, checking each record, optionally
// reduces each value, and reports the read rate.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "common.hpp"

namespace cli {

inline int run_verify(const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 1) {
        std::cerr << "usage: smdebug verify PATH [--reduce NAME] [--abs]\n";
        return usage;
    }
    const auto reduce = args.value("--reduce");
    const bool abs = args.has("--abs");
    std::optional<Reduction> reduction;
    if (reduce) {
        reduction = parse_reduction(*reduce);
        if (!reduction) {
            std::cerr << "smdebug: unknown reduction '" << *reduce << "' (min, max, mean, std, variance, sum, prod, l1, l2)\n";
            return usage;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    auto trial = create_trial(args.positional[0]);
    std::size_t tensors = 0, values = 0, stored_reductions = 0, bad = 0, reduced = 0;
    std::uint64_t bytes = 0;
    double checksum = 0;
    for (const auto& name : trial.tensor_names()) {
        auto t = trial.tensor(name);
        ++tensors;
        for (auto step : t.steps(Mode::GLOBAL, true)) {
            for (const auto& worker : t.workers(step)) {
                const StepQuery q{Mode::GLOBAL, worker};
                try {
                    try {
                        const auto v = t.value(step, q);
                        ++values;
                        bytes += v.byte_size();
                        if (reduction && !v.is_string() && !v.empty()) {
                            checksum += compute_reduction(v, *reduction, abs);
                            ++reduced;
                        }
                    } catch (const TensorUnavailableForStep&) {
                        // only reductions and/or a shape were saved here
                    }
                    stored_reductions += t.reduction_values(step, q).size();
                } catch (const FormatError& e) {
                    ++bad;
                    std::cerr << "bad data: tensor " << name << " step " << step << " worker " << worker << ": " << e.what() << "\n";
                } catch (const StepNotYetAvailable& e) {
                    ++bad;
                    std::cerr << "bad data: tensor " << name << " step " << step << " worker " << worker << ": " << e.what() << "\n";
                }
            }
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("tensors %zu\nvalues %zu\nstored reductions %zu\nbytes %llu\n", tensors, values, stored_reductions,
                static_cast<unsigned long long>(bytes));
    if (reduction) std::printf("reduced %zu values (%s%s), sum of results %.17g\n", reduced, abs ? "abs_" : "", reduce->c_str(), checksum);
    std::printf("bad records %zu\nelapsed %.3f s\nrate %.3f GB/s\n", bad, secs, secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0.0);
    return bad ? bad_data : ok;
}

}  // namespace cli
