"""FileWriter: writes one (step, worker) of a trial — an event file and its index file — as
smdebug.core.writer.FileWriter does, so that analysis code and its tests can make trials. The
records are encoded by the C++ writer; the files appear when the writer is closed (the event file
before the index file that points into it)."""
import numbers

import numpy as np

from .. import _core
from .modes import ModeKeys, _mode_name


def _as_array(tdata):
    if isinstance(tdata, np.ndarray):
        return tdata
    if isinstance(tdata, (numbers.Number, np.generic)) and not isinstance(tdata, np.ndarray):
        return np.array([tdata])  # smdebug stores a Python scalar as shape [1]
    return np.asarray(tdata)


class FileWriter:
    def __init__(self, trial_dir, worker, step=0, wtype="events", mode=ModeKeys.GLOBAL, max_queue=10, flush_secs=120,
                 verbose=False, write_checksum=False):
        if wtype != "events":
            from ..exceptions import SMDebugValueError

            raise SMDebugValueError(f"Writer type not supported {wtype} (smdebug_cpp writes trial events only)")
        self.trial_dir = trial_dir
        self.worker = worker
        self.step = int(step)
        self.wtype = wtype
        self.mode = mode
        self._writer = _core.StepFileWriter(trial_dir, self.step, worker)

    def __enter__(self):
        return self

    def __exit__(self, unused_type, unused_value, unused_traceback):
        self.close()

    def write_tensor(self, tdata, tname, write_index=True, mode=ModeKeys.GLOBAL, mode_step=None, timestamp=None):
        mode = ModeKeys.GLOBAL if mode is None else mode
        mode_step = self.step if mode_step is None else int(mode_step)
        self._writer.write_tensor(tname, _as_array(tdata), _mode_name(mode), mode_step, timestamp)

    def flush(self):
        pass

    def close(self):
        self._writer.close()
