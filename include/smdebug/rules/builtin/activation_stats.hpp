#pragma once
// Per-node activity of an activation tensor, shared by DeadRelu and SaturatedActivation.
// The first axis is the batch (a tensor of rank 0 or 1 is one sample); every other element
// position is a node. A node's activity is the percentage of samples for which `active(x)` holds.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug::detail {

struct NodeActivity {
    std::size_t nodes = 0;
    std::size_t inactive = 0;  // nodes whose activity is below the inactivity threshold
    double inactive_percent() const { return nodes ? 100.0 * static_cast<double>(inactive) / static_cast<double>(nodes) : 0.0; }
};

template <class Active>
NodeActivity node_activity(const TensorValue& v, double threshold_inactivity, Active&& active) {
    NodeActivity out;
    const auto x = as_doubles(v);
    if (x.empty()) return out;
    const std::size_t batch = v.rank() >= 2 ? v.shape()[0] : 1;
    const std::size_t nodes = x.size() / batch;
    out.nodes = nodes;
    for (std::size_t n = 0; n < nodes; ++n) {
        std::size_t on = 0;
        for (std::size_t b = 0; b < batch; ++b) on += active(x[b * nodes + n]) ? 1 : 0;
        if (100.0 * static_cast<double>(on) / static_cast<double>(batch) < threshold_inactivity) ++out.inactive;
    }
    return out;
}

}  // namespace smdebug::detail
