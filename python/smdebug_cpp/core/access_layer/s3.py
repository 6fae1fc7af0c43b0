"""TSAccessS3: an S3 object written whole on close() (one signed PUT through the C++ S3 client), as
smdebug.core.access_layer.s3.TSAccessS3 is used."""
from ... import _core
from ._whole_object import WholeObjectWriter


class TSAccessS3(WholeObjectWriter):
    def __init__(self, bucket_name, key_name, binary=True):
        super().__init__()
        self.bucket_name = bucket_name
        self.key_name = key_name
        self.binary = binary

    def _put(self, data):
        _core.write_object(f"s3://{self.bucket_name}", self.key_name, data)
