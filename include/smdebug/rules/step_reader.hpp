#pragma once
// The one place where the rules layer reads tensor values: many (tensor, step) pairs of one trial
// at once, each answered with its value or the exception value() would raise for it.
//
// The pairs of one step are read together through Tensor::shared_values_at (one pass over each event
// file, files in parallel, values left in the read buffers). When a step's batch raises — some
// tensor is not available there — that step's pairs are read one by one, so that each pair gets
// its own answer.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

// One (tensor, step) pair; `tensor` must outlive the read.
struct StepRead {
    const std::string* tensor = nullptr;
    std::int64_t step = 0;
};

struct StepReadResult {
    std::shared_ptr<const TensorValue> value;  // shared with the read buffers (and the trial's cache)
    std::exception_ptr error;                  // set when value is null
};

template <Store S>
std::vector<StepReadResult> read_tensor_values(Trial<S>& trial, std::span<const StepRead> reads) {
    std::vector<StepReadResult> out(reads.size());
    auto read_one = [&](std::size_t i) {
        try {
            out[i].value = std::make_shared<const TensorValue>(trial.tensor(*reads[i].tensor).value(reads[i].step));
        } catch (...) {
            out[i].error = std::current_exception();
        }
    };
    // The pairs grouped by step, steps ascending (a rule's walk); most often a single step.
    std::vector<std::size_t> order(reads.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reads[a].step < reads[b].step; });
    std::vector<Tensor<S>> tensors;
    for (std::size_t begin = 0; begin < order.size();) {
        const std::int64_t step = reads[order[begin]].step;
        std::size_t end = begin;
        while (end < order.size() && reads[order[end]].step == step) ++end;
        const auto members = std::span<const std::size_t>(order).subspan(begin, end - begin);
        try {
            tensors.clear();
            tensors.reserve(members.size());
            for (auto i : members) tensors.push_back(trial.tensor(*reads[i].tensor));
            auto values = Tensor<S>::shared_values_at(tensors, step);
            for (std::size_t k = 0; k < members.size(); ++k) out[members[k]].value = std::move(values[k]);
        } catch (...) {
            for (auto i : members) read_one(i);
        }
        begin = end;
    }
    return out;
}

}  // namespace smdebug
