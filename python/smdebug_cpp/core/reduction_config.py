"""ReductionConfig and the reduction names, where smdebug.core.reduction_config has them."""
from .. import _core
from .collection import ReductionConfig  # noqa: F401

# The library's names (core/reductions.hpp), in the reference's order.
ALLOWED_REDUCTIONS, ALLOWED_NORMS = (list(names) for names in _core.reduction_names())
