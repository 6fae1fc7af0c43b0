"""Rules: subclass Rule in Python, or run SageMaker's built-in rules (run by the C++ library)."""
from .builtin import *  # noqa: F401,F403
from .builtin import BuiltinRule, builtin_rule_names, is_step_local_rule, make_rule, run_builtin_rule  # noqa: F401
from .action import Actions  # noqa: F401
from .req_tensors import RequiredTensors, RequiredTensorsForTrial  # noqa: F401
from .rule import Rule  # noqa: F401
from .rule_invoker import invoke_rule  # noqa: F401
