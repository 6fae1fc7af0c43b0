#pragma once
// `smdebug verify PATH [--reduce NAME] [--abs]`: reads every saved record (raw values and stored
// reductions, every step and worker) through the public API, many at a time (parallel ranged GETs
// on S3), checking each record; optionally reduces each value; reports the read rate.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "common.hpp"

namespace cli {

inline constexpr const char* verify_usage =
    "usage: smdebug verify PATH [--reduce R] [--abs]\n"
    "  Reads every saved record (values and stored reductions, every step and worker) and checks it;\n"
    "  --reduce R also computes reduction R of every value. Prints counts and the read rate; exits 1\n"
    "  when a record is bad (each one named on stderr).\n";

inline int run_verify(const Args& args) {
    using namespace smdebug;
    const auto reduce = args.value("--reduce");
    const bool abs = args.has("--abs");
    std::optional<Reduction> reduction;
    if (reduce) {
        reduction = parse_reduction(*reduce);
        if (!reduction) throw usage_error("unknown reduction '" + *reduce + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    }
    auto trial = open_trial(the_path(args, verify_usage));
    const auto names = trial.tensor_names();  // loads the index (and settles end of training) first,
    const auto start = std::chrono::steady_clock::now();  // so that the rate measures the reads
    std::size_t tensors = 0, values = 0, stored_reductions = 0, bad = 0, incomplete = 0, reduced = 0;
    std::uint64_t bytes = 0;
    double checksum = 0;
    Progress progress("verifying tensors", names.size());
    for (const auto& name : names) {
        auto t = trial.tensor(name);
        ++tensors;
        progress.advance();
        t.read_records([&](const auto& rec, const TensorValue* v, std::exception_ptr error) {
            if (error) {
                try {
                    std::rethrow_exception(error);
                } catch (const StepNotYetAvailable&) {
                    ++incomplete;  // still being written by a running job
                } catch (const SMDebugError& e) {
                    ++bad;
                    std::cerr << "bad data: tensor " << name << " " << mode_name(rec.mode) << " step " << rec.mode_step
                              << " worker " << rec.worker << (rec.reduction.empty() ? "" : " reduction ")
                              << rec.reduction << ": " << e.what() << "\n";
                }
                return;
            }
            bytes += v->byte_size();
            if (!rec.reduction.empty()) {
                ++stored_reductions;
                return;
            }
            ++values;
            if (reduction && !v->is_string() && !v->empty()) {
                try {
                    checksum += compute_reduction(*v, *reduction, abs);
                    ++reduced;
                } catch (const SMDebugTypeError&) {
                    // complex tensors have no reductions
                }
            }
        });
    }
    progress.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("tensors %zu\nvalues %zu\nstored reductions %zu\nbytes %llu\n", tensors, values, stored_reductions,
                static_cast<unsigned long long>(bytes));
    if (reduction) std::printf("reduced %zu values (%s%s), sum of results %.17g\n", reduced, abs ? "abs_" : "", reduce->c_str(), checksum);
    if (incomplete) std::printf("records still being written %zu\n", incomplete);
    std::printf("bad records %zu\nelapsed %.3f s\nrate %.1f MB/s (%.3f GB/s)\n", bad, secs,
                secs > 0 ? static_cast<double>(bytes) / secs / 1e6 : 0.0, secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0.0);
    return bad ? bad_data : ok;
}

}  // namespace cli
