"""Actions of a rule, as smdebug.rules.action has them: ``Actions(action_str, rule_name)`` parses a JSON
object or list of {"name": "stoptraining", "training_job_prefix": ...} / {"name": "sms" | "email",
"endpoint": ...} into ``StopTrainingAction`` and ``MessageAction`` objects (modules ``action``,
``stop_training_action``, ``message_action``), run by ``invoke()`` when the rule fires. They call
SageMaker and SNS through the C++ library's signed AWS clients, with the credentials of the
environment (AWS_REGION, AWS_* variables, profiles, instance metadata); like the reference, they log
every AWS failure and raise none.

Action(spec) is one of the actions that work anywhere, as `smdebug rule --action SPEC` takes them
(docs/rules.md): webhook:URL, webhook-slack:URL, signal:PID[:SIG], exec:COMMAND, stop-file:PATH."""
from .action import ALLOWED_ACTIONS, Actions  # noqa: F401
from .message_action import MessageAction  # noqa: F401
from .stop_training_action import StopTrainingAction  # noqa: F401


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
