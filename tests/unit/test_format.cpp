// Format and storage layers: CRC32C, TFRecord framing, protobuf/Event decoding of every dtype,
// index and collections JSON, file names, LocalStore — including corrupt and hostile input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/crc32c.hpp>
#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/trial_settings.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/writer/step_writer.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_format {

using namespace smdebug;

namespace {

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

std::string hex_to_bytes(std::string_view hex) {
    std::string out;
    for (std::size_t i = 0; i < hex.size();) {
        if (hex[i] == ' ' || hex[i] == '\n') { ++i; continue; }
        out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
        i += 2;
    }
    return out;
}

std::uint32_t le32(std::string_view hex) {
    const auto b = hex_to_bytes(hex);
    std::uint32_t v;
    std::memcpy(&v, b.data(), 4);
    return v;
}

// Decodes one framed record held in `record` (which must outlive the value).
event::DecodedEvent decode_record(const std::string& record) {
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(record));
    const auto r = tfrecord::parse(buf->bytes(), "test.tfevents");
    return event::decode(buf, r.payload, "test.tfevents");
}

template <class T>
TensorValue make_value(std::vector<T> v, Shape shape) {
    return TensorValue::from<T>(std::span<const T>(v.data(), v.size()), std::move(shape));
}

}  // namespace

TEST_CASE("crc32c known answers", "[format][crc]") {
    CHECK(crc32c("123456789") == 0xE3069283u);
    CHECK(crc32c("") == 0u);
    // docs/format.md §3 masked vectors
    const char zero8[8] = {};
    CHECK(masked_crc32c(std::as_bytes(std::span<const char>(zero8, 8))) == le32("29 03 98 07"));
    std::uint64_t one = 1, len72 = 72, len134 = 134;
    CHECK(masked_crc32c(std::as_bytes(std::span(&one, 1))) == le32("01 75 de 41"));
    CHECK(masked_crc32c(std::as_bytes(std::span(&len72, 1))) == le32("fe 92 48 9d"));
    CHECK(masked_crc32c(std::as_bytes(std::span(&len134, 1))) == le32("70 01 1d 5c"));
    CHECK(masked_crc32c(bytes_of("0x12345678")) == 0x062DC0B3u);
    CHECK(masked_crc32c(bytes_of("")) == le32("d8 ea 82 a2"));
}

TEST_CASE("crc32c hardware and portable paths agree at every length and alignment", "[format][crc]") {
    std::vector<std::byte> data(70000);
    std::mt19937 rng(7);
    for (auto& b : data) b = static_cast<std::byte>(rng());
    for (std::size_t len : {0u, 1u, 7u, 8u, 9u, 63u, 4096u, 12287u, 12288u, 12289u, 36864u, 50000u, 69990u})
        for (std::size_t off : {0u, 1u, 3u}) {
            const auto s = std::span<const std::byte>(data).subspan(off, len);
            INFO("len " << len << " offset " << off);
            CHECK(crc32c(s) == crc32c_portable(s));
        }
}

TEST_CASE("docs/format.md §3.2 annotated record decodes and re-encodes byte for byte", "[format][event]") {
    const std::string record = hex_to_bytes(
        "48 00 00 00 00 00 00 00 fe 92 48 9d 09 00 00 20 40 fc 54 d9 41 10 05 2a 3b 0a 39 0a 01 77 42 17 08 01"
        "12 09 12 07 08 02 12 03 77 5f 32 22 08 00 00 80 3f 00 00 00 c0 4a 1b 0a 0e 0a 09 6d 6f 64 65 5f 73 74"
        "65 70 12 01 32 0a 09 0a 04 6d 6f 64 65 12 01 31 b3 c0 2d 06");
    REQUIRE(record.size() == 88);
    const auto ev = decode_record(record);
    CHECK(ev.tag == "w");
    CHECK(ev.step == 5);
    CHECK(ev.wall_time == 1700000000.5);
    CHECK(ev.mode == Mode::TRAIN);
    CHECK(ev.mode_step == 2);
    REQUIRE(ev.value.dtype() == DType::float32);
    CHECK(ev.value.shape() == Shape{2});
    CHECK(ev.value.elements<float>()[0] == 1.0f);
    CHECK(ev.value.elements<float>()[1] == -2.0f);

    std::string encoded;
    tfrecord::append(encoded, event::encode("w", make_value<float>({1.0f, -2.0f}, {2}), 5, 1700000000.5, Mode::TRAIN, 2));
    CHECK(encoded == record);
}

TEMPLATE_TEST_CASE("every numeric dtype round-trips through Event encoding", "[format][event]", float, double,
                   std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
                   std::uint64_t) {
    std::vector<TestType> v = {std::numeric_limits<TestType>::lowest(), TestType(0), TestType(1),
                               std::numeric_limits<TestType>::max(), TestType(3), TestType(5)};
    std::string rec;
    tfrecord::append(rec, event::encode("t", make_value(v, {2, 3}), 0, 1.0, Mode::GLOBAL, 0));
    const auto ev = decode_record(rec);
    REQUIRE(ev.value.dtype() == dtype_of_v<TestType>);
    CHECK(ev.value.shape() == Shape{2, 3});
    const auto got = ev.value.template elements<TestType>();
    CHECK(std::vector<TestType>(got.begin(), got.end()) == v);
    // the zero-copy view is an xtensor expression over the same elements
    const auto view = ev.value.template view<TestType>();
    CHECK(view(1, 0) == v[3]);
    CHECK(view.shape()[1] == 3);
}

TEST_CASE("float16, bool, complex, strings, 0-d and empty tensors round-trip", "[format][event]") {
    SECTION("float16") {
        std::vector<float16> h = {float16(1.0f), float16(-2.5f), float16(65504.0f), float16::from_bits(0x0001)};
        std::string rec;
        tfrecord::append(rec, event::encode("h", make_value(h, {4}), 3, 1.0, Mode::EVAL, 1));
        const auto ev = decode_record(rec);
        REQUIRE(ev.value.dtype() == DType::float16);
        const auto e = ev.value.elements<float16>();
        CHECK(static_cast<float>(e[0]) == 1.0f);
        CHECK(static_cast<float>(e[1]) == -2.5f);
        CHECK(static_cast<float>(e[2]) == 65504.0f);
        CHECK(static_cast<float>(e[3]) == std::ldexp(1.0f, -24));
        CHECK(ev.mode == Mode::EVAL);
    }
    SECTION("bool") {
        std::string rec;
        const bool b[] = {true, false, true};
        tfrecord::append(rec, event::encode("b", TensorValue::from<bool>(b, {3}), 0, 1.0, Mode::GLOBAL, 0));
        const auto ev = decode_record(rec);
        REQUIRE(ev.value.dtype() == DType::boolean);
        CHECK(ev.value.elements<bool>()[0]);
        CHECK_FALSE(ev.value.elements<bool>()[1]);
    }
    SECTION("complex128") {
        std::vector<std::complex<double>> c = {{1, 2}, {-3, 0.5}};
        std::string rec;
        tfrecord::append(rec, event::encode("c", make_value(c, {2}), 0, 1.0, Mode::GLOBAL, 0));
        const auto ev = decode_record(rec);
        REQUIRE(ev.value.dtype() == DType::complex128);
        CHECK(ev.value.elements<std::complex<double>>()[1] == std::complex<double>(-3, 0.5));
    }
    SECTION("strings are written without a dtype field") {
        std::string rec;
        const auto payload = event::encode("s", TensorValue({2}, {"hi", "ünïcode"}), 0, 1.0, Mode::GLOBAL, 0);
        tfrecord::append(rec, payload);
        const auto ev = decode_record(rec);
        REQUIRE(ev.value.is_string());
        CHECK(ev.value.strings() == std::vector<std::string>{"hi", "ünïcode"});
        CHECK(payload.find(std::string("\x08\x07", 2)) == std::string::npos);
    }
    SECTION("0-d") {
        std::string rec;
        tfrecord::append(rec, event::encode("loss", TensorValue::scalar(0.5f), 0, 1.0, Mode::GLOBAL, 0));
        const auto ev = decode_record(rec);
        CHECK(ev.value.shape().empty());
        CHECK(ev.value.size() == 1);
        CHECK(ev.value.elements<float>()[0] == 0.5f);
    }
    SECTION("empty tensors keep their shape") {
        std::string rec;
        tfrecord::append(rec, event::encode("e", make_value<float>({}, {0, 3}), 0, 1.0, Mode::GLOBAL, 0));
        const auto ev = decode_record(rec);
        CHECK(ev.value.dtype() == DType::float32);
        CHECK(ev.value.shape() == Shape{0, 3});
        CHECK(ev.value.empty());
    }
}

TEST_CASE("misaligned tensor content is realigned in place", "[format][event]") {
    // A tag of odd length shifts tensor_content to an odd offset.
    std::string rec;
    const std::vector<double> v = {1.5, -2.25, 3.0};
    tfrecord::append(rec, event::encode("abc", make_value(v, {3}), 0, 1.0, Mode::GLOBAL, 0));
    const auto ev = decode_record(rec);
    const auto e = ev.value.elements<double>();
    CHECK(reinterpret_cast<std::uintptr_t>(e.data()) % alignof(double) == 0);
    CHECK(std::vector<double>(e.begin(), e.end()) == v);
}

TEST_CASE("a typed value broadcast to a huge shape is refused by a named limit, not allocated", "[format][event]") {
    // Fuzz finding (event_record): a 124-byte record whose one float_val fills a shape of ~2^62
    // elements asked for 15 EiB. Checked in as the target's regression input.
    const auto path = std::filesystem::path(SMDEBUG_SOURCE_DIR) / "tests/fuzz/regressions/event_record/typed_value_broadcast_to_huge_shape";
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(bytes));
    CHECK_THROWS_AS(event::decode(buf, buf->bytes(), "fuzz.payload"), FormatError);
    CHECK_THROWS_WITH(event::decode(buf, buf->bytes(), "fuzz.payload"), Catch::Contains("max_broadcast_elements"));
}

namespace {
// A hand-written Event whose TensorProto holds one float_val for a shape of rows x cols: a
// broadcast record of a few dozen bytes (TensorFlow's splat; smdebug's writers never write one).
std::string varint(std::uint64_t v) {
    std::string out;
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    return out + static_cast<char>(v);
}
std::string len_field(std::uint32_t number, const std::string& bytes) { return varint(number << 3 | 2) + varint(bytes.size()) + bytes; }
std::string broadcast_event(const std::string& tag, std::uint64_t rows, std::uint64_t cols, float value, std::int64_t step) {
    std::string dim1 = len_field(2, varint(1 << 3) + varint(rows)), dim2 = len_field(2, varint(1 << 3) + varint(cols));
    std::string fbits(4, '\0');
    std::memcpy(fbits.data(), &value, 4);
    const std::string tensor = varint(1 << 3) + varint(1) + len_field(2, dim1 + dim2) + varint(5 << 3 | 5) + fbits;
    const std::string summary_value = len_field(1, tag) + len_field(8, tensor);
    return varint(2 << 3) + varint(static_cast<std::uint64_t>(step)) + len_field(5, len_field(1, summary_value));
}
}  // namespace

TEST_CASE("a broadcast record is described without expanding it, and expanded only within the budget", "[format][event][reliability]") {
    const std::string payload = broadcast_event("bcast", 2048, 2048, 1.5f, 3);  // 4 Mi elements from 4 bytes
    const auto bytes = bytes_of(payload);
    const auto d = event::describe(bytes, "e.tfevents");
    CHECK(d.tag == "bcast");
    CHECK(d.step == 3);
    CHECK(d.dtype == DType::float32);
    CHECK(d.shape == Shape{2048, 2048});
    CHECK(d.byte_size == std::size_t{2048} * 2048 * 4);
    CHECK(event::detail::max_broadcast_elements == std::size_t{1} << 20);
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(payload));
    try {
        (void)event::decode(buf, buf->bytes(), "e.tfevents");
        FAIL("a broadcast over the budget was expanded");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Contains("e.tfevents") && Catch::Contains("'bcast'") && Catch::Contains("(2048, 2048)") &&
                                 Catch::Contains("expansion budget of 1048576"));
    }
    const auto ev = event::decode(buf, buf->bytes(), "e.tfevents", std::size_t{1} << 23);  // raised: the same record decodes
    REQUIRE(ev.value.size() == 2048u * 2048u);
    CHECK(ev.value.elements<float>()[0] == 1.5f);
    CHECK(ev.value.elements<float>()[2048 * 2048 - 1] == 1.5f);
    // Lowered: a record within the default is refused, by decode_value (the reader's) as by decode.
    const std::string small = broadcast_event("small", 64, 64, 2.5f, 4);
    auto small_buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(small));
    CHECK(event::decode(small_buf, small_buf->bytes(), "s.tfevents").value.size() == 64u * 64u);
    CHECK_THROWS_AS(event::decode(small_buf, small_buf->bytes(), "s.tfevents", 1000), FormatError);
    CHECK_THROWS_WITH(event::decode(small_buf, small_buf->bytes(), "s.tfevents", 1000),
                      Catch::Contains("s.tfevents") && Catch::Contains("'small'") && Catch::Contains("expansion budget of 1000 elements") &&
                          Catch::Contains("TrialOptions::max_expanded_elements"));
    std::string seen_tag;
    CHECK_THROWS_AS(event::decode_value(*small_buf, small_buf, small_buf->bytes(), "s.tfevents",
                                        [&](std::string_view tag, std::int64_t) { seen_tag = tag; }, 4095),
                    FormatError);
    CHECK(seen_tag == "small");
    CHECK(event::decode_value(*small_buf, small_buf, small_buf->bytes(), "s.tfevents", [](std::string_view, std::int64_t) {}, 4096)
              .size() == 64u * 64u);
}

TEST_CASE("the expansion budget is TrialOptions::max_expanded_elements; SMDEBUG_MAX_EXPANDED_ELEMENTS is only its default",
          "[format][event][reliability][env]") {
    const std::string payload = broadcast_event("bcast", 64, 64, 1.5f, 0);  // 4096 elements from 4 bytes
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(payload));
    auto budget = [](const TrialOptions& o) { return smdebug::detail::TrialSettings(o).max_expanded_elements; };
    TrialOptions in_code;
    in_code.max_expanded_elements = 1000;
    {
        test::ScopedEnv env("SMDEBUG_MAX_EXPANDED_ELEMENTS", nullptr);
        CHECK(budget({}) == event::detail::max_broadcast_elements);
        CHECK(budget(in_code) == 1000);
        // The option set in code limits the record: a FormatError naming the file and the budget.
        CHECK_THROWS_AS(event::decode(buf, buf->bytes(), "events/e.tfevents", budget(in_code)), FormatError);
        CHECK_THROWS_WITH(event::decode(buf, buf->bytes(), "events/e.tfevents", budget(in_code)),
                          Catch::Contains("events/e.tfevents") && Catch::Contains("'bcast'") && Catch::Contains("expansion budget of 1000"));
    }
    {
        test::ScopedEnv env("SMDEBUG_MAX_EXPANDED_ELEMENTS", "4000");
        CHECK(budget({}) == 4000);        // the default comes from the environment ...
        CHECK(budget(in_code) == 1000);   // ... and an option set in code wins over it
        in_code.max_expanded_elements = 5000;
        CHECK(budget(in_code) == 5000);
        CHECK_THROWS_AS(event::decode(buf, buf->bytes(), "events/e.tfevents", budget({})), FormatError);
        CHECK(event::decode(buf, buf->bytes(), "events/e.tfevents", budget(in_code)).value.size() == 4096u);
    }
    for (const char* ignored : {"0", "-5", "lots", ""}) {
        INFO(ignored);
        test::ScopedEnv env("SMDEBUG_MAX_EXPANDED_ELEMENTS", ignored);
        CHECK(budget({}) == event::detail::max_broadcast_elements);
    }
}

TEST_CASE("TFRecord framing rejects corrupt and truncated records with typed errors naming the file", "[format][tfrecord]") {
    std::string rec;
    tfrecord::append(rec, event::encode("w", make_value<float>({1, 2}, {2}), 1, 1.0, Mode::GLOBAL, 1));
    auto parse = [](const std::string& r) { return tfrecord::parse(bytes_of(r), "events/x.tfevents"); };
    REQUIRE_NOTHROW(parse(rec));

    SECTION("length CRC") {
        auto bad = rec;
        bad[8] ^= 1;
        CHECK_THROWS_AS(parse(bad), RecordCorrupted);
        CHECK_THROWS_WITH(parse(bad), Catch::Contains("events/x.tfevents") && Catch::Contains("length CRC"));
    }
    SECTION("payload CRC: neither the smdebug constant nor the real CRC") {
        auto bad = rec;
        bad[bad.size() - 1] ^= 0x40;
        CHECK_THROWS_AS(parse(bad), RecordCorrupted);
    }
    SECTION("a real payload CRC footer (TensorBoard style) is verified and accepted") {
        std::string tb;
        tfrecord::append(tb, event::encode("w", make_value<float>({1, 2}, {2}), 1, 1.0, Mode::GLOBAL, 1), tfrecord::Footer::payload_crc);
        CHECK(parse(tb).payload_verified);
        tb[20] ^= 1;  // payload damage is now detected
        CHECK_THROWS_AS(parse(tb), RecordCorrupted);
    }
    SECTION("truncated header, payload and footer") {
        CHECK_THROWS_AS(parse(rec.substr(0, 5)), TruncatedData);
        CHECK_THROWS_AS(parse(rec.substr(0, 30)), TruncatedData);
        CHECK_THROWS_AS(parse(rec.substr(0, rec.size() - 1)), TruncatedData);
    }
    SECTION("a huge declared length does not allocate or crash") {
        auto bad = rec;
        const std::uint64_t huge = ~0ull;
        std::memcpy(bad.data(), &huge, 8);
        const auto crc = masked_crc32c(bytes_of(std::string_view(bad.data(), 8)));
        std::memcpy(bad.data() + 8, &crc, 4);
        CHECK_THROWS_AS(parse(bad), TruncatedData);
    }
}

TEST_CASE("hostile protobuf payloads raise FormatError", "[format][protobuf]") {
    auto decode_payload = [](std::string payload) {
        std::string rec;
        tfrecord::append(rec, payload);
        return decode_record(rec);
    };
    CHECK_THROWS_AS(decode_payload(std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)), FormatError);  // 11-byte varint
    CHECK_THROWS_AS(decode_payload(std::string("\x10\xff", 2)), FormatError);                                         // truncated varint
    CHECK_THROWS_AS(decode_payload(std::string("\x2a\x7f\x00", 3)), FormatError);                                     // LEN past end
    CHECK_THROWS_AS(decode_payload(std::string("\x0b", 1)), FormatError);                                             // group wire type
    CHECK_THROWS_AS(decode_payload(std::string("\x10\x05", 2)), FormatError);                                         // no tensor
    // tensor_content whose size does not match the shape (3 floats declared, 8 bytes given)
    std::string mismatched;
    proto::Writer w(mismatched);
    w.field_message(5, [](proto::Writer& summary) {
        summary.field_message(1, [](proto::Writer& v) {
            v.field_bytes(1, "t");
            v.field_message(8, [](proto::Writer& t) {
                t.field_varint(1, 1);
                t.field_message(2, [](proto::Writer& shape) { shape.field_message(2, [](proto::Writer& d) { d.field_varint(1, 3); }); });
                t.field_bytes(4, std::string(8, '\0'));
            });
        });
    });
    CHECK_THROWS_WITH(decode_payload(mismatched), Catch::Contains("tensor_content has 8 bytes"));
    CHECK_THROWS_WITH(decode_payload(std::string("\x10\xff", 2)), Catch::Contains("test.tfevents"));
}

TEST_CASE("an Event's first Summary.Value with a tensor is decoded alone: nothing of a Value before it, last fields win", "[format][protobuf]") {
    auto decode_payload = [](const std::string& payload) {
        std::string rec;
        tfrecord::append(rec, payload);
        return decode_record(rec);
    };
    auto plugin = [](proto::Writer& meta, std::string_view name, std::string_view content) {
        meta.field_message(1, [&](proto::Writer& pd) {
            pd.field_bytes(1, name);
            pd.field_bytes(2, content);
        });
    };
    auto tensor = [](proto::Writer& t, std::uint64_t dim, float fill) {
        t.field_varint(1, 1);  // DT_FLOAT
        t.field_message(2, [&](proto::Writer& shape) { shape.field_message(2, [&](proto::Writer& d) { d.field_varint(1, dim); }); });
        t.field_bytes(4, std::string(reinterpret_cast<const char*>(std::vector<float>(dim, fill).data()), dim * 4));
    };
    std::string payload;
    proto::Writer w(payload);
    w.field_varint(2, 9);  // Event.step
    w.field_message(5, [&](proto::Writer& summary) {
        summary.field_message(1, [&](proto::Writer& v) {  // no tensor: skipped, its tag and mode with it
            v.field_bytes(1, "skipped");
            v.field_message(9, [&](proto::Writer& meta) { plugin(meta, "mode", "2"); plugin(meta, "mode_step", "40"); });
        });
        summary.field_message(1, [&](proto::Writer& v) {
            v.field_bytes(1, "kept");
            v.field_message(8, [&](proto::Writer& t) { tensor(t, 5, 1.0f); });
            v.field_message(8, [&](proto::Writer& t) {  // a second tensor field replaces the first whole
                t.field_message(2, [&](proto::Writer& shape) { shape.field_message(2, [&](proto::Writer& d) { d.field_varint(1, 7); }); });
                tensor(t, 3, 2.5f);  // and its second shape replaces its first
            });
        });
    });
    const auto ev = decode_payload(payload);
    CHECK(ev.step == 9);
    CHECK(ev.tag == "kept");
    CHECK_FALSE(ev.mode.has_value());
    CHECK_FALSE(ev.mode_step.has_value());
    REQUIRE(ev.value.shape() == Shape{3});
    CHECK(ev.value.elements<float>()[2] == 2.5f);

    // Plugin numbers read as std::stoll / std::stoi read them; anything else names the entry.
    auto with_plugin = [&](std::string_view name, std::string_view content) {
        std::string p;
        proto::Writer e(p);
        e.field_message(5, [&](proto::Writer& summary) {
            summary.field_message(1, [&](proto::Writer& v) {
                v.field_bytes(1, "t");
                v.field_message(8, [&](proto::Writer& t) { tensor(t, 1, 0.0f); });
                v.field_message(9, [&](proto::Writer& meta) { plugin(meta, name, content); });
            });
        });
        return decode_payload(p);
    };
    CHECK(with_plugin("mode_step", "0").mode_step == 0);
    CHECK(with_plugin("mode_step", "123456789").mode_step == 123456789);
    CHECK(with_plugin("mode_step", "1234567890123").mode_step == 1234567890123);
    CHECK(with_plugin("mode_step", "-4").mode_step == -4);
    CHECK(with_plugin("mode_step", " +12").mode_step == 12);
    CHECK(with_plugin("mode_step", "007").mode_step == 7);
    CHECK(with_plugin("mode_step", "12abc").mode_step == 12);
    CHECK(with_plugin("mode", "3").mode == Mode::PREDICT);
    CHECK_FALSE(with_plugin("mode", "9").mode.has_value());
    CHECK_THROWS_WITH(with_plugin("mode_step", "x1"), Catch::Contains("plugin data 'mode_step' is not a number: 'x1'"));
    CHECK_THROWS_WITH(with_plugin("mode_step", ""), Catch::Contains("is not a number"));
    CHECK_THROWS_WITH(with_plugin("mode", "99999999999"), Catch::Contains("plugin data 'mode' is not a number"));
    CHECK_THROWS_WITH(with_plugin("mode_step", "99999999999999999999"), Catch::Contains("is not a number"));
}

TEST_CASE("index files: schema, validation order and Python-compatible serialisation", "[format][index]") {
    const std::string text =
        R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "events/000000000001/000000000001_worker_0.tfevents"}, )"
        R"("tensor_payload": [{"tensorname": "Net_fc.weight", "start_idx": 0, "length": 133}, )"
        R"({"tensorname": "smdebug/reductions/max/Net_fc.bias", "start_idx": 133, "length": 108}], )"
        R"("shape_payload": [{"tensorname": "Net_fc.bias", "originalname": "Net_fc.bias", "shape": [1]}]})";
    const auto f = index_file::parse(text, "index/000000000/000000000001_worker_0.json");
    CHECK(f.mode == Mode::TRAIN);
    CHECK(f.mode_step == 1);
    REQUIRE(f.tensors.size() == 2);
    CHECK(f.tensors[1].start == 133);
    CHECK(f.shapes[0].shape == std::vector<std::int64_t>{1});
    CHECK(index_file::serialize(f) == text);

    auto error_of = [](std::string_view t) {
        try {
            index_file::parse(t, "idx.json");
        } catch (const IndexReaderException& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of("{not json"), Catch::Contains("idx.json") && Catch::Contains("Empty/Corrupt Index File"));
    CHECK_THAT(error_of(""), Catch::Contains("Empty/Corrupt Index File"));
    CHECK_THAT(error_of(R"({"tensor_payload": []})"), Catch::Contains("meta section is not present"));
    CHECK_THAT(error_of(R"({"meta": {}, "tensor_payload": []})"), Catch::Contains("meta section is empty"));
    CHECK_THAT(error_of(R"({"meta": {"mode": "TRAIN", "mode_step": 0}})"), Catch::Contains("neither tensor_payload nor shape_payload"));
    CHECK_THAT(error_of(R"({"meta": {"mode": "TRAINING", "mode_step": 0}, "shape_payload": []})"), Catch::Contains("not a mode name"));
    CHECK_THAT(error_of(R"({"meta": {"mode": "TRAIN", "mode_step": "x"}, "shape_payload": []})"), Catch::Contains("integer"));
    CHECK_THAT(error_of(R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": -1, "length": 5}]})"),
               Catch::Contains("non-negative"));
    CHECK_THAT(error_of(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": {"a": 1}})"), Catch::Contains("must be a list"));
    CHECK_THAT(error_of(R"([1, 2])"), Catch::Contains("not a JSON object"));
}

TEST_CASE("index files: the scanner reads what parse_dom reads and declines the rest", "[format][index]") {
    const std::string meta = R"("meta": {"mode": "TRAIN", "mode_step": 7, "event_file_name": "events/000000000007/000000000007_worker_0.tfevents"})";
    const std::string canonical = "{" + meta +
                                  R"(, "tensor_payload": [{"tensorname": "layer0/weight", "start_idx": 0, "length": 4206}, )"
                                  R"({"tensorname": "smdebug/reductions/abs_max/layer0/weight", "start_idx": 4206, "length": 108}], )"
                                  R"("shape_payload": [{"tensorname": "layer0/weight", "originalname": "l0.w", "shape": [32, 0, 4]}]})";
    // Read by the scanner, with the DOM parser's result.
    const std::vector<std::string> accepted = {
        canonical,
        R"({"meta":{"mode":"EVAL","mode_step":3,"event_file_name":"events/e.tfevents"},"tensor_payload":[{"tensorname":"a","start_idx":5,"length":16}]})",
        " {\n\t\"shape_payload\" : [ { \"shape\" : [ ] , \"tensorname\" : \"s\" } ] ,\r\n \"meta\" : { \"mode_step\" : -2 , \"mode\" : \"GLOBAL\" } } ",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": null}, "tensor_payload": null, "shape_payload": null})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": ""}, "tensor_payload": [{"length": 1, "start_idx": 2, "tensorname": ""}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 999999999999999999}, "tensor_payload": []})",
        // smdebug-cpp's payload CRC-32C (format.md §4), as its writers lay it out and in any order
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 17, "payload_crc32c": 4294967295}]})",
        "{" + meta + R"(, "tensor_payload": [{"payload_crc32c": 0, "length": 17, "tensorname": "a", "start_idx": 0}]})",
    };
    for (const auto& text : accepted) {
        INFO(text);
        const auto scanned = index_file::scanner::scan(text, {});
        REQUIRE(scanned);
        CHECK(index_file::serialize(*scanned) == index_file::serialize(index_file::parse_dom(text, "i.json")));
        // the DOM parser's arena and its switch (dom_arena_bytes = 0: the default allocator) read the same
        CHECK(index_file::serialize(index_file::parse_dom<0>(text, "i.json")) == index_file::serialize(index_file::parse_dom(text, "i.json")));
    }
    const auto f = *index_file::scanner::scan(canonical, {});
    CHECK(f.mode_step == 7);
    REQUIRE(f.tensors.size() == 2);
    CHECK(f.tensors[1].name == "smdebug/reductions/abs_max/layer0/weight");
    CHECK(f.tensors[1].start == 4206);
    CHECK(f.tensors[1].length == 108);
    REQUIRE(f.shapes.size() == 1);
    CHECK(f.shapes[0].original_name == "l0.w");
    CHECK(f.shapes[0].shape == std::vector<std::int64_t>{32, 0, 4});
    CHECK(index_file::scanner::scan(accepted[2], {})->shapes[0].original_name == "s");
    CHECK_FALSE(f.tensors[0].payload_crc32c);  // the reference's entries carry none
    CHECK(index_file::scanner::scan(accepted[6], {})->tensors[0].payload_crc32c == std::optional<std::uint32_t>(4294967295u));
    CHECK(index_file::scanner::scan(accepted[7], {})->tensors[0].payload_crc32c == std::optional<std::uint32_t>(0u));
    CHECK(index_file::serialize(index_file::parse(accepted[6], "i.json")) == accepted[6].substr(0, accepted[6].size() - 1) + R"(, "shape_payload": []})");
    // parse_into one IndexFile after another (as a trial's batches reuse them) gives what parse
    // gives: nothing of the previous file stays (its event file, shapes, entries).
    index_file::IndexFile reused;
    for (const auto& text : {accepted[0], accepted[2], accepted[1], accepted[3], accepted[0]}) {
        INFO(text);
        index_file::parse_into(text, "i.json", {}, reused);
        CHECK(index_file::serialize(reused) == index_file::serialize(index_file::parse(text, "i.json")));
        CHECK(reused.event_file_name == index_file::parse(text, "i.json").event_file_name);
    }

    // Declined: parse() gives what parse_dom gives, a result or the same error.
    const std::string tail = R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1}]})";
    const std::vector<std::string> declined = {
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a\/b", "start_idx": 0, "length": 1}]})",          // escape
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "caf\u00e9", "start_idx": 0, "length": 1}]})",     // escape
        "{" + meta + ", \"tensor_payload\": [{\"tensorname\": \"caf\xc3\xa9\", \"start_idx\": 0, \"length\": 1}]}",  // UTF-8
        "{" + meta + ", \"tensor_payload\": [{\"tensorname\": \"caf\xe9\", \"start_idx\": 0, \"length\": 1}]}",      // not UTF-8
        "{" + meta + ", \"tensor_payload\": [{\"tensorname\": \"a\tb\", \"start_idx\": 0, \"length\": 1}]}",        // control
        "{" + meta + R"(, "tensor_payload": [], "extra": 1})",                                                   // unknown key
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "mode": "EVAL"}, "tensor_payload": []})",                  // repeated key
        R"({"meta": {"mode": "TRAIN", "mode_step": 1.0}, "tensor_payload": []})",                                // a float
        R"({"meta": {"mode": "TRAIN", "mode_step": 1e2}, "tensor_payload": []})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 01}, "tensor_payload": []})",                                 // leading zero
        R"({"meta": {"mode": "TRAIN", "mode_step": -0}, "tensor_payload": []})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 1000000000000000000}, "tensor_payload": []})",                // 19 digits
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [],})",                                 // trailing comma
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": []} x)",                                // extra data
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [])",                                   // truncated
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "/etc/passwd"})" + tail,
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/../x"})" + tail,
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 99999999999}]})",
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": -1, "length": 1}]})",
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1, "payload_crc32c": 4294967296}]})",
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1, "payload_crc32c": -1}]})",
        "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 1, "payload_crc32c": 1, "payload_crc32c": 2}]})",
        "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [2, -1]}]})",
        "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "originalname": 5, "shape": [2]}]})",
        R"({"meta": {"mode": "TRAINING", "mode_step": 0}, "tensor_payload": []})",
        R"({"meta": {}, "tensor_payload": []})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}})",
        "[]",
        "",
    };
    auto outcome = [](auto&& parse) {
        try {
            return index_file::serialize(parse());
        } catch (const SMDebugError& e) {
            return std::string("error: ") + e.what();
        }
    };
    for (const auto& text : declined) {
        INFO(text);
        CHECK_FALSE(index_file::scanner::scan(text, {}));
        CHECK(outcome([&] { return index_file::parse(text, "i.json"); }) == outcome([&] { return index_file::parse_dom(text, "i.json"); }));
    }
    // The DOM parser's answers to some of them: a result, or the error that names the file.
    CHECK(index_file::parse(declined[0], "i.json").tensors[0].name == "a/b");
    CHECK(index_file::parse(declined[1], "i.json").tensors[0].name == "caf\xc3\xa9");
    CHECK(index_file::parse(declined[5], "i.json").tensors.empty());
    CHECK(index_file::parse(declined[6], "i.json").mode == Mode::EVAL);
    CHECK_THROWS_WITH(index_file::parse(declined[3], "i.json"), Catch::Contains("i.json") && Catch::Contains("Empty/Corrupt Index File"));
    CHECK_THROWS_WITH(index_file::parse(declined[16], "i.json"), Catch::Contains("i.json") && Catch::Contains("absolute path"));
    CHECK_THROWS_WITH(index_file::parse(declined[20], "i.json"), Catch::Contains("i.json") && Catch::Contains("is not a 32-bit CRC"));
    CHECK_THROWS_WITH(index_file::parse(declined[18], "i.json"), Catch::Contains("exceeds the record limit"));
    // The limits: a name over max_name_bytes is the DOM parser's FormatError, not a scanned result.
    index_file::Limits small;
    small.max_name_bytes = 4;
    CHECK_FALSE(index_file::scanner::scan(canonical, small));
    CHECK_THROWS_WITH(index_file::parse(canonical, "i.json", small), Catch::Contains("max_tensor_name_bytes"));
}

TEST_CASE("collections files: parsing, reductions strings and serialisation", "[format][collections]") {
    collections_file::CollectionsFile f;
    f.num_workers = 3;
    Collection c;
    c.name = "biases";
    c.include_regex = {"^(?!gradient).*bias"};
    c.add_tensor_name("Net_fc.bias");
    ReductionConfig rc;
    rc.add_reductions_string("max, abs_l2_norm,l1_norm,abs_mean");
    rc.save_shape = true;
    c.reduction_config = rc;
    c.save_config = SaveConfig(SaveConfigMode{1, {}, 0, std::nullopt});
    f.collections.push_back(c);
    const auto text = collections_file::serialize(f);
    CHECK(text.starts_with(R"({"collections": {"biases": {"name": "biases", "include_regex": ["^(?!gradient).*bias"], )"));
    CHECK(text.find(R"("reductions": "max,l1_norm,abs_mean,abs_l2_norm")") != std::string::npos);
    CHECK(text.ends_with(R"("_meta": {"num_workers": 3}})"));
    const auto back = collections_file::parse(text, "c.json");
    REQUIRE(back.collections.size() == 1);
    CHECK(back.num_workers == 3);
    CHECK(back.collections[0].reduction_config == rc);
    CHECK(back.collections[0].save_config == c.save_config);

    CHECK_THROWS_AS(collections_file::parse(R"({"collections": {}})", "c.json"), FormatError);
    CHECK_THROWS_AS(collections_file::parse(R"({"collections": {}, "_meta": {"num_workers": 1}, "x": 1})", "c.json"), FormatError);
    CHECK_THROWS_AS(collections_file::parse(R"({"collections": {}, "_meta": {"num_workers": 0}})", "c.json"), FormatError);
    CHECK_THROWS_WITH(collections_file::parse(R"({"collections": [], "_meta": {"num_workers": 1}})", "cf.json"), Catch::Contains("cf.json"));
    CHECK_THROWS_AS(rc.add_reductions_string("median"), SMDebugValueError);
}

TEST_CASE("SaveConfigMode::should_save follows docs/format.md §9.1", "[format][save_config]") {
    SaveConfigMode m;
    m.save_steps = {1};
    for (std::int64_t s : {0, 1, 500, 1000}) CHECK(m.should_save(s));
    for (std::int64_t s : {2, 499, 501}) CHECK_FALSE(m.should_save(s));
    SaveConfigMode w{5, {}, 3, std::nullopt};
    CHECK_FALSE(w.should_save(0));
    CHECK_FALSE(w.should_save(3));
    CHECK(w.should_save(5));
    SaveConfigMode e{2, {1, 5}, 0, 6};
    std::vector<std::int64_t> saved;
    for (std::int64_t s = 0; s < 10; ++s)
        if (e.should_save(s)) saved.push_back(s);
    CHECK(saved == std::vector<std::int64_t>{0, 1, 2, 4, 5});
}

TEST_CASE("file names: keys, steps and workers", "[format][paths]") {
    CHECK(paths::event_key(0, "worker_0") == "events/000000000000/000000000000_worker_0.tfevents");
    CHECK(paths::index_key(1000, "worker_3") == "index/000000001/000000001000_worker_3.json");
    CHECK(paths::index_key(123456, "worker_0") == "index/000000123/000000123456_worker_0.json");
    const auto f = paths::parse_step_file("index/000000000/000000000010_worker_0.json");
    REQUIRE(f);
    CHECK(f->step == 10);
    CHECK(f->worker == "worker_0");
    const auto tf = paths::parse_step_file("x/000000000010__job-worker_replica-0_task-1_device-GPU-0.json");
    REQUIRE(tf);
    CHECK(tf->worker == "/job:worker/replica:0/task:1/device:GPU:0");
    // D13: a "__" in the folder path does not change worker names
    CHECK(paths::parse_step_file("my__trial/index/000000000/000000000001_worker_0.json")->worker == "worker_0");
    CHECK_FALSE(paths::parse_step_file("index/000000000/foo.json"));
    CHECK_FALSE(paths::parse_step_file("index/000000000/12a_worker.json"));
    CHECK(paths::parse_collections_file("collections/000000000/worker_1_collections.json") == "worker_1");
    CHECK_FALSE(paths::parse_collections_file("collections/000000000/collections.json"));
}

TEST_CASE("LocalStore lists in byte order after a key, reads ranges exactly, writes atomically", "[storage]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    for (const char* k : {"index/000000000/000000000002_worker_0.json", "index/000000000/000000000001_worker_0.json",
                          "index/000000001/000000001000_worker_0.json", "a.txt", "a/b", "events/x"})
        store.write(k, bytes_of(k));
    CHECK(store.list("index/") == std::vector<std::string>{"index/000000000/000000000001_worker_0.json",
                                                           "index/000000000/000000000002_worker_0.json",
                                                           "index/000000001/000000001000_worker_0.json"});
    CHECK(store.list("index/", "index/000000000/000000000001_worker_0.json").size() == 2);
    CHECK(store.list("index/", "index/000000000/zzz") == std::vector<std::string>{"index/000000001/000000001000_worker_0.json"});
    CHECK(store.list("a") == std::vector<std::string>{"a.txt", "a/b"});
    CHECK(store.list("nope/").empty());
    CHECK(store.read_range("a.txt", 1, 3).text() == ".tx");
    CHECK_THROWS_AS(store.read_range("a.txt", 2, 10), TruncatedData);
    CHECK_THROWS_AS(store.read("missing"), ObjectNotFound);
    CHECK_THROWS_WITH(store.read("missing"), Catch::Contains(dir.path.string()));
    CHECK(store.exists("a/b"));
    store.remove("a/b");
    CHECK_FALSE(store.exists("a/b"));
    CHECK_FALSE(std::filesystem::exists(dir.path / "a.txt.tmp"));

    AnyStore any(store);
    const RangeRequest reqs[] = {{"a.txt", 0, 1}, {"events/x", 2, 2}};
    const auto got = any.read_ranges(reqs);
    CHECK(got[0].text() == "a");
    CHECK(got[1].text() == "en");
    CHECK(any.get_if<LocalStore>() != nullptr);
}

TEST_CASE("LocalStore reports unwritable locations as StorageError", "[storage]") {
    if (::geteuid() == 0) {
        // root ignores permissions; use a path below a regular file instead
        test::TempDir dir;
        LocalStore store(dir.path);
        store.write("file", bytes_of("x"));
        CHECK_THROWS_AS(LocalStore(dir.path / "file").write("sub/key", bytes_of("y")), StorageError);
    } else {
        CHECK_THROWS_AS(LocalStore("/proc/smdebug-no-such").write("k", bytes_of("y")), StorageError);
    }
}

static_assert(Store<LocalStore> && WritableStore<LocalStore> && BatchReadStore<LocalStore>);
static_assert(Store<AnyStore> && WritableStore<AnyStore> && BatchReadStore<AnyStore>);

// ---- manifests (format/manifest.hpp) ---------------------------------------------------------------

namespace {

manifest::Manifest sample_manifest() {
    manifest::Manifest m;
    m.first_step = 1000;
    m.last_step = 1999;
    for (std::int64_t step : {1000, 1500}) {
        for (const std::string worker : {"/job:worker/replica:0/task:1/device:GPU:0", "worker_0"}) {
            manifest::CoveredFile f;
            f.key = paths::index_key(step, worker);
            f.size = 300 + static_cast<std::uint64_t>(step);
            f.etag = step == 1000 ? "\"0123abcd\"" : "";
            f.index.mode = step == 1000 ? Mode::TRAIN : Mode::EVAL;
            f.index.mode_step = step / 10;
            f.index.event_file_name = paths::event_key(step, worker);
            f.index.tensors = {{"fc.weight", 0, 80, 0xFFFFFFFFu}, {"smdebug/reductions/abs_max/fc.weight", 80, 40, 0u}, {"loss", 120, 1ull << 20}};
            f.index.shapes = {{"act", "model/act:0", {8, 0, 16}}, {"loss", "loss", {}}};
            m.files.push_back(std::move(f));
        }
    }
    std::sort(m.files.begin(), m.files.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    manifest::CoveredFile shapes_only;  // an index file with shapes and no event file
    shapes_only.key = paths::index_key(1999, "worker_0");
    shapes_only.index.mode = Mode::GLOBAL;
    shapes_only.index.mode_step = 1999;
    shapes_only.index.shapes = {{"act", "act", {1}}};
    m.files.push_back(shapes_only);
    return m;
}

void check_same(const manifest::Manifest& a, const manifest::Manifest& b) {
    CHECK(a.worker == b.worker);
    CHECK(a.first_step == b.first_step);
    CHECK(a.last_step == b.last_step);
    REQUIRE(a.files.size() == b.files.size());
    for (std::size_t i = 0; i < a.files.size(); ++i) {
        const auto &x = a.files[i], &y = b.files[i];
        CHECK(x.key == y.key);
        CHECK(x.size == y.size);
        CHECK(x.etag == y.etag);
        CHECK(index_file::serialize(x.index) == index_file::serialize(y.index));
    }
}

}  // namespace

TEST_CASE("manifest: encode and decode round trip; keys name the scope and the steps", "[format][manifest]") {
    auto m = sample_manifest();
    const auto bytes = manifest::encode(m);
    CHECK(bytes.starts_with("SMDMANIF"));
    check_same(manifest::decode(bytes, "m"), m);
    CHECK(manifest::key(m) == "manifest/all/000000001000_000000001999.smdm");
    CHECK(manifest::parse_key(manifest::key(m)) == manifest::ManifestName{std::nullopt, 1000, 1999});

    m.worker = "worker_0";
    std::erase_if(m.files, [](const auto& f) { return !f.key.ends_with("_worker_0.json"); });
    check_same(manifest::decode(manifest::encode(m), "m"), m);
    CHECK(manifest::key(m) == "manifest/worker/worker_0/000000001000_000000001999.smdm");
    CHECK(manifest::parse_key(manifest::key(m)) == manifest::ManifestName{"worker_0", 1000, 1999});
    const std::optional<std::string> device = "/job:worker/replica:0/task:1/device:GPU:0";
    CHECK(manifest::parse_key(manifest::key(device, 0, 5)) == manifest::ManifestName{device, 0, 5});

    manifest::Manifest empty;  // a run of steps without index files
    empty.last_step = 99;
    check_same(manifest::decode(manifest::encode(empty), "m"), empty);

    // Version 2 keeps each record's payload CRC-32C (none, 0 and 0xFFFFFFFF differ); version 1 is read without it.
    const auto decoded = manifest::decode(bytes, "m");
    CHECK(decoded.files[0].index.tensors[0].payload_crc32c == std::optional<std::uint32_t>(0xFFFFFFFFu));
    CHECK(decoded.files[0].index.tensors[1].payload_crc32c == std::optional<std::uint32_t>(0u));
    CHECK_FALSE(decoded.files[0].index.tensors[2].payload_crc32c);
    manifest::detail::Encoder v1_content, v1_header;
    v1_content.u8(0);
    v1_content.svarint(0);
    v1_content.svarint(0);
    v1_content.varint(2);  // names: the tensor, the event file
    v1_content.string("w");
    v1_content.string(paths::event_key(0, "worker_0"));
    v1_content.varint(1);  // one file
    v1_content.string(paths::index_key(0, "worker_0"));
    v1_content.varint(100);
    v1_content.string("");
    v1_content.u8(4);       // GLOBAL
    v1_content.svarint(0);  // mode step
    v1_content.varint(2);   // event file: name 1
    v1_content.varint(1);   // one record: name 0, offset 0, length 60, no CRC field
    v1_content.varint(0);
    v1_content.varint(0);
    v1_content.varint(60);
    v1_content.varint(0);   // no shapes
    v1_header.fixed32(1);
    v1_header.fixed64(v1_content.bytes().size());
    v1_header.fixed32(crc32c(v1_content.bytes()));
    const auto v1 = manifest::decode(std::string(manifest::magic) + v1_header.bytes() + v1_content.bytes(), "m");
    REQUIRE(v1.files.size() == 1);
    REQUIRE(v1.files[0].index.tensors.size() == 1);
    CHECK(v1.files[0].index.tensors[0].length == 60);
    CHECK_FALSE(v1.files[0].index.tensors[0].payload_crc32c);

    for (const char* k : {"manifest/all/000000001000_000000001999.smdm.tmp", "manifest/all/x_1.smdm", "manifest/all/5_4.smdm",
                          "manifest/other/0_1.smdm", "manifest/worker//0_1.smdm", "index/000000000/0_1.smdm"})
        CHECK_FALSE(manifest::parse_key(k));
}

TEST_CASE("manifest: every truncation, every flipped byte and hostile content are FormatErrors naming it", "[format][manifest]") {
    const auto bytes = manifest::encode(sample_manifest());
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        INFO("truncated to " << n << " bytes");
        CHECK_THROWS_AS(manifest::decode(std::string_view(bytes).substr(0, n), "s3://b/t/manifest/m.smdm"), FormatError);
    }
    CHECK_THROWS_WITH(manifest::decode(std::string_view(bytes).substr(0, 100), "s3://b/t/manifest/m.smdm"),
                      Catch::Contains("s3://b/t/manifest/m.smdm") && Catch::Contains("truncated"));
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        auto bad = bytes;
        bad[i] = static_cast<char>(bad[i] ^ 0x20);
        INFO("byte " << i << " flipped");
        CHECK_THROWS_AS(manifest::decode(bad, "m"), FormatError);
    }
    CHECK_THROWS_WITH(manifest::decode(bytes + "x", "m"), Catch::Contains("follow its content"));

    // Content with a valid CRC that breaks the index files' rules.
    auto hostile = [](auto edit) {
        auto m = sample_manifest();
        edit(m);
        return manifest::encode(m);
    };
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files[0].index.event_file_name = "/etc/passwd"; }), "m"),
                      Catch::Contains("/etc/passwd") && Catch::Contains("refused"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files[0].index.event_file_name = "events/../../x"; }), "m"),
                      Catch::Contains("refused"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files[0].index.tensors[0].length = tfrecord::max_record_bytes + 1; }), "m"),
                      Catch::Contains("past any file size"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files[0].key = "collections/000000000/x.json"; }), "m"),
                      Catch::Contains("not an index file"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { std::swap(m.files[0], m.files[1]); }), "m"), Catch::Contains("not in order"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files.back().key = paths::index_key(2000, "worker_0"); }), "m"),
                      Catch::Contains("outside its steps"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.worker = "worker_1"; }), "m"), Catch::Contains("not a file of worker worker_1"));
    CHECK_THROWS_WITH(manifest::decode(hostile([](auto& m) { m.files[0].index.shapes[0].shape[0] = -1; }), "m"),
                      Catch::Contains("negative dimension"));

    // A count far beyond the bytes is refused before anything is allocated for it.
    manifest::detail::Encoder e;
    e.u8(0);
    e.svarint(0);
    e.svarint(0);
    e.varint(std::uint64_t{1} << 60);  // names in the table
    std::string forged(manifest::magic);
    manifest::detail::Encoder h;
    h.fixed32(manifest::version);
    h.fixed64(e.bytes().size());
    h.fixed32(crc32c(e.bytes()));
    forged += h.bytes() + e.bytes();
    CHECK_THROWS_WITH(manifest::decode(forged, "m"), Catch::Contains("exceeds the bytes left"));
}

TEST_CASE("decode_value checks the record's identity before its elements may move over the tag", "[format][event]") {
    // An Event whose TensorProto puts tensor_content first, right after the Summary.Value's tag:
    // float64 elements placed 7 bytes past an 8-byte boundary are slid down over the 4 framing
    // bytes before them and the last 3 bytes of the tag.
    const std::string tag = "layer0/weight";
    const double elements[2] = {1.25, -3.5};
    std::string payload;
    proto::Writer w(payload);
    w.field_varint(2, 7);  // Event.step
    w.field_message(5, [&](proto::Writer& summary) {
        summary.field_message(1, [&](proto::Writer& v) {
            v.field_bytes(1, tag);
            v.field_message(8, [&](proto::Writer& t) {
                t.field_bytes(4, std::string_view(reinterpret_cast<const char*>(elements), sizeof elements));
                t.field_varint(1, 2);  // DT_DOUBLE, after the content
                t.field_message(2, [](proto::Writer& shape) { shape.field_message(2, [](proto::Writer& d) { d.field_varint(1, 2); }); });
            });
        });
    });
    const std::size_t content_at = payload.find(std::string_view(reinterpret_cast<const char*>(elements), sizeof elements));
    REQUIRE(content_at != std::string::npos);
    REQUIRE(payload.compare(content_at - 4 - tag.size(), tag.size(), tag) == 0);  // the tag ends 4 bytes before
    // The payload placed so that its elements start 7 bytes past an 8-byte boundary.
    ByteBuffer buffer(payload.size() + 16);
    const std::size_t shift = (7 + 16 - (reinterpret_cast<std::uintptr_t>(buffer.data()) + content_at) % 8) % 8;
    std::memcpy(buffer.data() + shift, payload.data(), payload.size());
    const auto bytes = std::span<const std::byte>(buffer.data() + shift, payload.size());
    REQUIRE(reinterpret_cast<std::uintptr_t>(bytes.data() + content_at) % 8 == 7);

    std::string seen_tag;
    std::int64_t seen_step = -1;
    const auto value = event::decode_value(buffer, buffer.share(), bytes, "e.tfevents", [&](std::string_view t, std::int64_t s) {
        seen_tag = std::string(t);
        seen_step = s;
    });
    CHECK(seen_tag == tag);
    CHECK(seen_step == 7);
    REQUIRE(value.shape() == Shape{2});
    CHECK(value.elements<double>()[0] == 1.25);
    CHECK(value.elements<double>()[1] == -3.5);
    // What the check had to see first: the elements now lie over the tag's last bytes.
    CHECK(std::string_view(reinterpret_cast<const char*>(bytes.data()) + content_at - 4 - tag.size(), tag.size()) != tag);

    // A check that throws stops the decode: the caller's error, no value.
    ByteBuffer again = ByteBuffer::copy_of(payload);
    CHECK_THROWS_AS(event::decode_value(again, again.share(), again.bytes(), "e.tfevents",
                                        [](std::string_view, std::int64_t) { throw RecordMismatch("not this record"); }),
                    RecordMismatch);
}

TEST_CASE("event::outline gives describe()'s tag, step and size without copying the tag", "[format][event]") {
    const std::string payload = event::encode("gradients/layer3/weight", make_value<float>({1, 2, 3, 4, 5, 6}, {2, 3}), 42, 1.0, Mode::TRAIN, 2);
    const auto bytes = bytes_of(payload);
    const auto o = event::outline(bytes, "e.tfevents");
    const auto d = event::describe(bytes, "e.tfevents");
    CHECK(o.tag == "gradients/layer3/weight");
    CHECK(o.tag == d.tag);
    CHECK(o.tag.data() >= reinterpret_cast<const char*>(bytes.data()));  // a view into the payload
    CHECK(o.tag.data() + o.tag.size() <= reinterpret_cast<const char*>(bytes.data() + bytes.size()));
    CHECK(o.step == 42);
    CHECK(o.step == d.step);
    CHECK(o.byte_size == 24);
    CHECK(o.byte_size == d.byte_size);
    CHECK(d.shape == Shape{2, 3});
}

}  // namespace smdebug_test_format
