"""Actions(action_str, rule_name): the actions of a rule, as smdebug.rules.action.action.Actions."""
import json
import logging

from .message_action import MessageAction
from .stop_training_action import StopTrainingAction

logger = logging.getLogger("smdebug_cpp")

ALLOWED_ACTIONS = ["stoptraining", "sms", "email"]


class Actions:
    """Parses an action string (lower-cased, as the reference does): a JSON object or a list of them.
    An entry that is not an object, lacks its parameter or names an unknown action is logged and
    skipped; invalid JSON raises json.JSONDecodeError as in the reference. Each action is made here
    (its AWS set-up calls happen now) and kept in ``_actions``; ``invoke(message)`` runs them."""

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
        actions_str = actions_str.lower()
        parsed = json.loads(actions_str)
        if isinstance(parsed, dict):
            items = [parsed]
        elif isinstance(parsed, list):
            items = parsed
        else:
            logger.info(f"Action string: {actions_str}, expected either a list of dict or dict. Skipping action registering")
            return
        for item in items:
            if not isinstance(item, dict):
                logger.info(f"expected dictionary for action, got {item} . Skipping this action.")
                continue
            if "name" not in item:
                continue
            name = item["name"]
            if name == "stoptraining":
                prefix = item.get("training_job_prefix")
                if prefix is None:
                    logger.info(f"Action :{name} requires 'training_job_prefix'  key to be specified. Action_dict is: {item}")
                    continue
                self._actions.append(StopTrainingAction(rule_name, prefix))
            elif name in ("sms", "email"):
                endpoint = item.get("endpoint")
                if endpoint is None:
                    logger.info(f"Action :{name} requires endpoint key parameter. ")
                    continue
                self._actions.append(MessageAction(rule_name, name, endpoint))
            else:
                logger.info(f"Action :{name} not supported. Allowed action names are: {ALLOWED_ACTIONS}")

    def __len__(self):
        return len(self._actions)

    def invoke(self, message=""):
        logger.info("Invoking actions")
        for action in self._actions:
            action.invoke(message)
