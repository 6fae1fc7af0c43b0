#pragma once
// The one place where the rules layer reads tensor values: many (tensor, step) pairs of one trial
// at once, each answered with its value or the exception value() would raise for it.
//
// The query layer's public API reads one value at a time (Tensor::value) or every step of one
// tensor (Tensor::values); the batched record reader behind values() (Trial::read_values) is not
// public. Until a public "many tensors of one step" batch read exists, this reads the pairs in
// order through Tensor::value. When it does, only this function changes (see docs/rules.md).
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
    for (std::size_t i = 0; i < reads.size(); ++i) {
        try {
            out[i].value = trial.tensor(reads[i].tensor).value(reads[i].step);
        } catch (...) {
            out[i].error = std::current_exception();
        }
    }
    return out;
}

}  // namespace smdebug
