// read_local TRIAL_DIR [TENSOR]
//
// Opens a trial in a local folder as Trial<LocalStore> (the store type is known, so no type
// erasure), prints what it holds, then walks one tensor (the given one, else the first saved
// tensor) over its steps: shape and mean at each step. Missing steps, tensors that were saved only
// as reductions and corrupt files come back as typed exceptions derived from smdebug::SMDebugError.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <smdebug/local.hpp>

using namespace smdebug;

namespace {

// The shortest text that reads back as the same double (what Python's repr prints).
std::string shortest(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string shape_text(const Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace

int run_read_local(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::cerr << "usage: read_local TRIAL_DIR [TENSOR]\n";
        return 2;
    }
    try {
        Trial<LocalStore> trial{LocalStore(argv[1])};

        std::cout << "trial " << trial.path() << "\n";
        std::cout << "workers " << trial.workers().size() << ":";
        for (const auto& w : trial.workers()) std::cout << " " << w;
        std::cout << "\nmodes:";
        for (Mode m : trial.modes()) std::cout << " " << mode_name(m) << " (" << trial.steps(m).size() << " steps)";
        std::cout << "\nsteps " << trial.steps().size() << "\n";
        const auto names = trial.tensor_names();
        std::cout << "tensors " << names.size() << "\n";
        for (const auto& [name, collection] : trial.collections())
            std::cout << "collection " << name << ": " << collection.tensor_names.size() << " tensor names\n";

        std::string name = argc == 3 ? argv[2] : (names.empty() ? std::string() : names.front());
        if (name.empty()) return 0;
        auto tensor = trial.tensor(name);  // TensorUnavailable if the trial has no such tensor
        std::cout << "tensor " << name << " steps:";
        for (auto step : tensor.steps()) std::cout << " " << step;
        std::cout << "\n";
        for (auto step : tensor.steps()) {
            try {
                const TensorValue value = tensor.value(step);
                std::cout << "step " << step << " " << dtype_name(value.dtype()) << " " << shape_text(value.shape())
                          << " mean " << shortest(tensor.reduction_value(step, "mean")) << "\n";
            } catch (const TensorUnavailableForStep&) {  // saved as reductions (or a shape) only
                std::cout << "step " << step << " stored reductions:";
                for (const auto& r : tensor.reduction_values(step))
                    std::cout << " " << (r.abs ? "abs_" : "") << r.reduction << " " << shortest(r.value);
                std::cout << "\n";
            }
        }
        return 0;
    } catch (const SMDebugError& e) {
        std::cerr << "read_local: " << e.what() << "\n";
        return 1;
    }
}

// Every failure ends with one line and a non-zero exit, never an abort: errors of the library
// and of the C++ runtime, and a standard output that cannot be written (a full disk).
int main(int argc, char** argv) {
    int code = 0;
    try {
        code = run_read_local(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "read_local: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {  // a full disk under a redirected stdout is a failure too
        std::cerr << "read_local: cannot write standard output: " << std::strerror(errno) << "\n";
        return 1;
    }
    return code;
}
