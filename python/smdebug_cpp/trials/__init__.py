"""create_trial(path): a LocalTrial for a folder, an S3Trial for s3://bucket/prefix."""
import os

from .trial import LocalTrial, S3Trial, Trial


def _is_s3(path):
    if path.startswith("s3://"):
        rest = path[5:]
        bucket, _, prefix = rest.partition("/")
        return True, bucket, prefix
    return False, None, None


def create_trial(path, name=None, profiler=False, output_dir="/opt/ml/processing/outputs/", **kwargs):
    """Opens the trial at `path` (a folder or s3://bucket/prefix), as smdebug.trials.create_trial.

    Keyword arguments: range_steps=(begin, end) loads only steps begin <= step < end (a bound may be
    None); cache=True keeps values once read; index_mode, parallel and check are accepted for
    compatibility. A path that holds no trial (missing, an empty folder, a trial's parent) raises
    ObjectNotFound at once. smdebug_cpp only: wait_timeout (seconds; math.inf: no limit) waits that
    long for a trial that has not started writing, saying once on the "smdebug_cpp" logger what it
    waits for; poll_interval (seconds) between checks; max_concurrency: S3 requests in flight at
    most (default 64, or the AWS profile's s3.max_concurrent_requests); max_expanded_elements: the
    most elements one typed value of a record may be broadcast to when decoded (default 2^20, or
    SMDEBUG_MAX_EXPANDED_ELEMENTS).
    """
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, not {type(path).__name__}")
    if profiler:
        raise NotImplementedError("profiler trials are not part of smdebug_cpp (the analysis of saved tensors)")
    path = path.strip()
    if name is None:
        name = os.path.basename(path)
    s3, bucket, prefix = _is_s3(path)
    if s3:
        return S3Trial(name=name, bucket_name=bucket, prefix_name=prefix, **kwargs)
    return LocalTrial(name=name, dirname=path, **kwargs)


__all__ = ["create_trial", "Trial", "LocalTrial", "S3Trial"]
