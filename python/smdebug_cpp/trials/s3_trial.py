"""S3Trial, where smdebug.trials.s3_trial has it."""
from .trial import S3Trial  # noqa: F401
