#pragma once
// `smdebug reductions PATH NAME [--reduction R] [--abs] [--mode M] [--worker W]`: a table with a
// row per reduction and a column per step.
#include <iostream>

#include "common.hpp"

namespace cli {

inline constexpr const char* reductions_usage =
    "usage: smdebug reductions PATH NAME [--reduction R] [--abs] [--mode M] [--worker W]\n"
    "  Reductions of tensor NAME over its steps: a header line `reduction<TAB>step...`, then one line\n"
    "  per reduction (all nine by default: min max mean std variance sum prod l1 l2) with a column\n"
    "  per step. A stored reduction is used when the writer saved one, else it is computed from the\n"
    "  value; `n/a` when neither exists. --abs reduces absolute values.\n";

// A batched reduction's answer (Trial::read), or nothing when the step has neither the value nor
// that stored reduction, or the dtype has no reductions (complex, strings), or the tensor is
// empty. Any other error is rethrown.
inline std::optional<double> reduction_or_none(const smdebug::ValueResult& r) {
    if (!r.error) return r.reduced;
    try {
        std::rethrow_exception(r.error);
    } catch (const smdebug::TensorUnavailableForStep&) {
    } catch (const smdebug::SMDebugTypeError&) {
    } catch (const smdebug::SMDebugValueError&) {
    }
    return std::nullopt;
}

inline int run_reductions(const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 2) throw usage_error(std::string("expected PATH and NAME\n") + reductions_usage);
    std::vector<Reduction> which;
    if (args.value("--reduction")) which.push_back(reduction_option(args, "--reduction", "mean"));
    else for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i) which.push_back(static_cast<Reduction>(i));
    const bool abs = args.has("--abs");
    const StepQuery q{mode_option(args), args.value("--worker")};
    auto& trial = open_trial(args.positional[0]);
    const std::string& name = args.positional[1];
    const auto steps = trial.tensor(name).steps(q.mode);
    std::vector<std::vector<std::string>> rows(which.size());
    {
        // Every reduction of a run of steps is one Trial::read: a step's record is fetched once
        // (one ranged GET per event file on S3), not once per reduction.
        constexpr std::size_t steps_per_read = 256;
        Progress progress("reducing", steps.size());
        std::vector<ValueRequest> requests;
        for (std::size_t first = 0; first < steps.size(); first += steps_per_read) {
            const std::size_t last = std::min(steps.size(), first + steps_per_read);
            requests.clear();
            for (std::size_t k = first; k < last; ++k)
                for (Reduction r : which) requests.push_back({name, steps[k], q, ReductionSpec{std::string(reduction_name(r)), abs}});
            const auto results = trial.read(requests);
            for (std::size_t j = 0; j < results.size(); ++j) {
                const auto v = reduction_or_none(results[j]);
                rows[j % which.size()].push_back(v ? format_double(*v) : "n/a");
            }
            for (std::size_t k = first; k < last; ++k) progress.advance();
        }
    }
    std::cout << "reduction";
    for (auto s : steps) std::cout << "\t" << s;
    std::cout << "\n";
    for (std::size_t i = 0; i < which.size(); ++i) {
        std::cout << (abs ? "abs_" : "") << reduction_name(which[i]);
        for (const auto& v : rows[i]) std::cout << "\t" << v;
        std::cout << "\n";
    }
    return ok;
}

}  // namespace cli
