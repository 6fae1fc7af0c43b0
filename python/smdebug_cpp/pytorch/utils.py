"""Versions of PyTorch the hook supports, as smdebug.pytorch.utils answers it: 1.5 and later (the
hook uses only public module and tensor hooks; the reference stops at 3.0, we do not)."""
import re

import torch

MINIMUM_PT_VERSION = (1, 5)


def _major_minor(version):
    m = re.match(r"(\d+)\.(\d+)", str(version))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def is_current_version_supported(pytorch_version=torch.__version__):
    return _major_minor(pytorch_version) >= MINIMUM_PT_VERSION
