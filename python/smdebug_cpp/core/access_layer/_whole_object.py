"""What TSAccessFile and TSAccessS3 share: bytes collected by write() and put in place whole by
close() (each class says where, in _put), so no reader ever sees part of the object."""


class WholeObjectWriter:
    def __init__(self):
        self._parts = []
        self._closed = False

    def write(self, data):
        self._parts.append(data.encode() if isinstance(data, str) else bytes(data))

    def flush(self):
        pass

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._put(b"".join(self._parts))

    def _put(self, data):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
