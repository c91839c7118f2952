"""The CuPy GPU device (`/device:GPU:i`): the CPU kernel bodies run on CuPy arrays.

One kernel body serves CPU and GPU (OSDI 2016 §3.3): kernels are written against
`ctx.xp` or against NumPy functions, which hand CuPy arrays to CuPy (NumPy's
`__array_ufunc__`/`__array_function__` protocols). The kernels seen to work that way are
listed in framework/gpu_kernels.py (written by tools/survey_gpu_kernels.py on a machine
with a GPU); every other op has no GPU kernel, so TF1's placement rules put it on the CPU
(or refuse an explicit `/device:GPU:0` without `allow_soft_placement`).

Values on a GPU device are CuPy arrays, except int32 values, which stay in host memory
as TF's GPU devices keep them (shapes, axes and sizes are read on the host). They enter
it by explicit copies: a Recv from a
host device (`copy_from_host`), a constant or feed placed on it, and the host arrays a
kernel builds from its attrs (the output is copied over, as TF copies a constant to the
GPU once); they leave it by `copy_to_host` (a Send to a host device, a fetch, swap_memory).

Memory: CuPy's memory pool allocates. A limit (`ConfigProto.device_memory_limit_mb =
{'GPU': n}`) is set on the pool (process-wide for that GPU, as CuPy's pool is), and a
kernel running out of it raises ResourceExhaustedError naming the op and the device.
Traced runs count each output's bytes as on every device.

CuPy is imported only when a session asks for devices and CuPy is installed; without it
(or without a GPU) there are no GPU devices and nothing here runs.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.runtime.devices import LOCAL_TASK, Device

_count: Optional[int] = None
_BFLOAT16, _RESOURCE = _dtypes.bfloat16, _dtypes.resource
_HOST_KEPT = (_dtypes.int32, _dtypes.string)  # what a GPU keeps in host memory


def gpu_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy, without a GPU or driver, or with
    TW_DISABLE_GPU=1); probed once per process."""
    global _count
    if _count is None:
        _count = 0
        if os.environ.get("TW_DISABLE_GPU", "0") != "1" and \
                importlib.util.find_spec("cupy") is not None:
            try:
                import cupy
                _count = int(cupy.cuda.runtime.getDeviceCount())
            except Exception:  # CuPy without a driver or a device: no GPU
                _count = 0
    return _count


def _is_host_array(v) -> bool:
    """Whether `v` is a host array the GPU keeps in its memory: numbers, except int32,
    which a GPU keeps in host memory as TF's do (shapes, axes, sizes: the GPU kernels
    of TF take them as HostMemory arguments, and ours read them on the host)."""
    return isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind not in "OSUV" and \
        v.dtype != np.int32


def runs_on_host(op) -> bool:
    """Whether the kernel of `op` on a GPU computes in host memory, on NumPy arrays:
      * an op of int32 or string values (a variable's, for a resource input) whose
        outputs hold no floats (shape and index arithmetic: Pack, ConcatV2, Mul, Equal of
        int32 values; a Saver's Pack of tensor names), as TF's GPU kernels for int32 are
        its CPU kernels with every argument in host memory;
      * an op reading or making bfloat16 values, which CuPy cannot compute on (a GPU
        keeps them in host memory).
    Its inputs in GPU memory are copied to the host first; its outputs the GPU keeps (a
    bool, an int64, a float) are copied over like any host output of a kernel."""
    outs = getattr(op, "outputs", None)
    if outs is None:  # no Operation: a transfer partitioning added, a folded constant
        return False
    held = op._attrs.get("dtype")  # a variable's values, for a resource input
    ins = [held if t.dtype is _RESOURCE else t.dtype for t in op.inputs]
    if _BFLOAT16 in ins or any(t.dtype is _BFLOAT16 for t in outs):
        return True
    return bool(ins) and all(d in _HOST_KEPT for d in ins) and not any(
        t.dtype.is_floating or t.dtype.is_complex for t in outs)


class GPUDevice(Device):
    """GPU `index` of this process, through CuPy (see the module docstring).

    Args:
      index: the CUDA device number.
      task: the task part of the name.
      memory_limit_bytes: a limit set on CuPy's memory pool for this GPU (None: none).
    """

    host_memory = False

    def __init__(self, index: int, task: str = LOCAL_TASK,
                 memory_limit_bytes: Optional[int] = None):
        import cupy
        Device.__init__(self, "GPU", index, task)
        self.xp = cupy
        self._cuda = cupy.cuda.Device(index)
        self._limit = memory_limit_bytes
        self._oom_class = cupy.cuda.memory.OutOfMemoryError
        if memory_limit_bytes is not None:
            with self._cuda:
                cupy.get_default_memory_pool().set_limit(size=int(memory_limit_bytes))

    @property
    def memory_limit_bytes(self) -> int:
        """The configured limit, else the GPU's total memory (TF reports what its
        allocator may use)."""
        if self._limit is not None:
            return int(self._limit)
        with self._cuda:
            return int(self.xp.cuda.runtime.memGetInfo()[1])

    def kernel_xp(self, op):
        """NumPy for the ops whose kernel runs on host memory (`runs_on_host`), CuPy for
        every other op."""
        return np if runs_on_host(op) else self.xp

    def _on_device(self, value):
        """`value` in GPU memory: host arrays (not strings, not int32) are copied over;
        int32 CuPy arrays are copied to the host; other CuPy arrays and other values
        (handles, the dead token, Python scalars) pass."""
        if _is_host_array(value):
            return self.xp.asarray(value)
        if isinstance(value, self.xp.ndarray) and value.dtype == np.int32:
            return self.xp.asnumpy(value)
        if type(value) is tuple:
            return tuple(self._on_device(v) for v in value)
        return value

    def _on_host(self, value):
        if isinstance(value, self.xp.ndarray):
            return self.xp.asnumpy(value)
        if type(value) is tuple:
            return tuple(self._on_host(v) for v in value)
        return value

    def device_constant(self, value):
        with self._cuda:
            return self._on_device(value)

    def _oom(self, op, exc):
        msg = "OOM when allocating tensor on %s: %s" % (self.name, exc)
        if op is not None:
            msg += " (op %s of type %s)" % (op.name, op.type)
            return errors.with_op(errors.ResourceExhaustedError(None, op, msg), op)
        return errors.ResourceExhaustedError(None, None, msg)

    def bind_kernel(self, fn, op, n_out: int, is_async: bool = False):
        """`fn` running on this GPU: its host-array outputs are copied to the device and
        running out of GPU memory raises ResourceExhaustedError."""
        on_device, oom_class, cuda = self._on_device, self._oom_class, self._cuda
        oom = self._oom
        switch = self.index != 0  # CuPy's current device is GPU 0 on every thread
        if runs_on_host(op):  # its arguments in host memory (TF's HostMemory)
            fn = _with_host_inputs(fn, self._on_host, is_async)

        def outputs(r):
            if n_out == 1:
                return on_device(r)
            if n_out:
                return [on_device(v) for v in r]
            return r

        if is_async:
            def gpu_async(ctx, state, done, *args):
                def copied_done(result=None, exc=None):
                    if exc is None:
                        try:
                            result = outputs(result)
                        except oom_class as e:
                            done(exc=oom(op, e))
                            return
                    done(result, exc)
                return fn(ctx, state, copied_done, *args)
            return gpu_async

        def gpu_kernel(ctx, *args):
            try:
                if switch:
                    with cuda:
                        return outputs(fn(ctx, *args))
                return outputs(fn(ctx, *args))
            except oom_class as e:
                raise oom(op, e) from None
        return gpu_kernel

    def copy_to_host(self, value, op=None):
        """`value` copied to host memory (NumPy arrays)."""
        return self._on_host(value)

    def copy_from_host(self, value, op=None):
        """`value` copied into this GPU's memory.

        Raises:
          ResourceExhaustedError: if the copy does not fit in the GPU's memory (limit).
        """
        try:
            with self._cuda:
                return self._on_device(value)
        except self._oom_class as e:
            raise self._oom(op, e) from None

    def swap_out(self, value):
        return self._on_host(value)

    def swap_in(self, value):
        with self._cuda:
            return self._on_device(value)


def _with_host_inputs(fn, on_host, is_async: bool):
    """`fn` given its inputs copied to host memory."""
    if is_async:
        def host_async(ctx, state, done, *args):
            return fn(ctx, state, done, *[on_host(a) for a in args])
        return host_async

    def host_kernel(ctx, *args):
        return fn(ctx, *[on_host(a) for a in args])
    return host_kernel
