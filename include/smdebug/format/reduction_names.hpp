#pragma once
// Stored reductions are saved as tensors of their own, named
//     "smdebug/reductions/[abs_]<reduction>/<tensor>"
// (the tensor name kept verbatim). The writer builds these names and the reader takes them apart
// with the two functions below, so the convention is written once.
#include <optional>
#include <string>
#include <string_view>

namespace smdebug {

inline constexpr std::string_view reductions_prefix = "smdebug/reductions/";

inline std::string reduction_tensor_name(std::string_view tensor, std::string_view reduction, bool abs) {
    return std::string(reductions_prefix) + (abs ? "abs_" : "") + std::string(reduction) + "/" + std::string(tensor);
}

// The parts of a stored-reduction tensor name.
struct ReductionTensorName {
    std::string tensor;     // the tensor the reduction was computed from
    std::string reduction;  // "max", "l2", ...
    bool abs = false;       // computed on absolute values
};

// Nothing when `name` is not a stored-reduction name. As the reference reader, the marker may
// appear anywhere in the name (a framework prefix before it is dropped).
inline std::optional<ReductionTensorName> parse_reduction_tensor_name(std::string_view name) {
    const auto pos = name.find(reductions_prefix);
    if (pos == std::string_view::npos) return std::nullopt;
    const std::string_view rest = name.substr(pos + reductions_prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view red = rest.substr(0, slash);
    bool abs = false;
    if (const auto a = red.find("abs_"); a != std::string_view::npos) {
        abs = true;
        red = red.substr(a + 4);
    }
    return ReductionTensorName{std::string(rest.substr(slash + 1)), std::string(red), abs};
}

}  // namespace smdebug
