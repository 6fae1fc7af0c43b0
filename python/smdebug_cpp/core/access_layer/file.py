"""TSAccessFile: a local file written whole, as smdebug.core.access_layer.file.TSAccessFile is used:
write() collects, close() puts the file in place atomically (temporary file + rename, through the
C++ store), so a reader never sees part of it. Mode "a"/"a+" keeps what the file held."""
import os

from ... import _core
from ._whole_object import WholeObjectWriter

SMDEBUG_TEMP_PATH_SUFFIX = ".tmp"


class TSAccessFile(WholeObjectWriter):
    def __init__(self, path, mode):
        super().__init__()
        self.path = path
        self.mode = mode
        if "a" in mode and os.path.exists(path):
            with open(path, "rb") as f:
                self._parts.append(f.read())

    def _put(self, data):
        folder, name = os.path.split(os.path.abspath(self.path))
        _core.write_object(folder, name, data)
