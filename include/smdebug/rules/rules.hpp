#pragma once
// Umbrella header of the rules layer: the rule concepts and RuleBase, RequiredTensors,
// invoke/invoke_rule, actions, string parameters and the built-in rules with their registry.
#include <smdebug/rules/actions/actions.hpp>
#include <smdebug/rules/actions/aws_actions.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/rules/required_tensors.hpp>
#include <smdebug/rules/rule.hpp>
