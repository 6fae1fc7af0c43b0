#pragma once
// Minimal SVG writing: escaping, number formatting and a document builder. No dependency.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace cli::svg {

inline std::string escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

// Coordinates with two decimals (enough for pixels, short files).
inline std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
}

// Tick labels: up to 4 significant digits, scientific for very large or small magnitudes.
inline std::string label(double v) {
    if (v == 0) return "0";
    char buf[32];
    const double a = std::fabs(v);
    if (a >= 1e5 || a < 1e-3) std::snprintf(buf, sizeof buf, "%.3g", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// Series colours: the Tableau 10 palette, then, one at a time, the colour of a grid over hue,
// saturation and lightness farthest (in RGB) from every colour chosen so far, so that 50 series
// stay told apart (any two of the first 50 differ by 66 or more in |dR| + |dG| + |dB|).
inline constexpr std::string_view palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
namespace detail {
using Rgb = std::array<int, 3>;
inline Rgb hsl_to_rgb(double hue, double sat, double light) {
    const double c = (1 - std::fabs(2 * light - 1)) * sat, hp = hue / 60, x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1)), m = light - c / 2;
    double r = 0, g = 0, b = 0;
    if (hp < 1) r = c, g = x;
    else if (hp < 2) r = x, g = c;
    else if (hp < 3) g = c, b = x;
    else if (hp < 4) g = x, b = c;
    else if (hp < 5) r = x, b = c;
    else r = c, b = x;
    return {static_cast<int>(std::lround((r + m) * 255)), static_cast<int>(std::lround((g + m) * 255)), static_cast<int>(std::lround((b + m) * 255))};
}
inline const std::vector<std::string>& series_colours() {
    static const std::vector<std::string> colours = [] {
        std::vector<Rgb> chosen;
        for (auto hex : palette)
            chosen.push_back({std::stoi(std::string(hex.substr(1, 2)), nullptr, 16), std::stoi(std::string(hex.substr(3, 2)), nullptr, 16),
                              std::stoi(std::string(hex.substr(5, 2)), nullptr, 16)});
        std::vector<Rgb> grid;
        for (int hue = 0; hue < 360; hue += 10)
            for (double light : {0.3, 0.45, 0.6})
                for (double sat : {0.55, 0.85}) grid.push_back(hsl_to_rgb(hue, sat, light));
        const auto distance = [](const Rgb& a, const Rgb& b) { return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]); };
        while (chosen.size() < 64) {
            int best = -1;
            std::size_t at = 0;
            for (std::size_t i = 0; i < grid.size(); ++i) {
                int nearest = 1 << 30;
                for (const auto& c : chosen) nearest = std::min(nearest, distance(grid[i], c));
                if (nearest > best) best = nearest, at = i;
            }
            chosen.push_back(grid[at]);
        }
        std::vector<std::string> out;
        for (const auto& c : chosen) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
            out.push_back(buf);
        }
        return out;
    }();
    return colours;
}
}  // namespace detail
inline std::string colour(std::size_t i) {
    const auto& colours = detail::series_colours();
    return colours[i % colours.size()];
}

class Document {
public:
    Document(double width, double height) : width_(width), height_(height) {}

    Document& raw(std::string_view s) { body_ += s; body_ += '\n'; return *this; }
    Document& rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = "") {
        body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) + "\" fill=\"" +
                 std::string(fill) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) + "/>\n";
        return *this;
    }
    Document& line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1, std::string_view extra = "") {
        body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" stroke=\"" +
                 std::string(stroke) + "\" stroke-width=\"" + num(width) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) + "/>\n";
        return *this;
    }
    Document& circle(double cx, double cy, double r, std::string_view fill, std::string_view extra = "") {
        body_ += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" + std::string(fill) + "\"" +
                 (extra.empty() ? "" : " " + std::string(extra)) + "/>\n";
        return *this;
    }
    // anchor: start, middle or end.
    Document& text(double x, double y, std::string_view s, std::string_view anchor = "start", double size = 12,
                   std::string_view extra = "") {
        body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\" text-anchor=\"" + std::string(anchor) +
                 "\"" + (extra.empty() ? "" : " " + std::string(extra)) + ">" + escape(s) + "</text>\n";
        return *this;
    }
    Document& polygon(const std::vector<std::pair<double, double>>& pts, std::string_view fill) {
        body_ += "<polygon fill=\"" + std::string(fill) + "\" points=\"";
        for (std::size_t i = 0; i < pts.size(); ++i) body_ += (i ? " " : "") + num(pts[i].first) + "," + num(pts[i].second);
        body_ += "\"/>\n";
        return *this;
    }
    Document& polyline(const std::vector<std::pair<double, double>>& pts, std::string_view stroke, double width = 2) {
        if (pts.empty()) return *this;
        body_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width) +
                 "\" stroke-linejoin=\"round\" points=\"";
        for (std::size_t i = 0; i < pts.size(); ++i) body_ += (i ? " " : "") + num(pts[i].first) + "," + num(pts[i].second);
        body_ += "\"/>\n";
        return *this;
    }

    // The finished document; `standalone` adds the XML declaration (for .svg files, not inline HTML).
    std::string str(bool standalone = true) const {
        std::string out = standalone ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : "";
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width_) + "\" height=\"" + num(height_) + "\" viewBox=\"0 0 " +
               num(width_) + " " + num(height_) + "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
        out += body_;
        return out + "</svg>\n";
    }

private:
    double width_, height_;
    std::string body_;
};

}  // namespace cli::svg
