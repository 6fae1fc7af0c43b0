"""RequiredTensors: the tensors and steps a rule reads at a step, as smdebug.rules.req_tensors.

fetch() waits until the required steps are available (Trial.wait_for_steps: StepUnavailable /
NoMoreData as the reference). It does not read the values: the rule reads them itself in
invoke_at_step (Tensor.value, or Trial.values / read_values for one batched read), and a value
missing at a step raises TensorUnavailableForStep from that read, which invoke_rule skips as it
skips the reference's fetch error."""
from ..exceptions import TensorUnavailable


class RequiredTensorsForTrial:
    def __init__(self, trial):
        self.trial = trial
        self._tensor_steps = {}
        self._tensors = {}

    def _add_steps_for_tensor(self, name, steps):
        self._tensor_steps.setdefault(name, []).extend(steps)
        if name not in self._tensors:
            self._tensors[name] = self.trial.tensor(name)

    def add(self, name, steps, should_match_regex=False):
        steps = list(steps)
        if should_match_regex:
            for n in self.trial.tensor_names(regex=[name]):
                self._add_steps_for_tensor(n, steps)
        else:
            if not self.trial.has_tensor(name):
                raise TensorUnavailable(name)
            self._add_steps_for_tensor(name, steps)

    def get_tensor_steps(self, name):
        return self._tensor_steps[name]

    def get_names(self):
        return self._tensor_steps.keys()

    def get(self):
        return self._tensors.values()

    def clear(self):
        self._tensor_steps.clear()
        self._tensors.clear()

    def fetch(self):
        required = sorted(set(s for steps in self._tensor_steps.values() for s in steps))
        if required:
            self.trial.wait_for_steps(required)


class RequiredTensors:
    def __init__(self, base_trial, other_trials):
        self.base_trial = base_trial
        self._per_trial = {base_trial: RequiredTensorsForTrial(base_trial)}
        for trial in other_trials or []:
            self._per_trial[trial] = RequiredTensorsForTrial(trial)

    def add(self, name, steps, trial=None, should_match_regex=False):
        self._per_trial[trial if trial is not None else self.base_trial].add(name, steps, should_match_regex)

    def get_tensor_steps(self, name, trial=None):
        return self._per_trial[trial if trial is not None else self.base_trial].get_tensor_steps(name)

    def get_names(self, trial=None):
        return self._per_trial[trial if trial is not None else self.base_trial].get_names()

    def get(self, trial=None):
        return self._per_trial[trial if trial is not None else self.base_trial].get()

    def clear(self):
        for r in self._per_trial.values():
            r.clear()

    def fetch(self):
        for r in self._per_trial.values():
            r.fetch()
