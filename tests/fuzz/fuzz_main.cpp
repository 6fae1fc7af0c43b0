// libFuzzer entry points: picks the target named by the program (fuzz_<target>, a symlink to
// smdebug_fuzz) or by SMDEBUG_FUZZ_TARGET, and hands every input to it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "fuzz_targets.hpp"

namespace {
const smdebug::fuzz::Target* chosen = nullptr;

const smdebug::fuzz::Target* find(std::string_view name) {
    for (std::size_t i = 0; i < smdebug::fuzz::target_count; ++i)
        if (name == smdebug::fuzz::targets[i].name) return &smdebug::fuzz::targets[i];
    return nullptr;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    std::string_view prog = (*argv)[0];
    if (auto slash = prog.rfind('/'); slash != std::string_view::npos) prog.remove_prefix(slash + 1);
    if (prog.starts_with("fuzz_")) chosen = find(prog.substr(5));
    if (const char* env = std::getenv("SMDEBUG_FUZZ_TARGET")) chosen = find(env);
    if (!chosen) {
        std::fprintf(stderr, "smdebug_fuzz: name the target as the program (fuzz_<target>) or in SMDEBUG_FUZZ_TARGET; targets:");
        for (std::size_t i = 0; i < smdebug::fuzz::target_count; ++i) std::fprintf(stderr, " %s", smdebug::fuzz::targets[i].name);
        std::fprintf(stderr, "\n");
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    chosen->run({data, size});
    return 0;
}
