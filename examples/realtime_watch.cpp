// realtime_watch TRIAL [TENSOR] [--timeout SECONDS]
//
// Follows a training job while it writes (a local folder or s3://bucket/prefix): waits for each
// global step in turn, prints the tensor's value summary as soon as every worker has written the
// step, and stops when the job writes its end marker. This is the loop a rule runs.
//
//   wait_for_steps({s})   blocks until step s is complete (refreshing only new index files; on
//                         local folders it wakes on inotify instead of polling);
//   StepUnavailable       step s was passed without being saved: go on with s + 1;
//   NoMoreData            training ended and no step s will come: done;
//   TimeoutError          nothing new for --timeout seconds (default: wait forever).
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <smdebug/smdebug.hpp>

using namespace smdebug;

int run_realtime_watch(int argc, char** argv) {
    std::string path, name;
    std::optional<std::chrono::milliseconds> timeout;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--timeout" && i + 1 < argc) {
            char* end = nullptr;
            const double seconds = std::strtod(argv[++i], &end);
            if (*end != '\0' || !(seconds >= 0) || seconds > 1e9) {
                std::cerr << "realtime_watch: --timeout takes a number of seconds, not '" << argv[i] << "'\n";
                return 2;
            }
            timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
        }
        else if (path.empty()) path = a;
        else if (name.empty()) name = a;
        else path.clear(), i = argc;
    }
    if (path.empty()) {
        std::cerr << "usage: realtime_watch TRIAL [TENSOR] [--timeout SECONDS]\n";
        return 2;
    }
    try {
        TrialOptions options;
        options.wait_for_trial = true;  // the job may not have written anything yet (D16)
        options.wait_timeout = timeout;
        auto trial = create_trial(path, options);
        std::size_t seen = 0;
        for (std::int64_t step = 0;; ++step) {
            try {
                trial.wait_for_steps({step}, Mode::GLOBAL, timeout);
            } catch (const StepUnavailable&) {
                continue;
            } catch (const NoMoreData&) {
                break;
            }
            ++seen;
            const auto mode = trial.mode(step);
            std::cout << "step " << step << " (" << mode_name(mode.value_or(Mode::GLOBAL)) << " "
                      << trial.mode_step(step).value_or(step) << ")";
            if (name.empty()) {
                std::cout << " " << trial.tensor_names({.step = step}).size() << " tensors\n";
                continue;
            }
            if (!trial.has_tensor(name)) {
                std::cout << " no tensor " << name << " yet\n";
                continue;
            }
            try {
                const double mean = trial.tensor(name).reduction_value(step, "mean");
                char buf[32];
                const auto r = std::to_chars(buf, buf + sizeof buf, mean);
                std::cout << " " << name << " mean " << std::string(buf, r.ptr) << "\n";
            } catch (const TensorUnavailableForStep&) {
                std::cout << " " << name << " not saved\n";
            }
        }
        std::cout << "training ended after " << seen << " steps\n";
        return 0;
    } catch (const SMDebugError& e) {
        std::cerr << "realtime_watch: " << e.what() << "\n";
        return 1;
    }
}

// Every failure ends with one line and a non-zero exit, never an abort: errors of the library
// and of the C++ runtime, and a standard output that cannot be written (a full disk).
int main(int argc, char** argv) {
    int code = 0;
    try {
        code = run_realtime_watch(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "realtime_watch: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {  // a full disk under a redirected stdout is a failure too
        std::cerr << "realtime_watch: cannot write standard output: " << std::strerror(errno) << "\n";
        return 1;
    }
    return code;
}
