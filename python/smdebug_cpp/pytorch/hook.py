"""smdebug_cpp.pytorch.Hook: smdebug.pytorch's Hook on the C++ writer.

Python registers the torch hooks and hands tensors over; the C++ Hook (python/src/bind_hook.cpp
over include/smdebug/writer/hook.hpp) selects, reduces, encodes and writes them. Names, steps and
modes are the reference's (and torch/torch_hook.hpp's, the LibTorch twin):

  parameters     "<ModelClass>_<path>" (Net_fc1.weight), read when a step begins (its forward's values)
  gradients      "gradient/<ModelClass>_<path>", from tensor hooks while backward() runs
  module I/O     "<module>_input_<i>" / "<module>_output_<i>": <module> is the submodule's path
                 (fc1), the root's class name (Net) or a loss's class name (CrossEntropyLoss)
  record_tensor_value(name, t)   "<name>_output_0"

A step begins at each forward pass of a registered module (its forward pre-hook). On a step that
saves nothing the hook does nothing else: no gradient hook and no submodule hook is installed, so
the cost is the step counter. On a saving step the hook installs forward hooks on the submodules
and gradient hooks on the parameters whose gradients are saved, and removes them when the next
step begins. A CPU tensor is handed over as t.detach().numpy(), a view of its buffer: the C++ side
copies it once into the step's buffer; other devices are copied to host once.

Errors inside torch's hooks (a tensor of a dtype smdebug cannot store, a storage failure) never
stop training: they are logged once per tensor and the tensor is skipped. Calls made by the
training script (save_tensor, save_scalar, register_module, set_mode, close) raise them.
"""
import logging

import torch
import torch.distributed as dist

from .. import hook as _base
from .._hook_options import check_storable
from ..exceptions import SMDebugError, SMDebugTypeError, SMDebugValueError
from .singleton_utils import set_hook

logger = logging.getLogger("smdebug_cpp")

GRADIENT_PREFIX = "gradient/"
INPUT_TENSOR_SUFFIX = "_input_"
OUTPUT_TENSOR_SUFFIX = "_output_"


def _to_numpy(name, t):
    """A host numpy array for a torch tensor: a view for a dense CPU tensor, one copy otherwise."""
    if not isinstance(t, torch.Tensor):
        raise SMDebugTypeError(f"tensor {name}: a {type(t).__name__} is not a torch.Tensor")
    t = t.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    if t.dtype == torch.bfloat16:
        raise SMDebugTypeError(f"tensor {name}: dtype torch.bfloat16 cannot be stored by smdebug (convert it with .float())")
    if t.device.type != "cpu":
        t = t.to("cpu")
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    try:
        return t.numpy()
    except (TypeError, RuntimeError) as e:  # a dtype numpy has not (complex32, quantized ...)
        raise SMDebugTypeError(f"tensor {name}: dtype {t.dtype} cannot be stored by smdebug ({e})") from None


class Hook(_base.Hook):
    GRADIENT_PREFIX = GRADIENT_PREFIX
    INPUT_TENSOR_SUFFIX = INPUT_TENSOR_SUFFIX
    OUTPUT_TENSOR_SUFFIX = OUTPUT_TENSOR_SUFFIX

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False, reduction_config=None,
                 save_config=None, include_regex=None, include_collections=None, save_all=False, include_workers="one",
                 step_on="forward", **kwargs):
        if step_on not in ("forward", "optimizer"):
            raise SMDebugValueError(f"step_on={step_on!r} must be \"forward\" or \"optimizer\"")
        super().__init__(out_dir=out_dir, export_tensorboard=export_tensorboard, tensorboard_dir=tensorboard_dir,
                         dry_run=dry_run, reduction_config=reduction_config, save_config=save_config,
                         include_regex=include_regex, include_collections=include_collections, save_all=save_all,
                         include_workers=include_workers, **kwargs)
        self.module_set = set()
        self.has_registered_module = False
        self.has_registered_loss_module = False
        self._roots = []             # (module, [(param name, param)]) of each registered module
        self._submodules = []        # modules whose inputs/outputs are recorded on saving steps
        self._step_handles = []      # hooks installed for the current saving step
        self._io_counts = {}         # "<module>_output_" -> next index, in this step
        self._pending_custom = {}    # save_tensor values of this step: name -> (array, collections)
        self._prepared = False
        self.step_on = step_on
        self._optimizer_stepped = True  # step_on="optimizer": the next forward pass begins a step
        set_hook(self)

    # ---- workers: torch.distributed, as the reference names them --------------------------------

    def _get_rank_and_world_size(self):
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1

    def _get_worker_name(self):
        if dist.is_available() and dist.is_initialized():
            return f"worker_{dist.get_rank()}"
        return _base.DEFAULT_WORKER_NAME

    # ---- registration -------------------------------------------------------------------------

    def register_module(self, module):
        """Records `module`'s parameters, gradients and (when a collection asks for them) its
        submodules' inputs and outputs; a forward pass of `module` begins a step."""
        if not isinstance(module, torch.nn.Module):
            raise SMDebugTypeError(f"Module type {module.__class__.__name__} must be type torch.nn.Module")
        inner = module  # a DataParallel wrapper is named as the reference names it: DataParallel_module.fc1.weight
        for name, submodule in inner.named_modules():
            if submodule in self.module_set:
                raise SMDebugError(f"Don't register module={submodule._get_name()} twice")
        class_name = inner._get_name()
        for name, submodule in inner.named_modules():
            submodule._module_name = name
            self.module_set.add(submodule)
            if submodule is not inner:
                self._submodules.append(submodule)
        inner._module_name = class_name
        self._submodules.append(inner)
        params = [(f"{class_name}_{n}", p) for n, p in inner.named_parameters()]
        self._roots.append((inner, params))
        if self._core.writes:
            module.register_forward_pre_hook(self._forward_pre_hook)
        self.has_registered_module = True

    def register_hook(self, module):
        self.register_module(module)

    def register_loss(self, loss_module):
        """Records a loss module's output as "<LossClass>_output_0" (collection `losses`)."""
        if not isinstance(loss_module, torch.nn.modules.loss._Loss):
            raise SMDebugTypeError(f"loss_module={loss_module} must be subclass of `torch.nn.modules.loss._Loss`, "
                                   f"but has class hierarchy {type.mro(type(loss_module))}")
        loss_module._module_name = loss_module._get_name()
        self.module_set.add(loss_module)
        if self._core.writes:
            loss_module.register_forward_hook(self._forward_hook)
        self.has_registered_loss_module = True

    # ---- steps --------------------------------------------------------------------------------

    def _prepare_collections(self):
        """add_module_tensors: the modules' names become patterns, as the reference does."""
        for coll in self._collections.values():
            for m, (inputs, outputs) in coll.modules.items():
                name = getattr(m, "_module_name", None)
                if name is None:
                    continue
                if inputs:
                    coll.include(name + INPUT_TENSOR_SUFFIX)
                if outputs:
                    coll.include(name + OUTPUT_TENSOR_SUFFIX)
        self._prepared = True

    def _end_step(self):
        if self._step_handles:
            for h in self._step_handles:
                h.remove()
            self._step_handles = []
        self._io_counts.clear()
        if self._pending_custom and self._core.global_step >= 0:
            self._flush_custom()

    def _forward_pre_hook(self, module, inputs):
        if self._core is None:  # unpickled with a model (see Hook.__getstate__)
            return
        if self.step_on == "optimizer":
            if not self._optimizer_stepped:
                return  # another micro-batch of the same step (gradient accumulation)
            self._optimizer_stepped = False
        try:
            if not self._prepared:
                self._prepare_collections()
            self._end_step()
            if not self.next_step():
                return
            self._begin_saving_step(module)
        except Exception as e:  # noqa: BLE001 - inside torch's hooks nothing may stop training
            self._warn("step", e)

    def next_step(self):
        saving = super().next_step()
        if self._pending_custom:
            self._flush_custom()  # saved before the first step: they belong to step 0
        return saving

    def _begin_saving_step(self, module):
        core = self._core
        for root, params in self._roots:
            if root is module:
                for pname, p in params:
                    if core.wants(pname):
                        self._save_recorded(pname, p)
                grad_on = core.step_mode in ("TRAIN", "GLOBAL") and torch.is_grad_enabled() and self.step_on == "forward"
                if grad_on:
                    for pname, p in params:
                        gname = GRADIENT_PREFIX + pname
                        if p.requires_grad and core.wants(gname):
                            self._step_handles.append(p.register_hook(self._gradient_hook(gname)))
        for sub in self._submodules:
            self._step_handles.append(sub.register_forward_hook(self._forward_hook))

    # ---- step_on="optimizer" ------------------------------------------------------------------------

    def register_optimizer(self, optimizer):
        """With step_on="optimizer": a step is an optimizer step. The first forward pass after
        optimizer.step() begins the next step, so the micro-batches of gradient accumulation share
        one (their module outputs are numbered _output_0, _output_1, ...); the gradients saved are
        the accumulated ones optimizer.step() applies, read just before it runs."""
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise SMDebugTypeError(f"optimizer={optimizer!r} must be a torch.optim.Optimizer")
        if self.step_on != "optimizer":
            raise SMDebugValueError('register_optimizer needs Hook(..., step_on="optimizer")')
        step = optimizer.step
        hook = self

        def step_and_count(*args, **kwargs):
            hook._before_optimizer_step()
            try:
                return step(*args, **kwargs)
            finally:
                hook._optimizer_stepped = True

        optimizer.step = step_and_count

    def _before_optimizer_step(self):
        core = self._core
        if core is None or not core.saving or core.step_mode not in ("TRAIN", "GLOBAL"):
            return
        for _, params in self._roots:
            for pname, p in params:
                gname = GRADIENT_PREFIX + pname
                if p.grad is not None and core.wants(gname):
                    self._save_recorded(gname, p.grad)

    def _gradient_hook(self, gname):
        def back(grad):
            if grad is not None:
                self._save_recorded(gname, grad)
        return back

    def _forward_hook(self, module, inputs, outputs):
        if self._core is None or not self._core.saving:
            return
        name = module._module_name
        self._write_inputs(name, inputs)
        self._write_outputs(name, outputs)

    def _write(self, module_name, var, suffix, idx):
        if isinstance(var, torch.Tensor):
            name = module_name + suffix + str(idx)
            if self._core.wants(name):
                self._save_recorded(name, var)
            return idx + 1
        if isinstance(var, (tuple, list)):
            for v in var:
                idx = self._write(module_name, v, suffix, idx)
        return idx

    def _write_inputs(self, name, inputs):
        key = name + INPUT_TENSOR_SUFFIX
        self._io_counts[key] = self._write(name, inputs, INPUT_TENSOR_SUFFIX, self._io_counts.get(key, 0))

    def _write_outputs(self, name, outputs):
        key = name + OUTPUT_TENSOR_SUFFIX
        self._io_counts[key] = self._write(name, outputs, OUTPUT_TENSOR_SUFFIX, self._io_counts.get(key, 0))

    def _save_recorded(self, name, tensor):
        """A tensor the hook records itself; errors are logged once per tensor, never raised."""
        try:
            try:
                arr = tensor.detach().numpy()  # a dense CPU tensor of a numpy dtype: a view, no copy
            except (TypeError, RuntimeError):
                arr = _to_numpy(name, tensor)  # other devices, layouts, bfloat16 (a clear error)
            self._core.save_recorded(name, arr)  # checks the dtype (SMDebugTypeError)
        except Exception as e:  # noqa: BLE001 - inside torch's hooks nothing may stop training
            self._warn(name, e)

    def _warn(self, key, e):
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("smdebug_cpp: not saving %s: %s", key, e)

    # ---- the script's calls ----------------------------------------------------------------------

    def record_tensor_value(self, tensor_name, tensor_value):
        """A functional loss (F.cross_entropy ...) recorded as "<tensor_name>_output_0"."""
        if not isinstance(tensor_value, torch.Tensor):
            raise SMDebugTypeError(f"tensor_value={tensor_value} must be torch.Tensor")
        self._check_name(tensor_name)
        if self._core.saving:
            self._write_outputs(tensor_name, tensor_value)

    def save_tensor(self, tensor_name, tensor_value, collections_to_write="default"):
        """As the reference: the value is written into the current step (step 0 before the first
        forward pass), in the collections named. Its dtype is checked now."""
        name = self._check_name(tensor_name)
        colls = _base.string_list(collections_to_write, "collections_to_write") or []
        arr = self._to_array(name, tensor_value)
        check_storable(name, arr)
        if self._core.global_step < 0 and not self._core.closed:
            self._pending_custom[name] = (arr, colls)
            return None
        return self._core.save_tensor(name, arr, colls)

    def _flush_custom(self):
        pending, self._pending_custom = self._pending_custom, {}
        for name, (arr, colls) in pending.items():
            try:
                self._core.save_tensor(name, arr, colls)
            except SMDebugError as e:
                self._warn(name, e)

    def _to_array(self, name, value):
        if isinstance(value, torch.Tensor):
            return _to_numpy(name, value)
        return super()._to_array(name, value)

    def close(self):
        if self._pending_custom:
            self._flush_custom()
        for h in self._step_handles:
            h.remove()
        self._step_handles = []
        super().close()
