#pragma once
// What a saved tensor is in the training computation, from its name and the trial's collections
// (the names the hooks give: `<module>_input_<i>` / `<module>_output_<i>` for a module's inputs and
// outputs, `gradients/<parameter>` (smdebug-cpp's Hook) or `gradient/<parameter>` (the reference
// PyTorch hook) for gradients; collections `weights`, `biases`, `gradients`, `losses`): a module input or output, a weight, a gradient, the loss, or another tensor.
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <smdebug/query/trial.hpp>

namespace smdebug::analysis {

enum class TensorRole { module_input, module_output, weight, gradient, loss, other };

constexpr std::string_view role_name(TensorRole r) noexcept {
    constexpr std::string_view names[] = {"module_input", "module_output", "weight", "gradient", "loss", "tensor"};
    return names[static_cast<int>(r)];
}

// A module tensor's name split: `fc1_output_0` is module `fc1`, output 0.
struct ModuleTensorName {
    std::string module;
    bool output = false;
    int index = 0;
};

inline std::optional<ModuleTensorName> parse_module_tensor_name(std::string_view name) {
    for (const std::string_view kind : {std::string_view("_output_"), std::string_view("_input_")}) {
        const auto at = name.rfind(kind);
        if (at == std::string_view::npos || at == 0) continue;
        const auto digits = name.substr(at + kind.size());
        if (digits.empty() || digits.size() > 6) continue;
        int index = 0;
        bool ok = true;
        for (const char c : digits) {
            if (!std::isdigit(static_cast<unsigned char>(c))) ok = false;
            else index = index * 10 + (c - '0');
        }
        if (ok) return ModuleTensorName{std::string(name.substr(0, at)), kind == "_output_", index};
    }
    return std::nullopt;
}

// The roles of a trial's tensors; the collections are read once.
class TensorRoles {
public:
    template <Store S>
    explicit TensorRoles(Trial<S>& trial) {
        auto members = [&](const char* collection, std::set<std::string>& into) {
            TensorNamesQuery q;
            q.collection = collection;
            for (auto& n : trial.tensor_names(q)) into.insert(std::move(n));
        };
        members("losses", losses_);
        members("weights", weights_);
        members("biases", weights_);
        members("gradients", gradients_);
    }

    TensorRole role(const std::string& name) const {
        if (name.starts_with("gradients/") || name.starts_with("gradient/") || gradients_.contains(name)) return TensorRole::gradient;
        if (losses_.contains(name)) return TensorRole::loss;
        if (weights_.contains(name) || name.ends_with(".weight") || name.ends_with(".bias")) return TensorRole::weight;
        if (const auto m = parse_module_tensor_name(name)) {
            if (m->output && lowercase_contains(m->module, "loss")) return TensorRole::loss;
            return m->output ? TensorRole::module_output : TensorRole::module_input;
        }
        if (lowercase_contains(name, "loss")) return TensorRole::loss;
        return TensorRole::other;
    }

private:
    static bool lowercase_contains(std::string_view s, std::string_view needle) {
        std::string lower(s);
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return lower.find(needle) != std::string::npos;
    }
    std::set<std::string> losses_, weights_, gradients_;
};

}  // namespace smdebug::analysis
