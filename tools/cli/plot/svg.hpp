#pragma once
// Minimal SVG writing: escaping, number formatting and a document builder. No dependency.
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

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

// Series colours: the Tableau 10 palette first, then colours spread around the hue circle by the
// golden angle with three alternating lightnesses, so that 50 series stay told apart.
inline constexpr std::string_view palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
inline std::string colour(std::size_t i) {
    if (i < std::size(palette)) return std::string(palette[i]);
    const std::size_t k = i - std::size(palette);
    const double hue = std::fmod(15.0 + 137.508 * static_cast<double>(k), 360.0);
    static constexpr double lightness[] = {0.42, 0.58, 0.32}, saturation[] = {0.75, 0.62, 0.55};
    const double l = lightness[k % 3], sat = saturation[k % 3];
    const double c = (1 - std::fabs(2 * l - 1)) * sat, hp = hue / 60, x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1)), m = l - c / 2;
    double r = 0, g = 0, b = 0;
    if (hp < 1) r = c, g = x;
    else if (hp < 2) r = x, g = c;
    else if (hp < 3) g = c, b = x;
    else if (hp < 4) g = x, b = c;
    else if (hp < 5) r = x, b = c;
    else r = c, b = x;
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround((r + m) * 255)), static_cast<int>(std::lround((g + m) * 255)),
                  static_cast<int>(std::lround((b + m) * 255)));
    return buf;
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
