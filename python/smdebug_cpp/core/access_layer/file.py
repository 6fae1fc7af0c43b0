"""TSAccessFile: a local file written whole, as smdebug.core.access_layer.file.TSAccessFile is used:
write() collects, close() puts the file in place atomically (temporary file + rename, through the
C++ store), so a reader never sees part of it. Mode "a"/"a+" keeps what the file held."""
import os

from ... import _core

SMDEBUG_TEMP_PATH_SUFFIX = ".tmp"


class TSAccessFile:
    def __init__(self, path, mode):
        self.path = path
        self.mode = mode
        self._parts = []
        if "a" in mode and os.path.exists(path):
            with open(path, "rb") as f:
                self._parts.append(f.read())
        self._closed = False

    def write(self, data):
        self._parts.append(data.encode() if isinstance(data, str) else bytes(data))

    def flush(self):
        pass

    def close(self):
        if self._closed:
            return
        self._closed = True
        folder, name = os.path.split(os.path.abspath(self.path))
        _core.write_object(folder, name, b"".join(self._parts))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
