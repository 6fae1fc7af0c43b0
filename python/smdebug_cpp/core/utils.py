"""Helpers of smdebug.core.utils that analysis code uses."""
import os


def is_s3(path):
    """(True, bucket, key) for s3://bucket/key, else (False, None, None)."""
    if isinstance(path, str) and path.startswith("s3://"):
        bucket, _, key = path[5:].partition("/")
        return True, bucket, key
    return False, None, None


def get_path_to_collections(path):
    return os.path.join(path, "collections", "000000000")


def get_worker_name_from_collection_file(filename):
    name = os.path.basename(filename)
    return name[: -len("_collections.json")] if name.endswith("_collections.json") else name


def ensure_dir(file_path, is_file=True):
    """Creates the folder of file_path (or file_path itself when is_file is False)."""
    directory = os.path.dirname(file_path) if is_file else file_path
    if directory and not os.path.exists(directory):
        os.makedirs(directory, exist_ok=True)
