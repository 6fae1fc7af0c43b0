"""The exceptions of smdebug's analysis API: the same names, hierarchy and attributes as
``smdebug.exceptions``, so that ``except smdebug_cpp.exceptions.StepUnavailable`` catches what
``except smdebug.exceptions.StepUnavailable`` did. Messages are the C++ library's.

C++-only failures (storage, format, transport) have their own classes under ``SMDebugError``:
``StorageError`` (``ObjectNotFound``), ``FormatError`` (``RecordCorrupted``, ``TruncatedData``,
``FileRefused``), ``TimeoutError`` and ``UsageError``.
"""
import builtins

from .core.modes import ModeKeys, _to_mode_keys


class SMDebugError(Exception):
    """Base of every exception smdebug_cpp raises for bad data, missing data or a bad call."""


class SMDebugCustomerError(SMDebugError):
    pass


class SMDebugTypeError(SMDebugError, TypeError):
    pass


class SMDebugRuntimeError(SMDebugError, RuntimeError):
    pass


class SMDebugNotImplementedError(SMDebugError, NotImplementedError):
    pass


class SMDebugValueError(SMDebugError, ValueError):
    pass


class InvalidCollectionConfiguration(SMDebugError):
    def __init__(self, c_name):
        self.c_name = c_name
        super().__init__(f"Collection {c_name} is not valid")


class StepNotYetAvailable(SMDebugError):
    def __init__(self, step, mode):
        self.step = step
        self.mode = mode
        super().__init__(f"Step {step} of mode {mode} not yet available")


class MissingCollectionFiles(SMDebugError):
    def __init__(self, *args):
        super().__init__(*(args or ("Training job has ended. All the collection files could not be loaded",)))


class IndexReaderException(SMDebugError):
    def __init__(self, message):
        self.message = message
        super().__init__(message)


class StepUnavailable(SMDebugError):
    def __init__(self, step, mode):
        self.step = step
        self.mode = mode
        super().__init__(f"Step {step} of mode {mode} is not available as it was not saved")


class TensorUnavailableForStep(SMDebugError):
    def __init__(self, tname, step, mode=ModeKeys.GLOBAL, has_reductions=False):
        self.step = step
        self.mode = mode
        self.tname = tname
        self.has_reductions = has_reductions
        self.reduction = None
        msg = f"Value for tensor {tname} is not available for step {step} with mode {getattr(mode, 'name', mode)} as it was not saved."
        if has_reductions:
            msg += "This tensor has reductions saved for this step. You might want to query for the reductions."
        super().__init__(msg)


class ShapeUnavailableForStep(SMDebugError):
    def __init__(self, tname, step, mode=ModeKeys.GLOBAL):
        self.step = step
        self.mode = mode
        self.tname = tname
        super().__init__(f"Shape for tensor {tname} is not available for step {step} with mode {getattr(mode, 'name', mode)} as it was not saved.")


class TensorUnavailable(SMDebugError):
    def __init__(self, tname):
        self.tname = tname
        super().__init__(f"Tensor {tname} was not saved.")


class InvalidWorker(SMDebugError):
    def __init__(self, worker):
        self.worker = worker
        super().__init__(f"Invalid Worker: {worker}")


class NoMoreProfilerData(SMDebugError):
    def __init__(self, timestamp):
        self.timestamp = timestamp
        self.msg = f"Looking for timestamp {timestamp} and reached end of training."
        super().__init__(self.msg)


class NoMoreData(SMDebugError):
    def __init__(self, step, mode, last_step):
        self.step = step
        self.mode = mode
        self.last_step = last_step
        self.msg = (f"Looking for step {step} of mode {mode} and reached end of training. "
                    f"Max step available is {last_step}")
        super().__init__(self.msg)


class RuleEvaluationConditionMet(SMDebugError):
    def __init__(self, rule_name, step, end_of_rule=False):
        self.rule_name = rule_name
        self.step = step
        self.end_of_rule = end_of_rule
        super().__init__(f"Evaluation of the rule {rule_name} at step {step} resulted in the condition being met")


class InsufficientInformationForRuleInvocation(SMDebugError):
    def __init__(self, rule_name, message):
        self.rule_name = rule_name
        self.message = message
        super().__init__(f"Insufficient information to invoke rule {rule_name}: {message}")


# ---- C++-only errors ---------------------------------------------------------------------------

class CollectionNotFound(SMDebugError, KeyError):
    """A collection that is not in the trial's collection files (D8)."""

    def __str__(self):  # KeyError would quote the message
        return Exception.__str__(self)


class StorageError(SMDebugError, OSError):
    """An I/O failure on a store; the message names the file or key."""


class ObjectNotFound(StorageError, FileNotFoundError):
    """The file or key does not exist."""


class FormatError(SMDebugError, ValueError):
    """Corrupt or undecodable data; the message names the file."""


class RecordCorrupted(FormatError):
    """A TFRecord framing or CRC failure."""


class TruncatedData(FormatError):
    """Data ends before a declared length."""


class FileRefused(FormatError):
    """A trial's file that is not a regular file, or that lies outside the trial."""


class RecordMismatch(FormatError):
    """The record at an index entry holds another tensor or step (D24)."""


class PayloadChecksumMismatch(FormatError):
    """A record's payload differs from the CRC-32C its index entry holds (a changed value)."""


class TimeoutError(SMDebugError, builtins.TimeoutError):
    """A wait (for a trial, its collection files or steps) passed its timeout."""


class UsageError(SMDebugError, ValueError):
    """An invalid argument."""


class InvalidActionSpec(UsageError):
    """A rule action's spec that cannot work (unknown kind, bad URL, PID or signal)."""


class ActionFailed(SMDebugRuntimeError):
    """A rule action that could not do its job (webhook unreachable, command failed)."""


class UnknownRule(SMDebugValueError):
    """No built-in rule has this name."""


class UnknownRuleParameter(SMDebugValueError):
    """The built-in rule has no parameter of this name."""


class InvalidRuleParameter(SMDebugValueError):
    """A built-in rule's parameter is malformed, out of range, or missing."""


# ---- from the C++ library ----------------------------------------------------------------------

_ATTRS_WITH_MODE = ("mode",)


def _known(name):
    cls = globals().get(name)
    return cls if isinstance(cls, type) and issubclass(cls, SMDebugError) else None


def _from_cpp(python_name, message, attrs, fallback="SMDebugError"):
    """The exception for a C++ error: the class named `python_name` (else `fallback`, the nearest
    class it derives from), its reference attributes from `attrs`, and the C++ message as str(e)."""
    cls = _known(python_name) or _known(fallback) or SMDebugError
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    for key, value in attrs.items():
        if key in _ATTRS_WITH_MODE:
            value = _to_mode_keys(value)
        setattr(exc, key, value)
    if python_name == "TensorUnavailableForStep" and not getattr(exc, "reduction", None):
        exc.reduction = None
    if cls in (NoMoreData, NoMoreProfilerData):
        exc.msg = message
    if cls is IndexReaderException:
        exc.message = message
    return exc


__all__ = [n for n, v in list(globals().items()) if isinstance(v, type) and issubclass(v, BaseException)]
