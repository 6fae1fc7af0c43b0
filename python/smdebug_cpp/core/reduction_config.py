"""ReductionConfig and the reduction names, where smdebug.core.reduction_config has them."""
from .collection import ReductionConfig  # noqa: F401

ALLOWED_REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod"]
ALLOWED_NORMS = ["l1", "l2"]
