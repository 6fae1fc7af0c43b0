#pragma once
// Loading expected.json exactly: a small JSON reader that converts numbers with std::from_chars
// (correctly rounded, as SCHEMA.md §5.2 requires for subnormals and shortest-form doubles) and
// keeps integers beyond 2^63 as uint64.
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include <smdebug/storage/open_store.hpp>

namespace conformance {

namespace bj = boost::json;

class ExactJsonReader {
public:
    explicit ExactJsonReader(std::string_view text, std::string context) : s_(text), ctx_(std::move(context)) {}

    bj::value parse() {
        bj::value v = value(0);
        skip_ws();
        if (pos_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(ctx_ + ": invalid JSON at byte " + std::to_string(pos_) + ": " + what);
    }
    void skip_ws() { while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_; }
    char peek() { skip_ws(); if (pos_ >= s_.size()) fail("unexpected end"); return s_[pos_]; }
    void expect(char c) { if (peek() != c) fail(std::string("expected '") + c + "'"); ++pos_; }

    bj::value value(int depth) {
        if (depth > 64) fail("nesting too deep");
        const char c = peek();
        if (c == '{') {
            ++pos_;
            bj::object o;
            if (peek() == '}') { ++pos_; return o; }
            while (true) {
                std::string k = string();
                expect(':');
                o[k] = value(depth + 1);
                if (peek() == ',') { ++pos_; continue; }
                expect('}');
                return o;
            }
        }
        if (c == '[') {
            ++pos_;
            bj::array a;
            if (peek() == ']') { ++pos_; return a; }
            while (true) {
                a.push_back(value(depth + 1));
                if (peek() == ',') { ++pos_; continue; }
                expect(']');
                return a;
            }
        }
        if (c == '"') return bj::value(string());
        if (s_.substr(pos_, 4) == "true") { pos_ += 4; return true; }
        if (s_.substr(pos_, 5) == "false") { pos_ += 5; return false; }
        if (s_.substr(pos_, 4) == "null") { pos_ += 4; return nullptr; }
        return number();
    }

    bj::value number() {
        const std::size_t start = pos_;
        bool is_float = false;
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '.' || c == 'e' || c == 'E') is_float = true;
            else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9'))) break;
            ++pos_;
        }
        const char* b = s_.data() + start;
        const char* e = s_.data() + pos_;
        if (b == e) fail("unexpected character");
        if (!is_float) {
            std::int64_t i;
            if (auto r = std::from_chars(b, e, i); r.ec == std::errc() && r.ptr == e) return i;
            std::uint64_t u;
            if (auto r = std::from_chars(b, e, u); r.ec == std::errc() && r.ptr == e) return u;
        }
        double d;
        auto r = std::from_chars(b, e, d);
        if (r.ptr != e || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range)) fail("bad number");
        return d;
    }

    std::string string() {
        expect('"');
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (c != '\\') { out.push_back(c); continue; }
            if (pos_ >= s_.size()) fail("bad escape");
            const char esc = s_[pos_++];
            switch (esc) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
                        pos_ += 2;
                        const unsigned lo = hex4();
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    utf8(out, cp);
                    break;
                }
                default: fail("bad escape");
            }
        }
    }
    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("bad \\u escape");
        unsigned v = 0;
        auto r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, v, 16);
        if (r.ptr != s_.data() + pos_ + 4) fail("bad \\u escape");
        pos_ += 4;
        return v;
    }
    static void utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) out.push_back(static_cast<char>(cp));
        else if (cp < 0x800) { out.push_back(static_cast<char>(0xC0 | (cp >> 6))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
        else if (cp < 0x10000) { out.push_back(static_cast<char>(0xE0 | (cp >> 12))); out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
        else { out.push_back(static_cast<char>(0xF0 | (cp >> 18))); out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F))); out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
    }

    std::string_view s_;
    std::string ctx_;
    std::size_t pos_ = 0;
};

inline bj::value load_expected(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    return ExactJsonReader(text, file.string()).parse();
}

// Copies a local trial folder to `dest` (e.g. s3://bucket/prefix/case) through the Store API.
inline void upload_trial(const std::filesystem::path& trial_dir, const std::string& dest) {
    const auto store = smdebug::open_store(dest);
    for (const auto& e : std::filesystem::recursive_directory_iterator(trial_dir)) {
        if (!e.is_regular_file()) continue;
        const auto key = std::filesystem::relative(e.path(), trial_dir).generic_string();
        const auto bytes = smdebug::LocalStore(trial_dir).read(key);
        store.write(key, bytes.bytes());
    }
}

}  // namespace conformance
