#pragma once
// The loss tensors of Overfit, Overtraining and PoorWeightInitialization: the tensors saved at the
// step that match `tensor_regex`, or, without patterns, those of collection `losses`, or, when
// the trial has no such collection, those whose name contains "loss" (any case). Only scalar
// (one-element) values are used.
#include <optional>
#include <string>
#include <vector>

#include <smdebug/rules/builtin/common.hpp>

namespace smdebug::detail {

class LossTensors {
public:
    explicit LossTensors(const std::vector<std::string>& regex) : by_regex_(regex.empty() ? std::nullopt : std::optional(TensorSelection({}, regex))) {}

    template <Store S>
    std::vector<std::string> at_step(Trial<S>& t, std::int64_t step) {
        if (by_regex_) return by_regex_->at_step(t, step);
        if (t.collections().contains("losses")) return losses_.at_step(t, step);
        std::vector<std::string> out;
        for (auto& n : all_tensors_at_step(t, step))
            if (text::to_lower(n).find("loss") != std::string::npos) out.push_back(std::move(n));
        return out;
    }

private:
    std::optional<TensorSelection> by_regex_;
    TensorSelection losses_{{"losses"}, {}};
};

inline std::optional<double> scalar_value(const TensorValue& v) {
    const auto d = as_doubles(v);
    if (d.size() != 1) return std::nullopt;
    return d[0];
}

}  // namespace smdebug::detail
