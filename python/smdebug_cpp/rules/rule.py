"""Rule: subclass it and implement invoke_at_step(step), as smdebug.rules.Rule.

    class LossIsNaN(Rule):
        def __init__(self, base_trial):
            super().__init__(base_trial, action_str="")
        def set_required_tensors(self, step):
            self.req_tensors.add("loss", steps=[step])
        def invoke_at_step(self, step):
            return bool(np.isnan(self.base_trial.tensor("loss").value(step)).any())

    invoke_rule(LossIsNaN(trial), start_step=0)
"""
import logging
from abc import ABC, abstractmethod

from ..analysis.utils import no_refresh
from ..exceptions import RuleEvaluationConditionMet
from .action import Actions
from .req_tensors import RequiredTensors


class Rule(ABC):
    def __init__(self, base_trial, action_str="", other_trials=None):
        if other_trials is None and isinstance(action_str, (list, tuple)):
            # Rule(base_trial, [other]) — the issue's and many callers' order
            action_str, other_trials = "", action_str
        if action_str is not None and not isinstance(action_str, str):
            raise TypeError(f"action_str must be a string, not {type(action_str).__name__}")
        self.base_trial = base_trial
        self.other_trials = other_trials
        self.trials = [base_trial] + list(other_trials or [])
        self.req_tensors = RequiredTensors(self.base_trial, self.other_trials)
        self.logger = logging.getLogger("smdebug_cpp")
        self.rule_name = self.__class__.__name__
        self._actions = Actions(action_str, rule_name=self.rule_name)
        self.report = {"RuleTriggered": 0, "Violations": 0, "Details": {}, "Datapoints": 0, "RuleParameters": ""}

    def set_required_tensors(self, step):
        pass

    @abstractmethod
    def invoke_at_step(self, step):
        """True when the rule's condition is met at global step `step`."""

    def invoke(self, step):
        """Waits for `step`, fetches the required tensors and evaluates the rule at it, without
        refreshing in between; RuleEvaluationConditionMet when it fires."""
        self.base_trial.wait_for_steps([step])
        with no_refresh(self.trials):
            self.req_tensors.clear()
            self.set_required_tensors(step)
            self.req_tensors.fetch()
            val = self.invoke_at_step(step)
        if val:
            self._actions.invoke()
            raise RuleEvaluationConditionMet(self.rule_name, step)
