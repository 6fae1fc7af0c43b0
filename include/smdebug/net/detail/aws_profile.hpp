#pragma once
// The environment and the AWS shared configuration files, read the way the AWS CLI and SDKs do:
//  - the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials) with
//    sections "[name]";
//  - the config file (AWS_CONFIG_FILE, default ~/.aws/config) with sections "[default]" and
//    "[profile name]", and nested settings ("s3 =" followed by indented "addressing_style = path"
//    lines, stored as "s3.addressing_style");
//  - the profile is AWS_PROFILE (or the legacy AWS_DEFAULT_PROFILE), else "default".
// Environment lookups go through an Environment function so that tests need not touch the
// process environment.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net {

// Returns the value of an environment variable, or nullopt when it is unset.
using Environment = std::function<std::optional<std::string>(std::string_view)>;

inline Environment process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        if (!v) return std::nullopt;
        return std::string(v);
    };
}

// An environment variable that is set and not empty.
inline std::optional<std::string> env_value(const Environment& env, std::string_view name) {
    auto v = env(name);
    if (v && v->empty()) return std::nullopt;
    return v;
}

inline bool env_true(const Environment& env, std::string_view name) {
    auto v = env_value(env, name);
    if (!v) return false;
    std::string s;
    for (char c : *v) s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s == "true" || s == "1";
}

// One INI-style AWS file: section name -> (lower-case key -> value).
class ProfileFile {
public:
    using Section = std::map<std::string, std::string>;

    // A missing file is empty; an unreadable or malformed one throws AwsConfigError.
    // `config_format`: sections are "[default]" / "[profile name]"; otherwise "[name]".
    static ProfileFile load(const std::filesystem::path& path, bool config_format) {
        ProfileFile f;
        f.path_ = path.string();
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) return f;
        std::ifstream in(path);
        if (!in) throw AwsConfigError("cannot read AWS " + std::string(config_format ? "config" : "credentials") + " file " + f.path_);
        std::stringstream ss;
        ss << in.rdbuf();
        f.parse(ss.str(), config_format);
        return f;
    }
    static ProfileFile parse_text(std::string_view text, bool config_format, std::string name = "<text>") {
        ProfileFile f;
        f.path_ = std::move(name);
        f.parse(text, config_format);
        return f;
    }

    const std::string& path() const noexcept { return path_; }
    const Section* profile(std::string_view name) const {
        auto it = sections_.find(std::string(name));
        return it == sections_.end() ? nullptr : &it->second;
    }
    std::optional<std::string> get(std::string_view profile_name, std::string_view key) const {
        const Section* s = profile(profile_name);
        if (!s) return std::nullopt;
        auto it = s->find(std::string(key));
        if (it == s->end() || it->second.empty()) return std::nullopt;
        return it->second;
    }

private:
    void parse(std::string_view text, bool config_format) {
        Section* current = nullptr;
        std::string parent;  // key with an empty value, for indented sub-settings
        std::size_t line_no = 0;
        while (!text.empty()) {
            ++line_no;
            auto nl = text.find('\n');
            std::string_view raw = text.substr(0, nl);
            text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
            const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
            std::string_view line = text::trim(raw, text::line_blanks);
            if (line.empty() || line.front() == '#' || line.front() == ';') continue;
            auto fail = [&](const std::string& why) {
                return AwsConfigError("malformed AWS " + std::string(config_format ? "config" : "credentials") + " file " +
                                      path_ + " at line " + std::to_string(line_no) + ": " + why);
            };
            if (line.front() == '[') {
                if (line.back() != ']') throw fail("unterminated section header");
                std::string_view name = text::trim(line.substr(1, line.size() - 2), text::line_blanks);
                parent.clear();
                if (config_format) {
                    if (name.starts_with("profile ") || name.starts_with("profile\t")) {
                        name = text::trim(name.substr(8), text::line_blanks);
                    } else if (name != "default") {
                        current = nullptr;  // "[sso-session x]", "[services x]" or a bare name: not a profile
                        continue;
                    }
                }
                if (name.empty()) throw fail("empty section name");
                current = &sections_[std::string(name)];
                continue;
            }
            auto eq = line.find('=');
            if (eq == std::string_view::npos) throw fail("expected 'key = value'");
            if (!current) continue;
            const std::string key = text::to_lower(text::trim(line.substr(0, eq), text::line_blanks));
            std::string value(text::trim(line.substr(eq + 1), text::line_blanks));
            if (key.empty()) throw fail("empty key");
            if (indented && !parent.empty()) {
                (*current)[parent + "." + key] = value;
                continue;
            }
            parent = value.empty() ? key : std::string();
            (*current)[key] = std::move(value);
        }
    }

    std::string path_;
    std::map<std::string, Section> sections_;
};

// The two shared files and the selected profile.
struct AwsProfiles {
    std::string profile = "default";
    bool profile_explicit = false;  // set through AWS_PROFILE / AWS_DEFAULT_PROFILE
    ProfileFile credentials;
    ProfileFile config;

    static AwsProfiles load(const Environment& env) {
        AwsProfiles p;
        if (auto v = env_value(env, "AWS_PROFILE")) { p.profile = *v; p.profile_explicit = true; }
        else if (auto d = env_value(env, "AWS_DEFAULT_PROFILE")) { p.profile = *d; p.profile_explicit = true; }
        auto home = env_value(env, "HOME");
        auto path_of = [&](const char* var, const char* leaf) -> std::optional<std::filesystem::path> {
            if (auto v = env_value(env, var)) {
                if (v->starts_with("~/") && home) return std::filesystem::path(*home) / v->substr(2);
                return std::filesystem::path(*v);
            }
            if (home) return std::filesystem::path(*home) / ".aws" / leaf;
            return std::nullopt;
        };
        if (auto c = path_of("AWS_SHARED_CREDENTIALS_FILE", "credentials")) p.credentials = ProfileFile::load(*c, false);
        if (auto c = path_of("AWS_CONFIG_FILE", "config")) p.config = ProfileFile::load(*c, true);
        return p;
    }

    bool profile_exists() const { return credentials.profile(profile) || config.profile(profile); }
    // A setting of the selected profile: the credentials file first (for keys), then config.
    std::optional<std::string> get(std::string_view key) const {
        if (auto v = credentials.get(profile, key)) return v;
        return config.get(profile, key);
    }
    std::string describe_files() const {
        return "credentials file " + (credentials.path().empty() ? std::string("(none)") : credentials.path()) +
               ", config file " + (config.path().empty() ? std::string("(none)") : config.path());
    }
};

}  // namespace smdebug::net
