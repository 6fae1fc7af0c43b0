// read_s3 s3://BUCKET/PREFIX [TENSOR_REGEX]
//
// Opens a trial on S3 as Trial<S3Store> and prints, for every tensor matching the regex (default:
// all), its l2 norm at every step. Tensor::values() fetches all records of a tensor in parallel
// ranged GETs, reading only the bytes the index points at.
//
// Configuration is the usual AWS one: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN, or AWS_PROFILE with ~/.aws/credentials and ~/.aws/config, container
// credentials or IMDSv2; AWS_REGION; AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) for an
// S3-compatible server, which then uses path-style addressing; AWS_CA_BUNDLE for an extra CA.
// TLS certificates are always verified.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <smdebug/smdebug.hpp>
#include <smdebug/storage/s3_store.hpp>

using namespace smdebug;

int run_read_s3(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::cerr << "usage: read_s3 s3://BUCKET/PREFIX [TENSOR_REGEX]\n";
        return 2;
    }
    try {
        S3StoreOptions options;
        options.max_concurrency = 16;  // requests in flight at once (default 64)
        Trial<S3Store> trial{S3Store(argv[1], options)};

        std::cout << "trial " << trial.path() << ": " << trial.workers().size() << " worker(s), "
                  << trial.steps().size() << " steps\n";
        TensorNamesQuery query;
        if (argc == 3) query.regex = {argv[2]};
        for (const auto& name : trial.tensor_names(query)) {
            auto tensor = trial.tensor(name);
            std::cout << name << ":";
            try {
                for (const auto& [step, value] : tensor.values()) {
                    const double l2 = compute_reduction(value, "l2");
                    char buf[32];
                    const auto r = std::to_chars(buf, buf + sizeof buf, l2);
                    std::cout << " " << step << "=" << std::string(buf, r.ptr);
                }
            } catch (const TensorUnavailableForStep&) {
                std::cout << " (saved as reductions only)";
            }
            std::cout << "\n";
        }
        return 0;
    } catch (const SMDebugError& e) {
        std::cerr << "read_s3: " << e.what() << "\n";
        return 1;
    }
}

// Every failure ends with one line and a non-zero exit, never an abort: errors of the library
// and of the C++ runtime, and a standard output that cannot be written (a full disk).
int main(int argc, char** argv) {
    int code = 0;
    try {
        code = run_read_s3(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "read_s3: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {  // a full disk under a redirected stdout is a failure too
        std::cerr << "read_s3: cannot write standard output: " << std::strerror(errno) << "\n";
        return 1;
    }
    return code;
}
