#pragma once
// `smdebug compact PATH [--remove]`: writes the manifests of every worker (a compacted index,
// format/manifest.hpp) so that readers open the trial from a few objects instead of one index
// file per step and worker; --remove removes every manifest instead.
#include <filesystem>
#include <iostream>
#include <vector>

#include <smdebug/format/manifest.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/writer/manifest_writer.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "session.hpp"

namespace cli {

inline constexpr const char* compact_usage =
    "usage: smdebug compact PATH [--remove]\n"
    "  Writes the trial's manifests (a compacted index under manifest/, one per 1000 steps, which the\n"
    "  Python smdebug does not read): readers then open the trial from them instead of listing and\n"
    "  reading every index file. Covers the steps every worker has finished (all of them once the job\n"
    "  ended); newer steps are read from the index files. Run it again to cover more. --remove removes\n"
    "  every manifest (of every worker) instead.\n";

// Removes `dir` and the folders under it when they hold no file (a local trial's manifest/all/
// after --remove); a folder with anything else in it stays.
inline void remove_empty_folders(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return;
    std::vector<std::filesystem::path> children;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_directory(ec) && !e.is_symlink(ec)) children.push_back(e.path());
    for (const auto& child : children) remove_empty_folders(child);
    if (std::filesystem::is_empty(dir, ec) && !ec) std::filesystem::remove(dir, ec);
}

inline int run_compact(Session& session, const Args& args) {
    using namespace smdebug;
    const auto& path = the_path(args, compact_usage);
    const auto store = session.checked_store(path);
    if (args.has("--remove")) {
        std::size_t removed = 0;
        for (const auto& k : store.list(paths::manifest_prefix, ""))
            if (manifest::parse_key(k)) {
                store.remove(k);
                ++removed;
            }
        if (!path.starts_with("s3://")) remove_empty_folders(std::filesystem::path(path) / paths::manifest_prefix);
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
