"""The process's hook, as smdebug.pytorch.singleton_utils: get_hook() returns the hook made last
(Hook() sets it), or with create_if_not_exists=True the one the JSON configuration describes
(SMDEBUG_CONFIG_FILE_PATH, else /opt/ml/input/config/debughookconfig.json); None when there is
none, or when USE_SMDEBUG turns the hook off."""
import os

from ..exceptions import SMDebugTypeError

_hook = None

_OFF = ("0", "false", "no", "off", "n", "f")


def _enabled_by_env():
    value = os.environ.get("USE_SMDEBUG")
    return value is None or value.strip().lower() not in _OFF


def get_hook(json_config_path=None, create_if_not_exists=False):
    global _hook
    if not _enabled_by_env():
        return None
    from .hook import Hook

    if _hook is not None and not isinstance(_hook, Hook):
        _hook = None
    if _hook is None and create_if_not_exists:
        try:
            set_hook(Hook.create_from_json_file(json_config_path))
        except FileNotFoundError:
            pass
    return _hook


def set_hook(custom_hook):
    from ..hook import Hook as BaseHook

    if not isinstance(custom_hook, BaseHook):
        raise SMDebugTypeError(f"custom_hook={custom_hook} must be an smdebug_cpp hook")
    global _hook
    _hook = custom_hook


def del_hook():
    global _hook
    _hook = None
