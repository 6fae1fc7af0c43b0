"""StopTrainingAction: stops the SageMaker training job when a rule fires, as
smdebug.rules.action.stop_training_action.StopTrainingAction."""
import json
import logging
import os

from ._aws import forward_log

logger = logging.getLogger("smdebug_cpp")


class StopTrainingAction:
    """At construction: lists the in-progress training jobs whose names start with the prefix
    (``_found_jobs``). ``invoke(message)`` stops the job when exactly one was found, else does
    nothing. Every AWS failure is logged and swallowed, as in the reference."""

    def __init__(self, rule_name, training_job_prefix):
        from ... import _core

        self._training_job_prefix = training_job_prefix
        region = os.getenv("AWS_REGION", "us-east-1")
        logger.info(f"StopTrainingAction created with training_job_prefix:{training_job_prefix} and region:{region}")
        self._rule_name = rule_name
        self._stop = _core.StopTrainingJobAction(rule_name, str(training_job_prefix))
        forward_log(self._stop)
        self._found_jobs = list(self._stop.found_jobs)
        self._last_stop_response = None

    def _stop_training_job(self, message):
        if len(self._found_jobs) != 1:
            return
        if message != "":
            message = f"with message {message}"
        logger.info(f"Invoking StopTrainingJob action on SM jobname {self._found_jobs} {message}")
        body = self._stop.stop()
        forward_log(self._stop)
        try:
            self._last_stop_response = json.loads(body) if body else None
        except ValueError:
            self._last_stop_response = {"body": body}
        logger.info(f"Stop Training job response:{self._last_stop_response}")

    def invoke(self, message):
        self._stop_training_job(message)
