#pragma once
// `smdebug compact PATH [--remove]`: writes the manifests of every worker (a compacted index,
// format/manifest.hpp) so that readers open the trial from a few objects instead of one index
// file per step and worker; --remove removes every manifest instead.
#include <iostream>

#include "common.hpp"

namespace cli {

inline constexpr const char* compact_usage =
    "usage: smdebug compact PATH [--remove]\n"
    "  Writes the trial's manifests (a compacted index under manifest/, one per 1000 steps, which the\n"
    "  Python smdebug does not read): readers then open the trial from them instead of listing and\n"
    "  reading every index file. Covers the steps every worker has finished (all of them once the job\n"
    "  ended); newer steps are read from the index files. Run it again to cover more. --remove removes\n"
    "  every manifest (of every worker) instead.\n";

inline int run_compact(const Args& args) {
    using namespace smdebug;
    const auto store = checked_trial_store(the_path(args, compact_usage));
    if (args.has("--remove")) {
        std::size_t removed = 0;
        for (const auto& k : store.list(paths::manifest_prefix, ""))
            if (manifest::parse_key(k)) {
                store.remove(k);
                ++removed;
            }
        std::cout << "removed " << removed << " manifest" << (removed == 1 ? "" : "s") << "\n";
        return 0;
    }
    const auto r = compact_trial(store);
    std::cout << "wrote " << r.written.size() << " manifest" << (r.written.size() == 1 ? "" : "s") << " (" << r.bytes << " bytes) for "
              << r.files_covered << " index files";
    if (r.last_step >= 0) std::cout << " up to step " << r.last_step;
    std::cout << "; " << r.files_left << " index files left to be read as they are";
    if (!r.removed.empty()) std::cout << "; removed " << r.removed.size() << " earlier manifest" << (r.removed.size() == 1 ? "" : "s");
    std::cout << "\n";
    return 0;
}

}  // namespace cli
