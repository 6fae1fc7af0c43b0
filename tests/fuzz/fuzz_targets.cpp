// One libFuzzer binary for every parser of outside input (one clang TU to build instead of one per
// target). The target is picked by the program's name (bin/fuzz_<target> are symlinks to
// bin/smdebug_fuzz) or by SMDEBUG_FUZZ_TARGET. A target may throw only smdebug::SMDebugError;
// anything else — another exception, a crash, a sanitizer report, a leak, a hang — is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/aws_service_client.hpp>
#include <smdebug/net/detail/aws_profile.hpp>
#include <smdebug/net/detail/http_codec.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/net/detail/xml.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/storage/s3_store.hpp>
#include <smdebug/writer/hook_config.hpp>

#include "fuzz_targets.hpp"

namespace smdebug::fuzz {
namespace {

std::string_view as_text(std::span<const std::uint8_t> in) { return {reinterpret_cast<const char*>(in.data()), in.size()}; }

// TFRecord framing + Event/Summary/TensorProto: the bytes as a whole event file (every record in
// order, each decoded), and as one bare payload without the CRC gate in front of it.
// The reader's paths (RecordReader: event::outline to check a record, event::decode_value for its
// value) agree with event::decode on every payload decode accepts: the same tag, step, size and
// elements (outline does not expand a broadcast, so it may accept what decode refuses). Each
// decode gets its own copy: decoding may move bytes inside its buffer.
void reader_paths_agree(std::span<const std::byte> payload) {
    std::optional<event::DecodedEvent> full;
    auto first = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(payload));
    try {
        full = event::decode(first, first->bytes(), "fuzz.payload");
    } catch (const SMDebugError&) {
    }
    std::string tag;
    std::int64_t step = 0;
    std::optional<TensorValue> value;
    auto second = ByteBuffer::copy_of(payload);
    try {
        value = event::decode_value(second, second.share(), second.bytes(), "fuzz.payload", [&](std::string_view t, std::int64_t s) {
            tag = std::string(t);
            step = s;
        });
    } catch (const SMDebugError&) {
    }
    if (full.has_value() != value.has_value()) std::abort();  // one path accepts what the other refuses
    if (!full) return;
    if (tag != full->tag || step != full->step || value->dtype() != full->value.dtype() || value->shape() != full->value.shape() ||
        !std::ranges::equal(value->bytes(), full->value.bytes()) || value->is_string() != full->value.is_string() ||
        (value->is_string() && value->strings() != full->value.strings()))
        std::abort();
    try {
        const auto outline = event::outline(payload, "fuzz.payload");
        if (outline.tag != full->tag || outline.step != full->step || outline.byte_size != full->value.byte_size()) std::abort();
    } catch (const SMDebugError&) {
        std::abort();  // outline refused what decode accepted
    }
}

void event_record(std::span<const std::uint8_t> in) {
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(std::as_bytes(in)));
    try {
        tfrecord::Scanner scan(buf->bytes(), "fuzz.tfevents");
        tfrecord::Record r;
        for (int n = 0; n < 64 && scan.next(r); ++n) {
            reader_paths_agree(r.payload);  // before decode moves the payload's bytes
            const auto ev = event::decode(buf, r.payload, "fuzz.tfevents");
            (void)ev.value.byte_size();
        }
    } catch (const SMDebugError&) {
    }
    reader_paths_agree(std::as_bytes(in));
    try {
        const auto ev = event::decode(buf, buf->bytes(), "fuzz.payload");
        (void)ev.value.byte_size();
    } catch (const SMDebugError&) {
    }
}

// The two index parsers agree: what the scanner accepts, parse_dom accepts with the same fields.
bool same_index(const index_file::IndexFile& a, const index_file::IndexFile& b) {
    if (a.mode != b.mode || a.mode_step != b.mode_step || a.event_file_name != b.event_file_name ||
        a.tensors.size() != b.tensors.size() || a.shapes.size() != b.shapes.size())
        return false;
    for (std::size_t i = 0; i < a.tensors.size(); ++i)
        if (a.tensors[i].name != b.tensors[i].name || a.tensors[i].start != b.tensors[i].start || a.tensors[i].length != b.tensors[i].length)
            return false;
    for (std::size_t i = 0; i < a.shapes.size(); ++i)
        if (a.shapes[i].name != b.shapes[i].name || a.shapes[i].original_name != b.shapes[i].original_name ||
            a.shapes[i].shape != b.shapes[i].shape)
            return false;
    return true;
}

void index_json(std::span<const std::uint8_t> in) {
    if (const auto scanned = index_file::scanner::scan(as_text(in), {})) {
        try {
            if (!same_index(*scanned, index_file::parse_dom(as_text(in), "fuzz.json"))) std::abort();
        } catch (const SMDebugError&) {
            std::abort();  // the scanner accepted what the general parser rejects
        }
    }
    // parse_into an IndexFile that held the previous input (a trial's batches reuse them) gives
    // what parse gives, or fails as it fails.
    static index_file::IndexFile reused;
    bool reused_ok = true;
    try {
        index_file::parse_into(as_text(in), "fuzz.json", {}, reused);
    } catch (const SMDebugError&) {
        reused_ok = false;
    }
    try {
        const auto f = index_file::parse(as_text(in), "fuzz.json");
        if (!reused_ok || !same_index(reused, f)) std::abort();
        // D22: whatever parses names a file inside the trial's events/ folder.
        if (f.event_file_name && !f.event_file_name->empty()) {  // empty: names no file, refused when read
            const std::string_view name = *f.event_file_name;
            if (!name.starts_with("events/") || name.find('\0') != std::string_view::npos) std::abort();
            for (std::size_t begin = 0; begin <= name.size();) {
                const auto end = std::min(name.find('/', begin), name.size());
                const auto part = name.substr(begin, end - begin);
                if (part.empty() || part == "." || part == "..") std::abort();
                begin = end + 1;
            }
        }
        (void)index_file::serialize(f);
    } catch (const SMDebugError&) {
        if (reused_ok) std::abort();
    }
}

// Manifests (compacted index): whatever decodes keeps the index files' rules (keys in order, event
// files inside events/, records within the record limit) and survives an encode/decode round trip.
void manifest_file(std::span<const std::uint8_t> in) {
    manifest::Manifest m;
    try {
        m = manifest::decode(std::as_bytes(in), "fuzz.smdm");
    } catch (const SMDebugError&) {
        return;
    }
    std::string previous;
    for (const auto& f : m.files) {
        if (f.key <= previous || !paths::parse_step_file(f.key)) std::abort();
        previous = f.key;
        if (f.index.event_file_name && !f.index.event_file_name->empty() &&
            !paths::event_file_name_problem(*f.index.event_file_name).empty())
            std::abort();
        for (const auto& t : f.index.tensors)
            if (t.length > tfrecord::max_record_bytes) std::abort();
    }
    const auto again = manifest::decode(manifest::encode(m), "fuzz-again.smdm");  // must not throw
    if (again.files.size() != m.files.size() || again.worker != m.worker || again.last_step != m.last_step) std::abort();
    for (std::size_t i = 0; i < m.files.size(); ++i)
        if (again.files[i].key != m.files[i].key || index_file::serialize(again.files[i].index) != index_file::serialize(m.files[i].index))
            std::abort();
}

void collections_json(std::span<const std::uint8_t> in) {
    try {
        const auto c = collections_file::parse(as_text(in), "fuzz_collections.json");
        (void)collections_file::serialize(c);
    } catch (const SMDebugError&) {
    }
}

// S3 response bodies: ListObjectsV2 results and Error documents, walked the way the client does.
void s3_xml(std::span<const std::uint8_t> in) {
    try {
        const net::XmlElement root = net::parse_xml(as_text(in));
        std::size_t total = 0;
        root.for_each("Contents", [&](const net::XmlElement& c) {
            total += net::percent_decode(c.child_text("Key"), true).size();
            total += c.child_text("Size").size();
        });
        root.for_each("CommonPrefixes", [&](const net::XmlElement& c) { total += net::percent_decode(c.child_text("Prefix"), true).size(); });
        total += root.child_text("Code").size() + root.child_text("Message").size();
        (void)total;
    } catch (const SMDebugError&) {
    }
}

// The SNS answers the AWS rule actions read (AWS Query protocol XML): CreateTopic's TopicArn and
// ListSubscriptions' members and NextToken, walked as message_action does.
void aws_query_xml(std::span<const std::uint8_t> in) {
    const auto text = as_text(in);
    std::size_t total = 0;
    try {
        total += net::parse_sns_topic_arn(text).size();
    } catch (const SMDebugError&) {
    }
    try {
        const auto page = net::parse_sns_subscriptions(text);
        for (const auto& s : page.subscriptions) total += s.protocol.size() + s.topic_arn.size() + s.endpoint.size();
        total += page.next_token.size();
    } catch (const SMDebugError&) {
    }
    (void)total;
}

// An HTTP/1.1 response stream. The first two bytes pick how the "socket" splits the stream
// (1..256 bytes per read) and whether the request was a HEAD; limits are small so that their
// checks are reached. A second response on the same stream is read when the first one leaves the
// connection reusable.
struct MemoryConnection {
    std::string_view data;
    std::size_t chunk = 1;
    boost::asio::awaitable<std::size_t> read_some(void* out, std::size_t n, const std::string&) {
        const std::size_t k = std::min({n, chunk, data.size()});
        std::memcpy(out, data.data(), k);
        data.remove_prefix(k);
        co_return k;
    }
};
// Reads up to four responses from one connection, as the client does (the reader is a coroutine;
// the memory connection never suspends, so the context runs it to the end at once).
boost::asio::awaitable<void> read_responses(MemoryConnection& conn, const net::HttpClientOptions& opts, bool head) {
    for (int n = 0; n < 4; ++n) {
        net::detail::BasicResponseReader<MemoryConnection> reader(conn, opts, "GET http://fuzz/key");
        const auto resp = co_await reader.read(head);
        (void)resp.body.size();
        if (!reader.reusable || conn.data.empty()) break;
    }
}
void http_response(std::span<const std::uint8_t> in) {
    if (in.size() < 2) return;
    MemoryConnection conn{as_text(in.subspan(2)), std::size_t{in[0]} + 1};
    const bool head = in[1] & 1;
    net::HttpClientOptions opts;
    opts.max_header_bytes = 4096;
    opts.max_body_bytes = 1u << 20;
    boost::asio::io_context ioc(1);
    auto done = boost::asio::co_spawn(ioc, read_responses(conn, opts, head), boost::asio::use_future);
    ioc.run();
    try {
        done.get();
    } catch (const SMDebugError&) {
    }
}

// ~/.aws/config and ~/.aws/credentials (the first byte picks the format).
void aws_profile(std::span<const std::uint8_t> in) {
    if (in.empty()) return;
    try {
        const auto f = net::ProfileFile::parse_text(as_text(in.subspan(1)), in[0] & 1, "fuzz-config");
        (void)f.get("default", "region");
        (void)f.get("fuzz", "aws_access_key_id");
    } catch (const SMDebugError&) {
    }
}

// The JSON documents of the container / IMDS credential endpoints (and their Expiration dates).
void credentials_json(std::span<const std::uint8_t> in) {
    try {
        (void)net::detail::parse_credentials_json(as_text(in), "fuzz", "http://169.254.170.2/creds");
    } catch (const SMDebugError&) {
    }
    (void)net::detail::parse_iso8601(as_text(in));
}

// The JSON hook configuration, with its parameter strings (save_steps "1,2,3", save_interval,
// reductions "max,norm", include_regex lists...).
void hook_config(std::span<const std::uint8_t> in) {
    try {
        const auto cfg = parse_hook_config(as_text(in), "fuzz_hook.json");
        (void)cfg.options.collections.size();
    } catch (const SMDebugError&) {
    }
}

// Names that come from listings and users: step / collections file keys, s3:// and http(s) URLs.
void names(std::span<const std::uint8_t> in) {
    const auto text = as_text(in);
    (void)paths::parse_step_file(text);
    (void)paths::parse_collections_file(text);
    (void)paths::deserialize_worker(text);
    try {
        (void)net::percent_decode(text, false);
    } catch (const SMDebugError&) {
    }
    try {
        (void)parse_s3_url(text);
    } catch (const SMDebugError&) {
    }
    try {
        const auto u = net::Url::parse(text);
        (void)u.str();
    } catch (const SMDebugError&) {
    }
}

// Rule parameter strings: the first line names a built-in rule, every further line is one
// key=value parameter. They are checked as make_rule parses them (validate_rule_params); when they
// pass, every pattern of a regex parameter is matched against tensor names, as the rule does at
// each step through Trial::tensor_names.
void rule_params(std::span<const std::uint8_t> in) {
    const auto text = as_text(in);
    const auto first_end = std::min(text.find('\n'), text.size());
    const std::string_view name = text.substr(0, first_end);
    RuleParams params;
    try {
        for (std::size_t start = first_end + 1; start <= text.size();) {
            const auto end = std::min(text.find('\n', start), text.size());
            if (end > start) params.set_assignment(text.substr(start, end - start));
            start = end + 1;
        }
        (void)validate_rule_params(name, params);
    } catch (const SMDebugError&) {
        return;
    }
    static const std::string tensor_names[] = {
        "gradients/dense_1/kernel:0", "relu_output_0", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "CrossEntropyLoss_output_0", "hybridsequential0_input_0"};
    for (const auto& [key, value] : params.values()) {
        if (!detail::is_regex_parameter(key)) continue;
        detail::CompiledRegex re;
        for (const auto& pattern : split_list(value)) re.add(pattern);
        for (const auto& n : tensor_names) (void)re.search(n);
    }
}

// Index ingestion (StepIndex, what opening a trial builds from its index files and manifests)
// against a model that searches every step for every record: the bytes are a sequence of index
// files — global step, worker, mode, mode step, then entries (tensor, and whether it is a shape
// entry or a stored reduction) — in any order, repeated, empty. Every (tensor, mode, mode step)
// must hold the model's records: workers in first-reading order, each updated in place by later
// files; each global step the model's workers and tensors.
void index_ingest(std::span<const std::uint8_t> in) {
    struct Record {
        int worker;
        std::optional<std::uint64_t> start, max_start;
        bool shape = false;
    };
    std::map<std::tuple<int, int, std::int64_t>, std::vector<Record>> model;  // (tensor, mode, mode step)
    std::map<std::int64_t, std::set<int>> workers_of_step;
    std::map<std::int64_t, std::set<int>> tensors_of_step;
    detail::StepIndex index;
    const auto worker_name = [](int w) { return "worker_" + std::to_string(w); };
    const auto tensor_name = [](int t) { return "t" + std::to_string(t); };
    std::size_t at = 0;
    for (std::uint64_t file_number = 0; at + 5 <= in.size() && file_number < 256; ++file_number) {
        const std::int64_t g = in[at] % 12;
        const int worker = in[at + 1] % 5;
        const int mode = in[at + 2] % 4;  // mode_index
        const std::int64_t ms = in[at + 3] % 8;
        const std::size_t entries = std::min<std::size_t>(in[at + 4] % 6, in.size() - at - 5);
        index_file::IndexFile f;
        f.mode = all_modes[static_cast<std::size_t>(mode)];
        f.mode_step = ms;
        f.event_file_name = "events/e" + std::to_string(g) + ".tfevents";
        std::vector<std::pair<int, std::uint8_t>> shape_entries;
        for (std::size_t k = 0; k < entries; ++k) {
            const std::uint8_t b = in[at + 5 + k];
            const int t = b & 3;
            const std::uint64_t start = file_number * 100 + k;
            if (b & 4) {
                f.shapes.push_back({tensor_name(t), tensor_name(t), {static_cast<std::int64_t>(k)}});
                shape_entries.emplace_back(t, b);
            } else if (b & 8) {
                f.tensors.push_back({"smdebug/reductions/max/" + tensor_name(t), start, 40});
            } else {
                f.tensors.push_back({tensor_name(t), start, 40});
            }
        }
        at += 5 + entries;
        index.ingest(g, worker_name(worker), f);
        if (entries == 0) continue;  // registers nothing
        workers_of_step[g].insert(worker);
        auto record = [&](int t) -> Record& {
            auto& records = model[{t, mode, ms}];
            for (auto& r : records)
                if (r.worker == worker) return r;
            return records.emplace_back(Record{worker, {}, {}});
        };
        for (std::size_t k = 0, n = 0; k < entries; ++k) {  // tensor entries first, in order, then shapes
            const std::uint8_t b = in[at - entries + k];
            if (b & 4) continue;
            auto& r = record(b & 3);
            (b & 8 ? r.max_start : r.start) = f.tensors[n++].start;
            tensors_of_step[g].insert(b & 3);
        }
        for (const auto& [t, b] : shape_entries) {
            record(t).shape = true;
            tensors_of_step[g].insert(t);
        }
    }
    // The index holds exactly the model's records, in its order.
    std::size_t records = 0;
    for (int t = 0; t < 4; ++t) {
        const auto* data = index.find_tensor(tensor_name(t));
        for (int mode = 0; mode < 4; ++mode) {
            std::vector<std::int64_t> model_steps;
            for (const auto& [key, rs] : model)
                if (std::get<0>(key) == t && std::get<1>(key) == mode) model_steps.push_back(std::get<2>(key));
            if (!data) {
                if (!model_steps.empty()) std::abort();
                continue;
            }
            std::size_t step = 0;
            for (const auto& [ms, workers] : data->steps[static_cast<std::size_t>(mode)]) {
                if (step == model_steps.size() || model_steps[step] != ms) std::abort();
                const auto& expected = model.at({t, mode, ms});
                if (workers.size() != expected.size()) std::abort();
                for (std::size_t k = 0; k < expected.size(); ++k) {
                    const auto& e = workers[k];
                    const auto& r = expected[k];
                    const auto& d = e.data();
                    const auto* max = d.reduction("max", false);
                    if (*e.worker != worker_name(r.worker) || e.mode_step != ms || d.location.has_value() != r.start.has_value() ||
                        (r.start && d.location->start != *r.start) || (max != nullptr) != r.max_start.has_value() ||
                        (max && max->start != *r.max_start) || (d.shape != nullptr) != r.shape)
                        std::abort();
                }
                records += expected.size();
                ++step;
            }
            if (step != model_steps.size()) std::abort();
            if (!data->steps[static_cast<std::size_t>(mode)].find(8).empty()) std::abort();  // mode steps are 0..7
        }
    }
    std::size_t model_records = 0;
    for (const auto& [key, rs] : model) model_records += rs.size();
    if (records != model_records) std::abort();
    for (std::int64_t g = 0; g < 12; ++g) {
        const auto w = workers_of_step.find(g);
        if (index.worker_count(g) != (w == workers_of_step.end() ? 0 : static_cast<int>(w->second.size()))) std::abort();
        std::set<int> tensors;
        if (const auto* list = index.tensors_of_step(g))
            for (const auto* t : *list) tensors.insert(t->name[1] - '0');
        const auto expected = tensors_of_step.find(g);
        if (tensors != (expected == tensors_of_step.end() ? std::set<int>{} : expected->second)) std::abort();
    }
}

}  // namespace

const Target targets[] = {
    {"event_record", event_record},   {"index_file", index_json},         {"collections_file", collections_json},
    {"s3_xml", s3_xml},               {"http_response", http_response},   {"aws_profile", aws_profile},
    {"credentials_json", credentials_json}, {"hook_config", hook_config}, {"names", names},
    {"rule_params", rule_params},     {"manifest", manifest_file},
    {"aws_query_xml", aws_query_xml}, {"index_ingest", index_ingest},
};
const std::size_t target_count = std::size(targets);

}  // namespace smdebug::fuzz
