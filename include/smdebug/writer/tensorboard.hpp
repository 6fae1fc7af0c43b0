#pragma once
// TensorBoard export (docs/format.md §11, §9.3): histogram summaries (HistogramProto, binned like the
// reference's numpy code over TensorFlow's default buckets) and scalar summaries (simple_value),
// written to <tb dir>/<MODE>/{step:012d}_{pid}_{hostname}.tfevents with REAL payload CRCs, one
// file per saved step, no index, no file_version record. `smdebug export --format tensorboard`
// builds TensorBoard-native runs from the same events (with file_version_event and plugin metadata).
#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstring>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event_encode.hpp>
#include <smdebug/format/detail/event_fields.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/protobuf.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug::tensorboard {

struct Histogram {
    double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
    std::vector<double> bucket_limit;  // right edge of each bucket
    std::vector<double> bucket;        // count of each bucket
};

// TensorFlow's default bucket edges: -1e20..-1e-12, 0, 1e-12..1e20, growing by a factor 1.1.
inline const std::vector<double>& default_bucket_edges() {
    static const std::vector<double> edges = [] {
        std::vector<double> pos;
        for (double v = 1e-12; v < 1e20; v *= 1.1) pos.push_back(v);
        std::vector<double> e;
        e.reserve(2 * pos.size() + 1);
        for (auto it = pos.rbegin(); it != pos.rend(); ++it) e.push_back(-*it);
        e.push_back(0.0);
        e.insert(e.end(), pos.begin(), pos.end());
        return e;
    }();
    return edges;
}

// The histogram of a numeric tensor, as smdebug's summary.py builds it: numpy.histogram over
// `edges` (half-open bins, the last one closed; values outside, NaN and ±inf are not counted),
// then trimmed to the occupied range with one empty bucket on the left. Nothing for empty,
// bool, string or complex tensors, or when no value falls into a bucket.
inline std::optional<Histogram> make_histogram(const TensorValue& value, const std::vector<double>& edges = default_bucket_edges()) {
    if (value.is_string() || value.empty() || value.dtype() == DType::boolean || value.dtype() == DType::complex64 ||
        value.dtype() == DType::complex128 || edges.size() < 2)
        return std::nullopt;
    std::vector<double> counts(edges.size() - 1, 0.0);
    Histogram h;
    h.num = static_cast<double>(value.size());
    visit_dtype(value.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>>) {
            const auto e = value.elements<T>();
            double mn = 0, mx = 0, sum = 0, sq = 0;
            for (std::size_t i = 0; i < e.size(); ++i) {
                const double x = std::is_same_v<T, float16> ? static_cast<double>(static_cast<float>(e[i])) : static_cast<double>(e[i]);
                if (i == 0) mn = mx = x;
                else if (std::isnan(x) || std::isnan(mn)) mn = mx = std::nan("");
                else { mn = std::min(mn, x); mx = std::max(mx, x); }
                sum += x;
                sq += x * x;
                if (!(x >= edges.front() && x <= edges.back())) continue;
                auto idx = static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin());
                counts[idx >= edges.size() ? counts.size() - 1 : idx - 1] += 1;
            }
            h.min = mn;
            h.max = mx;
            h.sum = sum;
            h.sum_squares = sq;
        }
    });
    const auto first = std::find_if(counts.begin(), counts.end(), [](double c) { return c > 0; });
    if (first == counts.end()) return std::nullopt;
    const std::size_t start = static_cast<std::size_t>(first - counts.begin());
    const std::size_t end = static_cast<std::size_t>(counts.rend() - std::find_if(counts.rbegin(), counts.rend(), [](double c) { return c > 0; }));
    if (start == 0) h.bucket.push_back(0.0);
    h.bucket.insert(h.bucket.end(), counts.begin() + static_cast<std::ptrdiff_t>(start == 0 ? 0 : start - 1),
                    counts.begin() + static_cast<std::ptrdiff_t>(end));
    h.bucket_limit.assign(edges.begin() + static_cast<std::ptrdiff_t>(start), edges.begin() + static_cast<std::ptrdiff_t>(end + 1));
    return h;
}

// TensorFlow's tag cleaning: characters outside [-/\w.] become '_', leading '/' are dropped.
inline std::string clean_tag(std::string_view name) {
    std::string out;
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        const bool ok = u >= 0x80 || std::isalnum(u) || c == '_' || c == '-' || c == '/' || c == '.';
        out.push_back(ok ? c : '_');
    }
    const auto first = out.find_first_not_of('/');
    return first == std::string::npos ? std::string() : out.substr(first);
}

namespace detail {
inline void double_if_set(proto::Writer& w, std::uint32_t number, double d) {
    if (std::bit_cast<std::uint64_t>(d) != 0) w.field_double(number, d);  // proto3: zero is omitted
}
inline void packed_doubles(proto::Writer& w, std::uint32_t number, const std::vector<double>& v) {
    if (v.empty()) return;
    std::string bytes(v.size() * 8, '\0');
    std::memcpy(bytes.data(), v.data(), bytes.size());
    w.field_bytes(number, bytes);
}
// Event{wall_time, step, summary{value{tag, <fields written by fill_value>}}}.
template <class F>
std::string summary_event(double wall_time, std::int64_t step, std::string_view tag, F&& fill_value) {
    std::string value_fields;
    proto::Writer v(value_fields);
    fill_value(v);
    const event::SummaryEnvelope envelope(wall_time, step, tag, value_fields.size());
    std::string out;
    out.reserve(envelope.size());
    proto::Writer w(out);
    envelope.append_head(w);
    out += value_fields;
    return out;
}

// SummaryMetadata{plugin_data{plugin_name}} (e.g. "scalars", "histograms"); nothing when empty.
inline void plugin_metadata(proto::Writer& v, std::string_view plugin_name) {
    if (plugin_name.empty()) return;
    v.field_message(tf_proto::SummaryValue::metadata, [&](proto::Writer& m) {
        m.field_message(tf_proto::SummaryMetadata::plugin_data,
                        [&](proto::Writer& p) { p.field_bytes(tf_proto::PluginData::plugin_name, plugin_name); });
    });
}
}  // namespace detail

// Event{wall_time, step, summary{value{tag, histo[, metadata{plugin_data{plugin_name}}]}}}.
inline std::string histogram_event(std::string_view tag, const Histogram& h, std::int64_t step, double wall_time,
                                   std::string_view plugin_name = {}) {
    return detail::summary_event(wall_time, step, tag, [&](proto::Writer& v) {
        using H = tf_proto::HistogramProto;
        v.field_message(tf_proto::SummaryValue::histo, [&](proto::Writer& hp) {
            detail::double_if_set(hp, H::min, h.min);
            detail::double_if_set(hp, H::max, h.max);
            detail::double_if_set(hp, H::num, h.num);
            detail::double_if_set(hp, H::sum, h.sum);
            detail::double_if_set(hp, H::sum_squares, h.sum_squares);
            detail::packed_doubles(hp, H::bucket_limit, h.bucket_limit);
            detail::packed_doubles(hp, H::bucket, h.bucket);
        });
        detail::plugin_metadata(v, plugin_name);
    });
}

// Event{wall_time, step, summary{value{tag, simple_value[, metadata{plugin_data{plugin_name}}]}}}.
inline std::string scalar_event(std::string_view tag, float value, std::int64_t step, double wall_time, std::string_view plugin_name = {}) {
    return detail::summary_event(wall_time, step, tag, [&](proto::Writer& v) {
        v.field_float(tf_proto::SummaryValue::simple_value, value);
        detail::plugin_metadata(v, plugin_name);
    });
}

// Event{wall_time, file_version: "brain.Event:2"}: the first record TensorFlow writes to an event file.
inline std::string file_version_event(double wall_time) {
    std::string out;
    proto::Writer w(out);
    w.field_double(tf_proto::Event::wall_time, wall_time);
    w.field_bytes(tf_proto::Event::file_version, "brain.Event:2");
    return out;
}

inline std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
    return buf;
}

// "<MODE>/{step:012d}_{pid}_{hostname}.tfevents", relative to the TensorBoard folder.
inline std::string file_key(Mode mode, std::int64_t global_step) {
    static const std::string worker = std::to_string(::getpid()) + "_" + host_name();
    return std::string(mode_name(mode)) + "/" + paths::step_digits(global_step, 12) + "_" + worker + ".tfevents";
}

// Buffers one step's summaries; seal() turns them into that step's file, flush() writes the
// sealed files in order. A file that fails to write stays queued for the next flush().
class Writer {
public:
    Writer(AnyStore store, std::string prefix) : store_(std::move(store)), prefix_(std::move(prefix)) {}

    void begin_step(Mode mode, std::int64_t global_step) {
        seal();
        mode_ = mode;
        step_ = global_step;
    }
    void add_histogram(std::string_view tag, const TensorValue& value, double wall_time) {
        if (auto h = make_histogram(value))
            tfrecord::append(buffer_, histogram_event(clean_tag(tag), *h, step_, wall_time), tfrecord::Footer::payload_crc);
    }
    void add_scalar(std::string_view tag, double value, double wall_time) {
        tfrecord::append(buffer_, scalar_event(clean_tag(tag), static_cast<float>(value), step_, wall_time), tfrecord::Footer::payload_crc);
    }

    void seal() {
        if (buffer_.empty()) return;
        pending_.emplace_back(prefix_ + file_key(mode_, step_), std::move(buffer_));
        buffer_.clear();
    }
    void flush() {
        while (!pending_.empty()) {
            const auto& [key, bytes] = pending_.front();
            store_.write(key, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
            pending_.pop_front();
        }
    }
    std::size_t pending_files() const noexcept { return pending_.size() + (buffer_.empty() ? 0 : 1); }

private:
    AnyStore store_;
    std::string prefix_;
    Mode mode_ = Mode::GLOBAL;
    std::int64_t step_ = 0;
    std::string buffer_;
    std::deque<std::pair<std::string, std::string>> pending_;
};

}  // namespace smdebug::tensorboard
