"""invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False), as smdebug's: evaluates
the rule at every global step from start_step, skipping steps where its tensors are missing.

With end_step=None it runs until training ends (smdebug_cpp stops at NoMoreData, D17, where the
reference would raise it). A built-in rule runs its whole loop in C++ with the GIL released."""
import logging

from ..exceptions import (NoMoreData, NoMoreProfilerData, RuleEvaluationConditionMet, StepUnavailable,
                          TensorUnavailable, TensorUnavailableForStep)

logger = logging.getLogger("smdebug_cpp")


def _check_step(value, name, allow_none):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, not {type(value).__name__}")
    return value


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    step = 0 if start_step is None else _check_step(start_step, "start_step", False)
    end_step = _check_step(end_step, "end_step", True)
    run = getattr(rule_obj, "_run_builtin", None)
    if run is not None:
        return run(step, end_step, raise_eval_cond)
    logger.info("Started execution of rule %s at step %d", type(rule_obj).__name__, step)
    while end_step is None or step < end_step:
        try:
            rule_obj.invoke(step)
        except (TensorUnavailableForStep, StepUnavailable, TensorUnavailable) as e:
            logger.debug(str(e))
        except RuleEvaluationConditionMet as e:
            if raise_eval_cond:
                raise
            logger.debug(str(e))
            if e.end_of_rule:
                break
        except NoMoreProfilerData as e:
            logger.info("No more profiler data for rule %s at timestamp %s", type(rule_obj).__name__, e.timestamp)
            break
        except NoMoreData as e:
            logger.info(str(e))
            break
        step += 1
    logger.info("Ended execution of rule %s at end_step %d", type(rule_obj).__name__, step - 1)
