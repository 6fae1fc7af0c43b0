#pragma once
// Umbrella header of the rules layer: the rule concepts and RuleBase, RequiredTensors,
// invoke/invoke_rule, actions, string parameters and the built-in rules with their registry.
// The AWS actions (SNS, StopTrainingJob) are opt-in: <smdebug/rules/actions/aws_actions.hpp>
// brings the HTTP client (Asio, OpenSSL), which this header does not (ctest -R headers.).
#include <smdebug/rules/actions/actions.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/rules/required_tensors.hpp>
#include <smdebug/rules/rule.hpp>
#include <smdebug/rules/rule_set.hpp>
