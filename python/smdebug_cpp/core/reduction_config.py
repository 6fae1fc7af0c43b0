from .collection import ReductionConfig  # noqa: F401
