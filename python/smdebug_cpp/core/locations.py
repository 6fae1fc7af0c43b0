"""Where a step's files live in a trial (docs/format.md §2), as smdebug.core.locations names them."""
import os

from .. import _core


def _join(trial_dir, key):
    return trial_dir.rstrip("/") + "/" + key if trial_dir.startswith("s3://") else os.path.join(trial_dir, key)


class IndexFileLocationUtils:
    @staticmethod
    def get_index_key_for_step(trial_prefix, step, worker):
        return _join(trial_prefix, _core.index_key(int(step), worker))

    @staticmethod
    def get_index_path(path):
        return _join(path, "index")

    @staticmethod
    def get_step_from_idx_filename(index_file_name):
        return int(os.path.basename(index_file_name).split("_", 1)[0])

    @staticmethod
    def parse_step_from_index_file_name(index_file_name):
        return IndexFileLocationUtils.get_step_from_idx_filename(index_file_name)


class TensorFileLocation:
    def __init__(self, step_num, worker_name):
        self.step_num = int(step_num)
        self.worker_name = worker_name

    def get_file_location(self, trial_dir=""):
        return _join(trial_dir, _core.event_key(self.step_num, self.worker_name))
