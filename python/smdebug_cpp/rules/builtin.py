"""The built-in rules of SageMaker Debugger, run by the C++ library.

Each is a class named as the rule (``ExplodingTensor``, ``VanishingGradient``, …) taking the base
trial, the rule's parameters as keywords (values as SageMaker passes them: strings, or Python
bools, numbers and lists) and ``action_str``; ``invoke_rule`` runs its whole loop in C++.

    from smdebug_cpp.rules import ExplodingTensor, invoke_rule
    rule = ExplodingTensor(trial, collection_names="gradients", only_nan=True)
    invoke_rule(rule, start_step=0, end_step=100)
    rule.fired   # [(step, tensor, finding), ...]: every tensor that fired at each step

``make_rule(name, base_trial, **params)`` does the same by name (case-insensitive).

``actions=["webhook:https://...", "signal:1234", ...]`` adds the actions that work anywhere
(``smdebug_cpp.rules.action.Action``), run by the C++ loop on every firing; a failed action is one
line on stderr and the loop goes on. ``ca_file`` trusts more CAs for https webhooks.
"""
from .. import _core
from ..exceptions import RuleEvaluationConditionMet, UnknownRule

_INFO = {name: (fires_when, params, needs_other, step_local)
         for name, fires_when, params, needs_other, step_local in _core.builtin_rules()}


def builtin_rule_names():
    return list(_INFO)


def is_step_local_rule(name):
    """Whether a built-in rule's answer at a step depends on that step's tensors only, so that
    step ranges can be checked apart (smdebug_cpp.dask.find_first)."""
    return _INFO[_canonical(name)][3]


def _canonical(name):
    if not isinstance(name, str):
        raise TypeError(f"rule name must be a string, not {type(name).__name__}")
    for n in _INFO:
        if n.lower() == name.strip().lower():
            return n
    raise UnknownRule(f"unknown built-in rule {name!r}; built-in rules: {', '.join(_INFO)}")


class BuiltinRule:
    """A built-in rule over a trial (and `other_trials` for SimilarAcrossRuns)."""

    rule_name = None

    def __init__(self, base_trial, action_str="", other_trials=None, actions=None, ca_file=None, **params):
        name = self.rule_name or params.pop("rule_name")
        self.rule_name = _canonical(name)
        self.base_trial = base_trial
        self.other_trials = list(other_trials or [])
        self.params = params
        self.fired = []
        if isinstance(actions, str):
            actions = [actions]
        self._rule = _core.BuiltinRule(self.rule_name, base_trial._core, params, [t._core for t in self.other_trials],
                                       action_str or "", list(actions or []), ca_file or "")

    def __repr__(self):
        return f"<smdebug_cpp built-in rule {self.rule_name} {self.params}>"

    def invoke(self, step):
        """Evaluates the rule at one step; RuleEvaluationConditionMet when it fires."""
        self._rule.invoke(step)

    def _run_builtin(self, start_step, end_step, raise_eval_cond, first_only=False):
        try:
            fired = self._rule.run(start_step, end_step, raise_eval_cond, first_only)
        except RuleEvaluationConditionMet:
            self.fired.extend(self._rule.take_fired())  # the step that raised, every finding of it
            raise
        self.fired.extend(fired)
        return fired


def make_rule(name, base_trial, action_str="", other_trials=None, actions=None, ca_file=None, **params):
    return BuiltinRule(base_trial, action_str, other_trials, actions=actions, ca_file=ca_file, rule_name=name, **params)


def run_builtin_rule(name, trial, params, start_step, end_step, first_only=False):
    """Every finding of built-in rule `name` in global steps [start_step, end_step) (None: until
    training ends): [(step, tensor, finding), ...], every tensor that fired at each firing step;
    only the first firing step's with first_only."""
    rule = make_rule(name, trial, **dict(params or {}))
    return rule._run_builtin(start_step, end_step, False, first_only)


def _make_class(name):
    fires_when, params, needs_other, step_local = _INFO[name]
    doc = f"Built-in rule {name}: fires when {fires_when}.\n\nParameters (strings, bools, numbers or lists):\n"
    doc += "\n".join(f"  {p} (default {d or 'none'}): {m}" for p, d, m in params)
    return type(name, (BuiltinRule,), {"rule_name": name, "__doc__": doc, "__module__": __name__})


for _name in _INFO:
    globals()[_name] = _make_class(_name)

__all__ = ["BuiltinRule", "make_rule", "run_builtin_rule", "is_step_local_rule", "builtin_rule_names"] + list(_INFO)
