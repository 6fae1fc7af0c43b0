// A trial in S3 through Trial<S3Store>: its steps and tensor names.
#include <cstdio>
#include <string>

#include <smdebug/s3.hpp>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    smdebug::Trial<smdebug::S3Store> trial{smdebug::S3Store(argv[1])};
    for (const auto& name : trial.tensor_names()) std::printf("%s\n", name.c_str());
    return trial.steps().empty() ? 1 : 0;
}
