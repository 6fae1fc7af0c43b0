"""smdebug_cpp.pytorch: records PyTorch training as smdebug.pytorch does, through the C++ writer.

    import smdebug_cpp.pytorch as smd          # was: import smdebug.pytorch as smd
    hook = smd.Hook(out_dir="/tmp/run", save_config=smd.SaveConfig(save_interval=100),
                    include_collections=["weights", "gradients", "losses"])
    hook.register_module(model)
    hook.register_loss(criterion)

See docs/python.md "Recording from PyTorch".
"""
from .. import modes  # noqa: F401
from ..core.collection import CollectionKeys, ReductionConfig, SaveConfig, SaveConfigMode  # noqa: F401
from .collection import Collection  # noqa: F401
from .hook import Hook  # noqa: F401
from .singleton_utils import del_hook, get_hook, set_hook  # noqa: F401

__all__ = ["Hook", "Collection", "CollectionKeys", "ReductionConfig", "SaveConfig", "SaveConfigMode", "modes",
           "get_hook", "set_hook", "del_hook"]
