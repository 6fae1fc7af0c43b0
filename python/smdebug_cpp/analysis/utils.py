"""no_refresh / refresh: switch a trial's (or a list of trials') automatic refresh off or on for
the body of a ``with`` block, as smdebug.analysis.utils. The previous settings come back after the
block, also when it raises."""
from contextlib import contextmanager


def _as_list(trials):
    return list(trials) if isinstance(trials, (list, tuple)) else [trials]


@contextmanager
def _dynamic_refresh(trials, on):
    items = _as_list(trials)
    before = [t.dynamic_refresh for t in items]
    for t in items:
        t.dynamic_refresh = on
    try:
        yield trials
    finally:
        for t, b in zip(items, before):
            t.dynamic_refresh = b


def no_refresh(trials):
    return _dynamic_refresh(trials, False)


def refresh(trials):
    return _dynamic_refresh(trials, True)


def parse_list_from_str(arg, delimiter=","):
    if arg is None:
        return []
    if isinstance(arg, str):
        return [] if len(arg) == 0 else arg.split(delimiter)
    return list(arg)


def parse_bool(arg, default):
    if arg is None:
        return default
    if arg in (False, True):
        return arg
    if arg in ("False", "false"):
        return False
    if arg in ("True", "true"):
        return True
    raise ValueError(f"boolean argument expected, but found {arg}")
