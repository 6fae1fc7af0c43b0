"""The end-of-training marker and the rule-stop signal, as smdebug.core.access_layer.utils has them,
for local folders and s3:// prefixes (through the C++ store)."""
import os
import time

from ... import _core
from ..utils import is_s3
from .file import TSAccessFile
from .s3 import TSAccessS3
from .s3handler import DeleteRequest, S3Handler

END_OF_JOB_FILENAME = "training_job_end.ts"
ENV_RULE_STOP_SIGNAL_FILENAME = "SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE"
DEFAULT_GRACETIME_FOR_RULE_STOP_SEC = 60
RULE_JOB_STOP_SIGNAL_FILENAME = os.getenv(ENV_RULE_STOP_SIGNAL_FILENAME, default=None)
RULESTOP_GRACETIME_SECONDS = os.getenv("rule_stop_grace_time_secs", default=DEFAULT_GRACETIME_FOR_RULE_STOP_SEC)


_MAX_SIGNAL_BYTES = 64  # more is not a time


def _is_sagemaker_job():
    return "TRAINING_JOB_NAME" in os.environ


def training_has_ended(trial_prefix):
    """Writes <trial_prefix>/training_job_end.ts (not under SageMaker, which writes its own)."""
    if _is_sagemaker_job():
        return
    s3, bucket, key = is_s3(os.path.join(trial_prefix, END_OF_JOB_FILENAME))
    writer = TSAccessS3(bucket, key, binary=False) if s3 else TSAccessFile(os.path.join(trial_prefix, END_OF_JOB_FILENAME), "a+")
    writer.close()


def file_exists(file_path):
    s3, bucket, key = is_s3(file_path)
    if s3:
        return key in _core.list_keys(f"s3://{bucket}", key, "")
    return os.path.exists(file_path)


def has_training_ended(trial_prefix):
    return file_exists(os.path.join(trial_prefix, END_OF_JOB_FILENAME))


def is_rule_signalled_gracetime_passed(trial_prefix):
    """True once the rule-stop signal file (named by SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE) under
    `trial_prefix` (a folder or an s3:// prefix, read through the library's store) holds a time
    (seconds since the epoch, as the library's stop_signal_file_action writes it) more than the
    grace time ago; False without the variable or the file (or while it is still empty). A file
    that cannot be read raises the store's error naming it (StorageError, FileRefused); one that
    does not hold a time raises SMDebugValueError naming it (the reference answers True for both,
    which stops training on an I/O error)."""
    from ...exceptions import ObjectNotFound, SMDebugValueError

    name = os.getenv(ENV_RULE_STOP_SIGNAL_FILENAME, default=None)
    if name is None:
        return False
    path = os.path.join(trial_prefix, name)
    try:
        data = _core.read_object(trial_prefix, name)  # the store of the folder or s3:// prefix
    except ObjectNotFound:
        return False  # not signalled
    text = data[:_MAX_SIGNAL_BYTES + 1].decode("ascii", errors="replace").strip()
    if not data:
        return False  # created, its time not written yet (the writer truncates, then writes)
    if len(data) > _MAX_SIGNAL_BYTES or not text.isdigit():
        raise SMDebugValueError(f"the rule stop-signal file {path} does not hold a time in seconds since the epoch: {text[:20]!r}")
    return time.time() > int(text) + float(RULESTOP_GRACETIME_SECONDS)


def delete_s3_prefixes(bucket, keys):
    for key in keys if isinstance(keys, list) else [keys]:
        S3Handler.delete_prefix(delete_request=DeleteRequest(bucket, key))


def check_dir_exists(path):
    """True when the folder (or the last key under the prefix) has training_job_end.ts beside it."""
    s3, bucket, key = is_s3(path)
    if s3:
        found = _core.list_keys(f"s3://{bucket}", key, "")
        return len(found) > 0 and has_training_ended(f"s3://{bucket}/{found[-1]}")
    return os.path.exists(path) and has_training_ended(path)
