"""Actions of a rule (action_str: a JSON object or list of {"name": "stoptraining",
"training_job_prefix": ...} / {"name": "sms" | "email", "endpoint": ...}), run when it fires.
They call SageMaker StopTrainingJob and SNS through the C++ library's signed AWS clients, with the
credentials of the environment (AWS_REGION, AWS_* variables, profiles, instance metadata).

Action(spec) is one of the actions that work anywhere, as `smdebug rule --action SPEC` takes them
(docs/rules.md): webhook:URL, webhook-slack:URL, signal:PID[:SIG], exec:COMMAND, stop-file:PATH."""
import json
import logging


logger = logging.getLogger("smdebug_cpp")

ALLOWED_ACTIONS = ["stoptraining", "sms", "email"]


class Actions:
    """Parses an action string as smdebug.rules.action.Actions. invoke() runs the actions; for
    built-in rules the C++ library runs them itself when the rule fires."""

    def __init__(self, actions_str="", rule_name=""):
        self.rule_name = rule_name
        self.actions_str = (actions_str or "").strip()
        self._actions = []
        if not self.actions_str:
            return
        try:
            parsed = json.loads(self.actions_str.lower())
        except ValueError as e:
            from ...exceptions import SMDebugValueError

            raise SMDebugValueError(f"action string of rule {rule_name} is not valid JSON: {e}") from None
        items = [parsed] if isinstance(parsed, dict) else parsed if isinstance(parsed, list) else []
        for item in items:
            if not isinstance(item, dict) or "name" not in item:
                logger.info("action %r is not an object with a name: skipped", item)
                continue
            name = item["name"]
            if name == "stoptraining" and item.get("training_job_prefix") is not None:
                self._actions.append(("stoptraining", item["training_job_prefix"]))
            elif name in ("sms", "email") and item.get("endpoint") is not None:
                self._actions.append((name, item["endpoint"]))
            else:
                logger.info("action %r not supported or incomplete (allowed: %s): skipped", item, ALLOWED_ACTIONS)

    def __len__(self):
        return len(self._actions)

    def invoke(self, message=""):
        """Runs each action through a one-step built-in AWS action (see docs/python.md)."""
        from ... import _core

        for kind, target in self._actions:
            _core.run_action(kind, target, self.rule_name, message)


class Action:
    """One action from a spec string. A spec that cannot work raises InvalidActionSpec here; calling
    the action runs it for one firing and raises ActionFailed when it fails (the message names the
    action without a URL's path or query, or a command's arguments)."""

    def __init__(self, spec, ca_file=None, timeout=10.0, max_attempts=3):
        from ... import _core

        self.spec = spec
        self.description = _core.check_action_spec(spec)
        self.ca_file = ca_file or ""
        self.timeout = float(timeout)
        self.max_attempts = int(max_attempts)

    def __repr__(self):
        return f"<smdebug_cpp action {self.description}>"

    def __call__(self, rule, step, message="", mode=None, mode_step=None, tensor=None, trial=""):
        from ... import _core

        mode_text = getattr(mode, "name", mode) or ""
        _core.run_action_spec(self.spec, rule, int(step), message or "", str(mode_text),
                              -1 if mode_step is None else int(mode_step), tensor or "", trial or "",
                              self.ca_file, self.timeout, self.max_attempts)
