#pragma once
// The message for a tensor name a trial does not hold, with the closest names it does hold.
#include <string>

#include "errors.hpp"
#include "suggest.hpp"

namespace cli {

// "unknown tensor 'x' in PATH; did you mean ...?" for a name the trial does not hold.
template <class TrialT>
std::string unknown_tensor_message(TrialT& trial, const std::string& name) {
    return "unknown tensor '" + name + "' in " + trial.path() + did_you_mean(name, trial.tensor_names()) +
           " (`smdebug tensors PATH` lists them)";
}
template <class TrialT>
void require_tensor(TrialT& trial, const std::string& name) {
    if (!trial.has_tensor(name)) throw usage_error(unknown_tensor_message(trial, name));
}

}  // namespace cli
