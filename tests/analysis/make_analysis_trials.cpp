// make_analysis_trials DIR: writes the trials the Python and serve tests of `diagnose` and `diff`
// read (tests/analysis/analysis_trials.hpp), each in a folder of DIR:
//   clean       a 20-step MLP with EVAL phases, nothing non-finite
//   inf         the same, fc2's output +inf at TRAIN step 12 (global step 16) with finite inputs
//   weight_nan  fc1.weight NaN when TRAIN step 7 (global step 9) begins
//   clean_b     a copy of `clean` written again (bitwise the same)
//   parted      `clean` with fc2.weight perturbed from TRAIN step 8 (global step 10)
#include <cstdio>
#include <exception>
#include <filesystem>

#include "analysis_trials.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_analysis_trials DIR\n");
        return 2;
    }
    try {
        const std::filesystem::path dir = argv[1];
        analysis_trials::write_mlp(dir / "clean", {});
        analysis_trials::write_mlp(dir / "clean_b", {});
        analysis_trials::write_mlp(dir / "inf", {.inf_at = 12});
        analysis_trials::write_mlp(dir / "weight_nan", {.weight_nan_at = 7});
        analysis_trials::write_mlp(dir / "parted", {.perturb_from = 8});
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_analysis_trials: %s\n", e.what());
        return 1;
    }
    return 0;
}
