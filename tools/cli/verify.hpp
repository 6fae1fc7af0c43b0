#pragma once
// `smdebug verify PATH [--reduce NAME] [--abs]`: reads every saved record (raw values and stored
// reductions, every tensor, step and worker) through the public API, step by step in batches
// (read_all_records, query/batch_reads.hpp: one pass over each event file, files read and records decoded on a
// few threads, parallel ranged GETs on S3), checking each record; optionally reduces each value
// (on the same threads); reports the read rate.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <vector>

#include <smdebug/storage/detail/parallel.hpp>

#include "common.hpp"

namespace cli {

inline constexpr const char* verify_usage =
    "usage: smdebug verify PATH [--reduce R] [--abs]\n"
    "  Reads every saved record (values and stored reductions, every step and worker) and checks it;\n"
    "  --reduce R also computes reduction R of every value. Prints counts (with how many records carry\n"
    "  a payload checksum: smdebug-cpp's writers store one, the Python smdebug does not) and the read\n"
    "  rate; exits 1 when a record is bad (each one named on stderr).\n";

inline int run_verify(const Args& args) {
    using namespace smdebug;
    const auto reduce = args.value("--reduce");
    const bool abs = args.has("--abs");
    std::optional<Reduction> reduction;
    if (reduce) {
        reduction = parse_reduction(*reduce);
        if (!reduction) throw usage_error("unknown reduction '" + *reduce + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    }
    auto& trial = open_trial(the_path(args, verify_usage));
    const auto names = trial.tensor_names();  // loads the index (and settles end of training) first,
    const auto start = std::chrono::steady_clock::now();  // so that the rate measures the reads
    std::size_t values = 0, stored_reductions = 0, bad = 0, incomplete = 0, reduced = 0, checksummed = 0;
    std::uint64_t bytes = 0;
    double checksum = 0;
    Progress progress("verifying steps", trial.steps(Mode::GLOBAL, /*show_incomplete_steps=*/true).size());
    std::optional<std::pair<Mode, std::int64_t>> last_step;
    ReadAllOptions options;
    options.reduce = reduction;  // each value reduced by the thread that read it, while in cache
    options.abs = abs;
    options.keep_values = false;  // only sizes, reductions and errors are reported
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch)  // records come step by step
            if (last_step != std::pair(r.mode, r.mode_step)) last_step = std::pair(r.mode, r.mode_step), progress.advance();
        for (const auto& r : batch) {
            checksummed += r.payload_checksum;
            if (r.error) {
                try {
                    std::rethrow_exception(r.error);
                } catch (const StepNotYetAvailable&) {
                    ++incomplete;  // still being written by a running job
                } catch (const SMDebugError& e) {
                    ++bad;
                    std::cerr << "bad data: tensor " << printable(r.tensor) << " " << mode_name(r.mode) << " step " << r.mode_step
                              << " worker " << printable(r.worker) << (r.reduction.empty() ? "" : " reduction ") << r.reduction
                              << ": " << printable(e.what()) << "\n";
                }
                continue;
            }
            bytes += r.bytes;
            if (!r.reduction.empty()) {
                ++stored_reductions;
                continue;
            }
            ++values;
            if (r.reduced) {  // summed in record order: the same result on every run
                checksum += *r.reduced;
                ++reduced;
            }
        }
    }, options);
    progress.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("tensors %zu\nvalues %zu\nstored reductions %zu\nbytes %llu\n", names.size(), values, stored_reductions,
                static_cast<unsigned long long>(bytes));
    if (reduction) std::printf("reduced %zu values (%s%s), sum of results %.17g\n", reduced, abs ? "abs_" : "", reduce->c_str(), checksum);
    if (incomplete) std::printf("records still being written %zu\n", incomplete);
    // smdebug's TFRecord footer is a constant: only smdebug-cpp's index entries carry what detects a changed value.
    const std::size_t records = values + stored_reductions + bad + incomplete;
    if (checksummed) std::printf("payload checksums %zu of %zu records (CRC-32C in the index entries: checked)\n", checksummed, records);
    else std::printf("payload checksums none: a changed byte inside a stored value cannot be detected (the writer stored no CRC-32C)\n");
    std::printf("bad records %zu\nelapsed %.3f s\nrate %.1f MB/s (%.3f GB/s)\n", bad, secs,
                secs > 0 ? static_cast<double>(bytes) / secs / 1e6 : 0.0, secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0.0);
    return bad ? bad_data : ok;
}

}  // namespace cli
