#pragma once
// The one place where the rules layer reads tensor values: many (tensor, step) pairs of one trial
// at once, each answered with its value or the exception value() would raise for it.
//
// The pairs of one step are read together through Tensor::values_at (one pass over each event
// file, files in parallel, values left in the read buffers). When a step's batch raises — some
// tensor is not available there — that step's pairs are read one by one, so that each pair gets
// its own answer.
#include <map>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

struct StepRead {
    std::string tensor;
    std::int64_t step = 0;
};

struct StepReadResult {
    std::optional<TensorValue> value;
    std::exception_ptr error;  // set when value is empty
};

template <Store S>
std::vector<StepReadResult> read_tensor_values(Trial<S>& trial, std::span<const StepRead> reads) {
    std::vector<StepReadResult> out(reads.size());
    auto read_one = [&](std::size_t i) {
        try {
            out[i].value = trial.tensor(reads[i].tensor).value(reads[i].step);
        } catch (...) {
            out[i].error = std::current_exception();
        }
    };
    std::map<std::int64_t, std::vector<std::size_t>> by_step;
    for (std::size_t i = 0; i < reads.size(); ++i) by_step[reads[i].step].push_back(i);
    for (const auto& [step, members] : by_step) {
        try {
            std::vector<Tensor<S>> tensors;
            tensors.reserve(members.size());
            for (auto i : members) tensors.push_back(trial.tensor(reads[i].tensor));
            auto values = Tensor<S>::values_at(tensors, step);
            for (auto i : members) out[i].value = values.at(reads[i].tensor);
        } catch (...) {
            for (auto i : members) read_one(i);
        }
    }
    return out;
}

}  // namespace smdebug
