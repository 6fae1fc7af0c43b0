#pragma once
// File names of a trial (docs/format.md §2): where each kind of file lives, and the global step
// and worker encoded in a file name.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace smdebug::paths {

inline constexpr std::string_view index_prefix = "index/";
inline constexpr std::string_view collections_prefix = "collections/000000000/";
inline constexpr std::string_view events_prefix = "events/";
inline constexpr std::string_view end_marker = "training_job_end.ts";
// Manifests (format/manifest.hpp): outside every folder the Python smdebug lists (its S3 listing
// of "index" is a plain prefix, so nothing here may begin with "index", "collections" or "events").
inline constexpr std::string_view manifest_prefix = "manifest/";
inline constexpr std::string_view manifest_folder = manifest_prefix.substr(0, manifest_prefix.size() - 1);

// The folders of a trial, for code that watches or walks the tree (ChangeWatch). Index files sit
// in buckets of 1000 steps: index/<step / 1000, 9 digits>/.
inline constexpr std::string_view index_folder = index_prefix.substr(0, index_prefix.size() - 1);
inline constexpr std::string_view collections_folder = "collections";
inline constexpr std::string_view collections_bucket_folder = collections_prefix.substr(0, collections_prefix.size() - 1);

// TF device names are serialised in file names ('/' -> '_', ':' -> '-').
inline std::string serialize_worker(std::string_view w) {
    std::string s(w);
    for (char& c : s) c = c == '/' ? '_' : c == ':' ? '-' : c;
    return s;
}
inline std::string deserialize_worker(std::string_view w) {
    std::string s(w);
    for (char& c : s) c = c == '_' ? '/' : c == '-' ? ':' : c;
    return s;
}

inline std::string step_digits(std::int64_t value, int width) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(value));
    return buf;
}

inline std::string event_key(std::int64_t step, std::string_view worker) {
    const auto s = step_digits(step, 12);
    return "events/" + s + "/" + s + "_" + serialize_worker(worker) + ".tfevents";
}
inline std::string index_key(std::int64_t step, std::string_view worker) {
    return "index/" + step_digits(step / 1000, 9) + "/" + step_digits(step, 12) + "_" + serialize_worker(worker) + ".json";
}
// "index/<bucket>/<step, 12 digits>": sorts before every index file of that step and after every
// file of earlier steps (the reader's listing position).
inline std::string index_step_prefix(std::int64_t step) {
    return std::string(index_prefix) + step_digits(step / 1000, 9) + "/" + step_digits(step, 12);
}
// "index/<bucket>/": every index file of the steps of one bucket (1000 steps) lies under it.
inline std::string index_bucket_prefix(std::int64_t bucket) {
    return std::string(index_prefix) + step_digits(bucket, 9) + "/";
}
// Sorts after every key under index_bucket_prefix(bucket) and before those of later buckets.
inline std::string index_bucket_end(std::int64_t bucket) { return std::string(index_prefix) + step_digits(bucket, 9) + "~"; }
// The bucket of a key under "index/<bucket, 9 digits>/", by where it lies (not by its file name).
inline std::optional<std::int64_t> index_bucket_of(std::string_view key) {
    constexpr std::size_t digits = 9;
    if (!key.starts_with(index_prefix) || key.size() <= index_prefix.size() + digits || key[index_prefix.size() + digits] != '/')
        return std::nullopt;
    std::int64_t bucket = 0;
    for (char c : key.substr(index_prefix.size(), digits)) {
        if (c < '0' || c > '9') return std::nullopt;
        bucket = bucket * 10 + (c - '0');
    }
    return bucket;
}
// "events/<step, 12 digits>": sorts before every event file of that step.
inline std::string events_step_prefix(std::int64_t step) { return std::string(events_prefix) + step_digits(step, 12); }
inline std::string collections_key(std::string_view worker) {
    return std::string(collections_prefix) + serialize_worker(worker) + "_collections.json";
}

inline std::string_view basename(std::string_view key) {
    const auto slash = key.rfind('/');
    return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

struct StepFile {
    std::int64_t step;
    std::string worker;
};

// "index/000000000/000000000010_worker_0.json" -> {10, "worker_0"}. The worker is taken from the
// file name only (docs/deviations.md D13): a name starting with '_' is a serialised TF device.
// Returns nothing for names that are not index/event files.
inline std::optional<StepFile> parse_step_file(std::string_view key) {
    const auto name = basename(key);
    std::string_view stem;
    for (std::string_view ext : {".json", ".csv", ".tfevents"})
        if (name.size() > ext.size() && name.ends_with(ext)) { stem = name.substr(0, name.size() - ext.size()); break; }
    const auto us = stem.find('_');
    if (stem.empty() || us == 0 || us == std::string_view::npos || us + 1 >= stem.size()) return std::nullopt;
    for (std::size_t i = 0; i < us; ++i)
        if (stem[i] < '0' || stem[i] > '9') return std::nullopt;
    std::int64_t step = 0;
    const auto [p, ec] = std::from_chars(stem.data(), stem.data() + us, step);
    if (ec != std::errc() || p != stem.data() + us) return std::nullopt;
    const auto worker = stem.substr(us + 1);
    return StepFile{step, worker.front() == '_' ? deserialize_worker(worker) : std::string(worker)};
}

// ".../collections/000000000/worker_0_collections.json" -> "worker_0".
inline std::optional<std::string> parse_collections_file(std::string_view key) {
    const auto name = basename(key);
    std::string_view worker;
    for (std::string_view suffix : {"_collections.json", "_collections.ts"})
        if (name.size() > suffix.size() && name.ends_with(suffix)) worker = name.substr(0, name.size() - suffix.size());
    if (worker.empty()) return std::nullopt;
    return worker.front() == '_' ? deserialize_worker(worker) : std::string(worker);
}

// An index file's event_file_name must stay inside the trial (docs/deviations.md D22): a relative
// path under events/, made of plain names. Returns what is wrong with `name`, or an empty view when
// it is acceptable. Symlinks are the store's to check (LocalStore refuses files that resolve
// outside its root).
inline std::string_view event_file_name_problem(std::string_view name) noexcept {
    if (name.empty()) return "it is empty";
    if (name.front() == '/') return "it is an absolute path";
    if (name.find('\0') != std::string_view::npos) return "it contains a NUL byte";
    if (!name.starts_with(events_prefix)) return "it is not under the trial's events/ folder";
    for (std::size_t begin = 0; begin <= name.size();) {
        const auto end = std::min(name.find('/', begin), name.size());
        const auto part = name.substr(begin, end - begin);
        if (part.empty()) return "it has an empty path component";
        if (part == "." || part == "..") return "it has a '.' or '..' component";
        begin = end + 1;
    }
    return {};
}

}  // namespace smdebug::paths
