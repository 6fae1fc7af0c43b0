#pragma once
// The exception hierarchy. Every exception the library throws derives from SMDebugError.
// python_name() is the class name the reference smdebug uses, so that conformance runners and
// users porting Python code can match on it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <smdebug/core/modes.hpp>

namespace smdebug {

class SMDebugError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    virtual const char* python_name() const noexcept { return "SMDebugError"; }
};

#define SMDEBUG_DEFINE_ERROR(Name, Base)                                         \
    class Name : public Base {                                                   \
    public:                                                                      \
        using Base::Base;                                                        \
        const char* python_name() const noexcept override { return #Name; }      \
    }

SMDEBUG_DEFINE_ERROR(SMDebugCustomerError, SMDebugError);
SMDEBUG_DEFINE_ERROR(SMDebugTypeError, SMDebugError);
SMDEBUG_DEFINE_ERROR(SMDebugValueError, SMDebugError);
SMDEBUG_DEFINE_ERROR(SMDebugRuntimeError, SMDebugError);
SMDEBUG_DEFINE_ERROR(SMDebugNotImplementedError, SMDebugError);
SMDEBUG_DEFINE_ERROR(IndexReaderException, SMDebugError);
SMDEBUG_DEFINE_ERROR(CollectionNotFound, SMDebugError);
SMDEBUG_DEFINE_ERROR(MissingCollectionFiles, SMDebugError);
SMDEBUG_DEFINE_ERROR(InvalidCollectionConfiguration, SMDebugError);
SMDEBUG_DEFINE_ERROR(InsufficientInformationForRuleInvocation, SMDebugError);

// C++-only errors (no reference counterpart): storage, format and transport failures.
SMDEBUG_DEFINE_ERROR(StorageError, SMDebugError);         // I/O failure on a store (names the key)
SMDEBUG_DEFINE_ERROR(ObjectNotFound, StorageError);       // the key/file does not exist
SMDEBUG_DEFINE_ERROR(FormatError, SMDebugError);          // corrupt or undecodable data (names the file)
SMDEBUG_DEFINE_ERROR(RecordCorrupted, FormatError);       // TFRecord framing / CRC failure
SMDEBUG_DEFINE_ERROR(TruncatedData, FormatError);         // data ends before a declared length
SMDEBUG_DEFINE_ERROR(FileRefused, FormatError);           // a trial's file that is not a regular file, or lies outside the trial
SMDEBUG_DEFINE_ERROR(RecordMismatch, FormatError);        // the record at an index entry holds another tensor or step (D24)
SMDEBUG_DEFINE_ERROR(PayloadChecksumMismatch, FormatError);  // a record's payload differs from the CRC-32C its index entry holds
SMDEBUG_DEFINE_ERROR(TimeoutError, SMDebugError);         // a caller-supplied wait timed out
SMDEBUG_DEFINE_ERROR(UsageError, SMDebugError);           // invalid argument to a C++ API

#undef SMDEBUG_DEFINE_ERROR

// A value in an index file that the reference refuses with SMDebugValueError (a negative mode
// step): the same class for Python and the conformance runners, but bad data, not a bad argument,
// for the CLI's exit codes.
class InvalidIndexValue : public SMDebugValueError {
public:
    using SMDebugValueError::SMDebugValueError;
};

class StepNotYetAvailable : public SMDebugError {
public:
    StepNotYetAvailable(std::int64_t step, Mode mode)
        : SMDebugError("Step " + std::to_string(step) + " of mode " + std::string(mode_name(mode)) +
                       " not yet available"),
          step(step), mode(mode) {}
    const char* python_name() const noexcept override { return "StepNotYetAvailable"; }
    std::int64_t step;
    Mode mode;
};

class StepUnavailable : public SMDebugError {
public:
    StepUnavailable(std::int64_t step, Mode mode)
        : SMDebugError("Step " + std::to_string(step) + " of mode " + std::string(mode_name(mode)) +
                       " is not available as it was not saved"),
          step(step), mode(mode) {}
    const char* python_name() const noexcept override { return "StepUnavailable"; }
    std::int64_t step;
    Mode mode;
};

class TensorUnavailableForStep : public SMDebugError {
public:
    // D14: `tensor` is always the tensor; `reduction` names the reduction when one was asked for.
    TensorUnavailableForStep(std::string tensor, std::int64_t step, Mode mode = Mode::GLOBAL,
                             bool has_reductions = false, std::string reduction = {})
        : SMDebugError(message(tensor, step, mode, has_reductions, reduction)),
          tensor(std::move(tensor)), step(step), mode(mode), has_reductions(has_reductions),
          reduction(std::move(reduction)) {}
    const char* python_name() const noexcept override { return "TensorUnavailableForStep"; }
    std::string tensor;
    std::int64_t step;
    Mode mode;
    bool has_reductions;
    std::string reduction;

private:
    static std::string message(const std::string& t, std::int64_t step, Mode mode, bool has_red,
                               const std::string& red) {
        std::string m = "Value for tensor " + t;
        if (!red.empty()) m += " (reduction " + red + ")";
        m += " is not available for step " + std::to_string(step) + " with mode " +
             std::string(mode_name(mode)) + " as it was not saved.";
        if (has_red) m += "This tensor has reductions saved for this step. You might want to query for the reductions.";
        return m;
    }
};

class ShapeUnavailableForStep : public SMDebugError {
public:
    ShapeUnavailableForStep(std::string tensor, std::int64_t step, Mode mode = Mode::GLOBAL)
        : SMDebugError("Shape for tensor " + tensor + " is not available for step " + std::to_string(step) +
                       " with mode " + std::string(mode_name(mode)) + " as it was not saved."),
          tensor(std::move(tensor)), step(step), mode(mode) {}
    const char* python_name() const noexcept override { return "ShapeUnavailableForStep"; }
    std::string tensor;
    std::int64_t step;
    Mode mode;
};

class TensorUnavailable : public SMDebugError {
public:
    explicit TensorUnavailable(std::string tensor)
        : SMDebugError("Tensor " + tensor + " was not saved."), tensor(std::move(tensor)) {}
    const char* python_name() const noexcept override { return "TensorUnavailable"; }
    std::string tensor;
};

class InvalidWorker : public SMDebugError {
public:
    explicit InvalidWorker(std::string worker)
        : SMDebugError("Invalid Worker: " + worker), worker(std::move(worker)) {}
    const char* python_name() const noexcept override { return "InvalidWorker"; }
    std::string worker;
};

class NoMoreData : public SMDebugError {
public:
    NoMoreData(std::int64_t step, Mode mode, std::int64_t last_step)
        : SMDebugError("Looking for step " + std::to_string(step) + " of mode " + std::string(mode_name(mode)) +
                       " and reached end of training. Max step available is " + std::to_string(last_step)),
          step(step), mode(mode), last_step(last_step) {}
    const char* python_name() const noexcept override { return "NoMoreData"; }
    std::int64_t step;
    Mode mode;
    std::int64_t last_step;
};

class RuleEvaluationConditionMet : public SMDebugError {
public:
    RuleEvaluationConditionMet(std::string rule_name, std::int64_t step, bool end_of_rule = false)
        : SMDebugError("Evaluation of the rule " + rule_name + " at step " + std::to_string(step) +
                       " resulted in the condition being met"),
          rule_name(std::move(rule_name)), step(step), end_of_rule(end_of_rule) {}
    const char* python_name() const noexcept override { return "RuleEvaluationConditionMet"; }
    std::string rule_name;
    std::int64_t step;
    bool end_of_rule;
};

}  // namespace smdebug
