from .collection import SaveConfig, SaveConfigMode  # noqa: F401
