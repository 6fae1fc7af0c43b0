#pragma once
// TreeDepth (docs/rules.md "Built-in rules": name and default; definition from the AWS "TreeDepth"
// rule, which measures the depth of an XGBoost model's trees as the base-2 logarithm of the largest
// node ID).
// The smdebug XGBoost hook saves the model's tree table column by column as tensors
// "trees/<column>"; the node IDs are tensor "trees/Node". At a step where it was saved the
// measured depth is floor(log2(largest node ID)) and the rule fires when it exceeds `depth`
// (trees deeper than configured). Steps without "trees/Node" are skipped.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct TreeDepthParams {
    static constexpr std::string_view rule_name = "TreeDepth";
    static constexpr std::string_view fires_when = "floor(log2(largest node ID)) of the XGBoost trees (tensor trees/Node) exceeds depth";
    static constexpr bool step_local = true;

    std::int64_t depth = rule_param_default(&TreeDepthParams::depth);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&TreeDepthParams::depth, "depth", "4", "largest allowed tree depth")};
    }
    static TreeDepthParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<TreeDepthParams>(rule, p); }
};

template <Store S>
class TreeDepth : public RuntimeRule<S> {
public:
    using Params = TreeDepthParams;
    static constexpr const char* node_tensor = "trees/Node";
    explicit TreeDepth(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "TreeDepth"), p_(p) {}

    void set_required_tensors(std::int64_t step) override { this->require(node_tensor, step); }
    bool invoke_at_step(std::int64_t step) override {
        const auto ids = detail::as_doubles(this->value(node_tensor, step));
        if (ids.empty()) return false;
        const double largest = *std::max_element(ids.begin(), ids.end());
        const auto measured = largest >= 1 ? static_cast<std::int64_t>(std::floor(std::log2(largest))) : 0;
        if (measured > p_.depth)
            return this->fired("largest node ID " + text::format_double(largest) + ": depth " + std::to_string(measured) + " > " +
                               std::to_string(p_.depth));
        return false;
    }

private:
    Params p_;
};

}  // namespace smdebug
