#pragma once
// A self-contained HTML page: inline CSS, inline SVG, no scripts and no network.
#include <string>
#include <string_view>
#include <vector>

#include "../plot/svg.hpp"

namespace cli::report {

inline std::string html_escape(std::string_view s) { return svg::escape(s); }

class HtmlPage {
public:
    explicit HtmlPage(std::string title) : title_(std::move(title)) {}

    HtmlPage& heading(std::string_view text, int level = 2, std::string_view id = "") {
        const auto l = std::to_string(level);
        body_ += "<h" + l + (id.empty() ? "" : " id=\"" + html_escape(id) + "\"") + ">" + html_escape(text) + "</h" + l + ">\n";
        return *this;
    }
    HtmlPage& paragraph(std::string_view text, std::string_view css_class = "") {
        body_ += "<p" + (css_class.empty() ? std::string() : " class=\"" + std::string(css_class) + "\"") + ">" + html_escape(text) + "</p>\n";
        return *this;
    }
    // Rows of cells (escaped); the first row is the header.
    HtmlPage& table(const std::vector<std::vector<std::string>>& rows) {
        body_ += "<table>\n";
        for (std::size_t r = 0; r < rows.size(); ++r) {
            body_ += "<tr>";
            for (const auto& c : rows[r]) body_ += (r ? "<td>" : "<th>") + html_escape(c) + (r ? "</td>" : "</th>");
            body_ += "</tr>\n";
        }
        body_ += "</table>\n";
        return *this;
    }
    // An inline SVG document (from svg::Document::str(false)) in a figure.
    HtmlPage& figure(std::string_view svg_markup) {
        body_ += "<figure>\n";
        body_ += svg_markup;
        body_ += "</figure>\n";
        return *this;
    }

    std::string str() const {
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title_) +
               "</title>\n<style>\n"
               "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px 40px;color:#222;background:#fff}\n"
               "h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:32px}\n"
               "table{border-collapse:collapse;margin:8px 0;font-size:13px}\n"
               "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}\n"
               "figure{margin:12px 0}svg{max-width:100%;height:auto}\n"
               ".note{color:#666;font-size:13px}\n"
               "</style>\n</head>\n<body>\n<h1>" +
               html_escape(title_) + "</h1>\n" + body_ + "</body>\n</html>\n";
    }

private:
    std::string title_, body_;
};

}  // namespace cli::report
