"""get_logger(name): the package's logger set up as smdebug.core.logger.get_logger sets up its own —
one stdout handler (errors to stderr when SMDEBUG_LOG_ALL_TO_STDOUT=false, and a file when
SMDEBUG_LOG_PATH is set), the level from SMDEBUG_LOG_LEVEL (info, debug, warning, error, critical,
off), lines prefixed with SMDEBUG_LOG_CONTEXT (default host:pid). The package logs to
"smdebug_cpp" (the default name here); an application that configures logging itself need not
call this."""
import logging
import os
import socket
import sys

_LEVELS = {"critical": logging.CRITICAL, "error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO,
           "debug": logging.DEBUG, "off": None}
_configured = set()


class _BelowError(logging.Filter):
    def filter(self, record):
        return record.levelno < logging.ERROR


def _level():
    name = os.environ.get("SMDEBUG_LOG_LEVEL", "info").lower()
    return _LEVELS[name] if name in _LEVELS else logging.INFO


def get_logger(name="smdebug_cpp"):
    logger = logging.getLogger(name)
    if name in _configured:
        return logger
    context = os.environ.get("SMDEBUG_LOG_CONTEXT", f"{socket.gethostname()}:{os.getpid()}")
    formatter = logging.Formatter(fmt="[%(asctime)s.%(msecs)03d " + context + " %(levelname)s %(filename)s:%(lineno)d] %(message)s",
                                  datefmt="%Y-%m-%d %H:%M:%S")
    logger.handlers = []
    stdout = logging.StreamHandler(sys.stdout)
    stdout.setFormatter(formatter)
    if os.environ.get("SMDEBUG_LOG_ALL_TO_STDOUT", "TRUE").lower() == "false":
        stdout.addFilter(_BelowError())
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setLevel(logging.ERROR)
        stderr.setFormatter(formatter)
        logger.addHandler(stderr)
    logger.addHandler(stdout)
    path = os.environ.get("SMDEBUG_LOG_PATH")
    if path:
        to_file = logging.FileHandler(path)
        to_file.setFormatter(formatter)
        logger.addHandler(to_file)
    level = _level()
    if level is None:
        logger.disabled = True
    else:
        logger.setLevel(level)
    logger.propagate = False
    _configured.add(name)
    return logger
