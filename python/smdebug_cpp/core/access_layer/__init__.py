from .file import TSAccessFile  # noqa: F401
from .s3 import TSAccessS3  # noqa: F401
from .utils import (  # noqa: F401
    DEFAULT_GRACETIME_FOR_RULE_STOP_SEC,
    ENV_RULE_STOP_SIGNAL_FILENAME,
    check_dir_exists,
    has_training_ended,
    is_rule_signalled_gracetime_passed,
    training_has_ended,
)
