"""Actions(action_str, rule_name): the actions of a rule, as smdebug.rules.action.action.Actions."""
import json
import logging

from .message_action import MessageAction
from .stop_training_action import StopTrainingAction

logger = logging.getLogger("smdebug_cpp")

ALLOWED_ACTIONS = ["stoptraining", "sms", "email"]


class Actions:
    """Parses an action string as the reference does (lower-cased): a JSON object or a list of them.
    The parsing is the C++ library's (Actions::parse, rules/actions/actions.hpp): an entry that is
    not an object, lacks its parameter or names an unknown action is logged and skipped; invalid
    JSON raises json.JSONDecodeError as in the reference. Each action is made here (its AWS set-up
    calls happen now) and kept in ``_actions``; ``invoke(message)`` runs them."""

    def __init__(self, actions_str="", rule_name=""):
        self._actions = []
        self.rule_name = rule_name
        actions_str = actions_str.strip() if actions_str is not None else ""
        self.actions_str = actions_str
        if actions_str == "":
            logger.info(f"No action specified for rule {rule_name}.")
            return
        self._register_actions(actions_str, rule_name)

    def _register_actions(self, actions_str="", rule_name=""):
        from ... import _core
        from ...exceptions import InvalidRuleParameter

        actions_str = actions_str.lower()
        logger.info(f"Action string: {actions_str} and rule_name:{rule_name}")
        try:
            entries, log = _core.parse_actions(actions_str, rule_name)
        except InvalidRuleParameter:
            json.loads(actions_str)  # the reference's json.JSONDecodeError, with its position
            raise
        for line in log:
            logger.info(line)
        for name, value in entries:
            if name == "stoptraining":
                self._actions.append(StopTrainingAction(rule_name, value))
            else:  # sms, email
                self._actions.append(MessageAction(rule_name, name, value))

    def __len__(self):
        return len(self._actions)

    def invoke(self, message=""):
        logger.info("Invoking actions")
        for action in self._actions:
            action.invoke(message)
