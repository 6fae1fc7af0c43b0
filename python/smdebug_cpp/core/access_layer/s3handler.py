"""The parts of smdebug.core.access_layer.s3handler that analysis code and its tests use: listing
and deleting keys under a prefix, through the C++ S3 client (credentials from the AWS environment,
signed requests, TLS verification on)."""
from ... import _core


class ListRequest:
    def __init__(self, Bucket, Prefix="", Delimiter="", StartAfter=""):
        self.bucket = Bucket
        self.prefix = Prefix
        self.delimiter = Delimiter
        self.start_after = StartAfter


class DeleteRequest:
    def __init__(self, Bucket, Prefix):
        self.bucket = Bucket
        self.prefix = Prefix


class S3Handler:
    @staticmethod
    def list_prefix(list_request):
        """Keys under the request's prefix (full keys, sorted)."""
        base = f"s3://{list_request.bucket}"
        return [k for k in _core.list_keys(base, list_request.prefix, list_request.start_after)]

    @staticmethod
    def list_prefixes(list_requests):
        return [S3Handler.list_prefix(r) for r in list_requests]

    @staticmethod
    def delete_prefix(path=None, delete_request=None):
        """Deletes every key under s3://bucket/prefix (a path, or a DeleteRequest)."""
        if path is not None:
            if not path.startswith("s3://"):
                raise ValueError(f"delete_prefix takes an s3:// path, not {path!r}")
            bucket, _, prefix = path[5:].partition("/")
        elif delete_request is not None:
            bucket, prefix = delete_request.bucket, delete_request.prefix
        else:
            raise ValueError("delete_prefix needs path or delete_request")
        base = f"s3://{bucket}"
        for key in _core.list_keys(base, prefix, ""):
            _core.remove_object(base, key)
