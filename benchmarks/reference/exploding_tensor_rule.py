#!/usr/bin/env python3
"""ExplodingTensor written on the reference smdebug's Python Rule API, run over a trial with
invoke_rule: the comparison for bench_rules (issue 9). Every value of every tensor is checked
for NaN and infinity at every step, as the C++ built-in does.

    PYTHONPATH=/path/to/sagemaker-debugger python3 benchmarks/reference/exploding_tensor_rule.py PATH

(see read_every_value.py for what the reference needs). Prints wall and CPU seconds, steps/s and
GB/s of tensor payload.
"""
import os
import sys
import time


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    import numpy as np
    from smdebug.rules.rule import Rule
    from smdebug.rules.rule_invoker import invoke_rule
    from smdebug.exceptions import NoMoreData
    from smdebug.trials import create_trial

    class ExplodingTensor(Rule):
        def __init__(self, base_trial):
            super().__init__(base_trial, action_str="")
            self.bytes = 0
            self.steps = 0

        def invoke_at_step(self, step):
            self.steps += 1
            for name in self.base_trial.tensor_names(step=step):
                v = self.base_trial.tensor(name).value(step)
                self.bytes += v.nbytes
                if np.isnan(v).any() or np.isinf(v).any():
                    return True
            return False

    trial = create_trial(sys.argv[1])
    trial.steps()
    rule = ExplodingTensor(trial)
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False)
    except NoMoreData:  # the reference's way of saying training ended (docs/deviations.md D17)
        pass
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"reference Rule API ExplodingTensor over {sys.argv[1]}: {rule.steps} steps, {rule.bytes / 1e6:.1f} MB "
          f"in {wall:.2f} s wall, {cpu:.2f} s CPU: {rule.steps / cpu:.0f} steps/s, {rule.bytes / 1e9 / cpu:.4f} GB/s per CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
