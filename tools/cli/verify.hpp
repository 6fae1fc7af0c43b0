#pragma once
// `smdebug verify PATH [--reduction NAME] [--abs]`: reads every saved record (raw values and stored
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

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* verify_usage =
    "usage: smdebug verify PATH [--reduction R] [--abs]\n"
    "  Reads every saved record (values and stored reductions, every step and worker) and checks it;\n"
    "  --reduction R (alias --reduce) also computes reduction R of every value. Prints counts (with how\n"
    "  many records carry a payload checksum: smdebug-cpp's writers store one, the Python smdebug does\n"
    "  not) and the read rate; exits 1 when a record is bad (each one named on stderr).\n";

inline int run_verify(Session& session, const Args& args) {
    using namespace smdebug;
    const auto reduce = args.value("--reduction");
    const bool abs = args.has("--abs");
    std::optional<Reduction> reduction;
    if (reduce) {
        reduction = parse_reduction(*reduce);
        if (!reduction) throw usage_error("unknown reduction '" + *reduce + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    }
    auto& trial = session.open_trial(the_path(args, verify_usage));
    const auto names = trial.tensor_names();  // loads the index (and settles end of training) first,
    const auto start = std::chrono::steady_clock::now();  // so that the rate measures the reads
    std::size_t values = 0, stored_reductions = 0, bad = 0, incomplete = 0, reduced = 0, checksummed = 0;
    std::uint64_t bytes = 0;
    double checksum = 0;
    Progress progress("verifying steps", trial.steps(Mode::GLOBAL, /*show_incomplete_steps=*/true).size());
    std::optional<std::pair<Mode, std::int64_t>> last_step;
    ReadOptions options;
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
                    session.print_error("bad data: tensor " + std::string(r.tensor) + " " + std::string(mode_name(r.mode)) + " step " + std::to_string(r.mode_step) +
                                " worker " + std::string(r.worker) + (r.reduction.empty() ? "" : " reduction ") + std::string(r.reduction) + ": " + e.what());
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
    std::printf("tensors %zu\nvalues %zu\nstored reductions %zu\nbytes %llu (%s)\n", names.size(), values, stored_reductions,
                static_cast<unsigned long long>(bytes), human_bytes(static_cast<double>(bytes)).c_str());
    if (reduction) std::printf("reduced %zu values (%s%s), sum of results %.17g\n", reduced, abs ? "abs_" : "", reduce->c_str(), checksum);
    if (incomplete) std::printf("records still being written %zu\n", incomplete);
    // smdebug's TFRecord footer is a constant: only smdebug-cpp's index entries carry what detects a changed value.
    const std::size_t records = values + stored_reductions + bad + incomplete;
    if (checksummed) std::printf("payload checksums %zu of %zu records (CRC-32C in the index entries: checked)\n", checksummed, records);
    else std::printf("payload checksums none: a changed byte inside a stored value cannot be detected (the writer stored no CRC-32C)\n");
    std::printf("%s\nelapsed %.3f s\nrate %s/s\n", paint("bad records " + std::to_string(bad), bad ? Colour::red : Colour::green).c_str(), secs,
                human_bytes(secs > 0 ? static_cast<double>(bytes) / secs : 0.0).c_str());
    return bad ? bad_data : ok;
}

}  // namespace cli
