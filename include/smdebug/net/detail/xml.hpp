#pragma once
// A small, bounds-checked XML reader for S3 responses (ListObjectsV2 results, Error documents).
// It builds a tree of elements with their decoded text; attributes are checked for well-formedness
// and dropped. Namespaces are not checked: element names are stored without their prefix, so
// s3rver's and real S3's different xmlns both work. DOCTYPE declarations (and with them every
// entity-expansion trick) are rejected; only the five predefined entities and character references
// are decoded. Every malformed or over-limit input throws XmlError; nothing recurses on the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/text.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net {

struct XmlLimits {
    std::size_t max_input_bytes = 64u << 20;
    std::size_t max_depth = 64;
    std::size_t max_elements = 1u << 20;
    std::size_t max_name_length = 256;
};

struct XmlElement {
    std::string name;  // local name (prefix stripped)
    std::string text;  // decoded character data directly inside this element (not trimmed)
    std::vector<XmlElement> children;

    const XmlElement* child(std::string_view local_name) const noexcept {
        for (const auto& c : children)
            if (c.name == local_name) return &c;
        return nullptr;
    }
    // Text of the first child with that name, or `fallback` when there is none.
    std::string_view child_text(std::string_view local_name, std::string_view fallback = {}) const noexcept {
        const XmlElement* c = child(local_name);
        return c ? std::string_view(c->text) : fallback;
    }
    template <class F>
    void for_each(std::string_view local_name, F&& f) const {
        for (const auto& c : children)
            if (c.name == local_name) f(c);
    }
};

namespace detail {

class XmlParser {
public:
    XmlParser(std::string_view in, const XmlLimits& lim) : s_(in), lim_(lim) {}

    XmlElement parse() {
        if (s_.size() > lim_.max_input_bytes)
            fail("document of " + std::to_string(s_.size()) + " bytes exceeds the limit of " +
                 std::to_string(lim_.max_input_bytes));
        if (s_.starts_with("\xEF\xBB\xBF")) p_ = 3;  // UTF-8 byte order mark
        skip_misc();
        if (p_ >= s_.size() || s_[p_] != '<') fail("expected the root element");
        XmlElement root;
        bool root_closed = false;
        std::vector<XmlElement*> stack;
        std::size_t elements = 0;

        while (true) {
            if (stack.empty()) {
                if (root_closed) break;
                // Root start tag.
                bool empty = false;
                root.name = read_start_tag(empty);
                ++elements;
                if (empty) { root_closed = true; continue; }
                stack.push_back(&root);
                continue;
            }
            if (p_ >= s_.size()) fail("unexpected end of document inside <" + stack.back()->name + ">");
            XmlElement& cur = *stack.back();
            char c = s_[p_];
            if (c != '<') {
                read_text(cur.text);
                continue;
            }
            if (starts("<!--")) { skip_comment(); continue; }
            if (starts("<![CDATA[")) {
                std::size_t end = s_.find("]]>", p_ + 9);
                if (end == std::string_view::npos) fail("unterminated CDATA section");
                cur.text.append(s_.substr(p_ + 9, end - p_ - 9));
                p_ = end + 3;
                continue;
            }
            if (starts("<?")) { skip_pi(); continue; }
            if (starts("<!")) fail("unexpected markup declaration inside an element");
            if (starts("</")) {
                p_ += 2;
                std::string_view qn = read_name();
                if (strip_prefix(qn) != cur.name) fail("end tag </" + std::string(qn) + "> does not match <" + cur.name + ">");
                skip_ws();
                expect('>');
                stack.pop_back();
                if (stack.empty()) root_closed = true;
                continue;
            }
            if (stack.size() >= lim_.max_depth) fail("elements nested deeper than " + std::to_string(lim_.max_depth));
            if (++elements > lim_.max_elements) fail("more than " + std::to_string(lim_.max_elements) + " elements");
            bool empty = false;
            std::string name = read_start_tag(empty);
            cur.children.emplace_back();
            cur.children.back().name = std::move(name);
            if (!empty) stack.push_back(&cur.children.back());
        }
        skip_misc();
        if (p_ != s_.size()) fail("content after the root element");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw XmlError("malformed XML at byte " + std::to_string(p_) + ": " + what);
    }
    bool starts(std::string_view t) const noexcept { return s_.substr(p_).starts_with(t); }
    static bool is_ws(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
    void skip_ws() noexcept { while (p_ < s_.size() && is_ws(s_[p_])) ++p_; }
    void expect(char c) {
        if (p_ >= s_.size() || s_[p_] != c) fail(std::string("expected '") + c + "'");
        ++p_;
    }
    static bool name_start(unsigned char c) noexcept {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80;
    }
    static bool name_char(unsigned char c) noexcept {
        return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
    }
    static std::string_view strip_prefix(std::string_view qn) noexcept {
        auto colon = qn.find(':');
        return colon == std::string_view::npos ? qn : qn.substr(colon + 1);
    }
    std::string_view read_name() {
        std::size_t b = p_;
        if (p_ >= s_.size() || !name_start(static_cast<unsigned char>(s_[p_]))) fail("expected a name");
        while (p_ < s_.size() && name_char(static_cast<unsigned char>(s_[p_]))) {
            if (p_ - b >= lim_.max_name_length) fail("name longer than " + std::to_string(lim_.max_name_length) + " bytes");
            ++p_;
        }
        return s_.substr(b, p_ - b);
    }
    // At '<' of a start tag: reads name and attributes, sets `empty` for "<x/>".
    std::string read_start_tag(bool& empty) {
        expect('<');
        std::string_view qn = read_name();
        std::string name(strip_prefix(qn));
        if (name.empty()) fail("empty local name");
        std::vector<std::string_view> seen;
        while (true) {
            bool had_ws = p_ < s_.size() && is_ws(s_[p_]);
            skip_ws();
            if (p_ >= s_.size()) fail("unterminated start tag <" + name + ">");
            if (s_[p_] == '>') { ++p_; empty = false; return name; }
            if (s_[p_] == '/') { ++p_; expect('>'); empty = true; return name; }
            if (!had_ws) fail("expected whitespace before an attribute in <" + name + ">");
            std::string_view an = read_name();
            for (auto s : seen)
                if (s == an) fail("duplicate attribute " + std::string(an) + " in <" + name + ">");
            if (seen.size() < 64) seen.push_back(an); else fail("too many attributes in <" + name + ">");
            skip_ws();
            expect('=');
            skip_ws();
            if (p_ >= s_.size() || (s_[p_] != '"' && s_[p_] != '\'')) fail("expected a quoted attribute value");
            char q = s_[p_++];
            std::string ignored;
            while (true) {
                if (p_ >= s_.size()) fail("unterminated attribute value");
                char c = s_[p_];
                if (c == q) { ++p_; break; }
                if (c == '<') fail("'<' in an attribute value");
                if (c == '&') decode_reference(ignored); else ++p_;
            }
        }
    }
    void read_text(std::string& out) {
        while (p_ < s_.size() && s_[p_] != '<') {
            char c = s_[p_];
            if (c == '&') { decode_reference(out); continue; }
            std::size_t b = p_;
            while (p_ < s_.size() && s_[p_] != '<' && s_[p_] != '&') ++p_;
            out.append(s_.substr(b, p_ - b));
        }
    }
    void decode_reference(std::string& out) {
        std::size_t semi = s_.find(';', p_);
        if (semi == std::string_view::npos || semi - p_ > 12) fail("unterminated entity reference");
        std::string_view ref = s_.substr(p_ + 1, semi - p_ - 1);
        p_ = semi + 1;
        if (ref == "amp") out += '&';
        else if (ref == "lt") out += '<';
        else if (ref == "gt") out += '>';
        else if (ref == "quot") out += '"';
        else if (ref == "apos") out += '\'';
        else if (ref.size() >= 2 && ref[0] == '#') {
            std::uint32_t cp = 0;
            bool hex = ref[1] == 'x';
            std::string_view digits = ref.substr(hex ? 2 : 1);
            if (digits.empty() || digits.size() > 8) fail("bad character reference &" + std::string(ref) + ";");
            for (char d : digits) {
                const int v = hex ? text::hex_digit_value(d) : (d >= '0' && d <= '9' ? d - '0' : -1);
                if (v < 0) fail("bad character reference &" + std::string(ref) + ";");
                cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
                if (cp > 0x10FFFF) fail("character reference out of range");
            }
            if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) ||
                (cp < 0x20 && cp != 0x9 && cp != 0xA && cp != 0xD) || cp == 0xFFFE || cp == 0xFFFF)
                fail("character reference to an invalid character");
            append_utf8(out, cp);
        } else {
            fail("unknown entity &" + std::string(ref) + ";");
        }
    }
    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) out += static_cast<char>(cp);
        else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    void skip_comment() {
        std::size_t end = s_.find("-->", p_ + 4);
        if (end == std::string_view::npos) fail("unterminated comment");
        p_ = end + 3;
    }
    void skip_pi() {
        std::size_t end = s_.find("?>", p_ + 2);
        if (end == std::string_view::npos) fail("unterminated processing instruction");
        p_ = end + 2;
    }
    // Whitespace, comments and processing instructions (the XML declaration) outside the root.
    void skip_misc() {
        while (true) {
            skip_ws();
            if (starts("<!--")) skip_comment();
            else if (starts("<?")) skip_pi();
            else if (starts("<!")) fail("DOCTYPE and other declarations are not accepted");
            else return;
        }
    }

    std::string_view s_;
    const XmlLimits& lim_;
    std::size_t p_ = 0;
};

}  // namespace detail

// Parses a whole document; throws XmlError on malformed, hostile or over-limit input.
inline XmlElement parse_xml(std::string_view document, const XmlLimits& limits = {}) {
    return detail::XmlParser(document, limits).parse();
}

}  // namespace smdebug::net
