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

// One reduction of a tensor at a step, or nothing when the step has neither the value nor that
// stored reduction (or the dtype has no reductions).
template <class TensorT>
std::optional<double> reduction_at(const TensorT& t, std::int64_t step, smdebug::Reduction r, const smdebug::StepQuery& q, bool abs) {
    try {
        return t.reduction_value(step, smdebug::reduction_name(r), q, abs);
    } catch (const smdebug::TensorUnavailableForStep&) {
        return std::nullopt;
    } catch (const smdebug::SMDebugTypeError&) {
        return std::nullopt;  // complex or string tensors have no reductions
    } catch (const smdebug::SMDebugValueError&) {
        return std::nullopt;  // an empty tensor has none either
    }
}

inline int run_reductions(const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 2) throw usage_error(std::string("expected PATH and NAME\n") + reductions_usage);
    std::vector<Reduction> which;
    if (args.value("--reduction")) which.push_back(reduction_option(args, "--reduction", "mean"));
    else for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i) which.push_back(static_cast<Reduction>(i));
    const bool abs = args.has("--abs");
    const StepQuery q{mode_option(args), args.value("--worker")};
    auto trial = open_trial(args.positional[0]);
    auto t = trial.tensor(args.positional[1]);
    const auto steps = t.steps(q.mode);
    std::vector<std::vector<std::string>> rows(which.size());
    {
        Progress progress("reducing", steps.size());
        for (auto s : steps) {
            for (std::size_t i = 0; i < which.size(); ++i) {
                const auto v = reduction_at(t, s, which[i], q, abs);
                rows[i].push_back(v ? format_double(*v) : "n/a");
            }
            progress.advance();
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
