#pragma once
// The query layer's internal types, declared: what the public headers (trial.hpp, tensor.hpp)
// name in signatures without needing their definitions.
#include <span>

#include <smdebug/storage/store.hpp>

namespace smdebug::detail {
struct Location;
struct StepData;
class StepEntry;
using WorkerSteps = std::span<const StepEntry>;
struct TensorData;
class StepIndex;
template <Store S> class RecordReader;
template <Store S> class ReadEngine;
template <Store S> class TrialImpl;
}  // namespace smdebug::detail
