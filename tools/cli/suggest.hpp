#pragma once
// "Did you mean": the names closest to a misspelt tensor, rule, option or command.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// Levenshtein distance, case-insensitive (a transposition counts as two edits).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
            const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = row[j];
            row[j] = next;
        }
    }
    return row[b.size()];
}

// Up to `most` candidates within a few edits of `name` (about a third of its length, at least 2),
// closest first; ties in the candidates' order.
inline std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates, std::size_t most = 3) {
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, index)
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        if (c.size() > name.size() + limit || name.size() > c.size() + limit) continue;  // cannot be within the limit
        const auto d = edit_distance(name, c);
        if (d <= limit && c != name) scored.emplace_back(d, i);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (std::size_t k = 0; k < scored.size() && k < most; ++k) out.push_back(candidates[scored[k].second]);
    return out;
}

// "; did you mean 'a'?" / "; did you mean 'a', 'b' or 'c'?", or "" when nothing is close.
inline std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
    const auto names = closest_names(name, candidates);
    if (names.empty()) return {};
    std::string out = "; did you mean ";
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("'" + names[i] + "'");
    return out + "?";
}

}  // namespace cli
