"""smdebug.pytorch.collection's names: Collection (a view of the C++ Hook's collection, see
smdebug_cpp/hook.py) and CollectionKeys."""
from ..core.collection import CollectionKeys  # noqa: F401
from ..hook import Collection  # noqa: F401

__all__ = ["Collection", "CollectionKeys"]
