"""TSAccessS3: an S3 object written whole on close() (one signed PUT through the C++ S3 client), as
smdebug.core.access_layer.s3.TSAccessS3 is used."""
from ... import _core


class TSAccessS3:
    def __init__(self, bucket_name, key_name, binary=True):
        self.bucket_name = bucket_name
        self.key_name = key_name
        self.binary = binary
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
        _core.write_object(f"s3://{self.bucket_name}", self.key_name, b"".join(self._parts))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
