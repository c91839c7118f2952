"""float32 convolutions and matrix products through oneDNN, where its library is installed
(the `onednn` extra).

TensorFlow's CPU convolutions and products are oneDNN's (its x86 builds enable them by
default). On the machines we measure, oneDNN's AVX-512 kernels run the second convolution
of `cnn_train` two to three times faster than the best NumPy lowering (4.8-5.0 ms per
pass against 8.8-11.3 ms): NumPy must build an im2col matrix and hand it to OpenBLAS,
whose kernels reach about half the core's peak on these shapes. Its products are 10-20%
faster than OpenBLAS's from about a million multiply-adds (figures in
benchmarks/RESULTS.md). A product of two matrices goes through its sgemm, which has no
primitive to look up (10-30% faster again on most shapes); batched products, and those
whose second operand is a transposed view, which sgemm reads slowly, go through its
matmul primitive. Where oneDNN's kernels are wider than OpenBLAS's (AVX-512 against
AVX2: a CPU OpenBLAS's build does not know, or OPENBLAS_CORETYPE set to an older core),
the smaller products too (above 64^3 multiply-adds; OpenBLAS runs them on one thread) go
to sgemm, on the calling thread alone: 0.4-0.8x OpenBLAS's time.

The library comes from Intel's `onednn-cpu-gomp` wheel (libdnnl.so.3, OpenMP threads) and
is called through its C API with ctypes; nothing is compiled here. Everything is
optional: where the library cannot be loaded, or a call is one this module does not take
(another dtype, an empty tensor, a geometry oneDNN rejects), the functions return None
and the caller runs its NumPy kernel. `TW_ONEDNN=0` turns the path off.

Layouts: arrays stay channels last ([n, *spatial, c], filters [*ks, ci, co]) and are
described to oneDNN by their strides, in its logical order (n, c, *spatial) and
(o, i, *ks); matrices (transposed views too) likewise. The filter (or filter gradient)
goes through a reorder into (out of) the layout the primitive picked.

Threads: each call runs on all of OpenMP's threads, so calls take turns (`_turn`: one
lane at a time; with OMP_NUM_THREADS below the core count, as many lanes as the cores
hold, so that kernels the inter-op pool overlaps run at once). Once
the library is loaded, OpenBLAS stays on one thread (ops/math/blas.py): two pools whose
idle threads spin would each slow the other. Primitives are built once per geometry for
OpenMP's thread count, which is fixed, so the filter gradient's reduction order, hence
its bits, is the same from run to run (runtime/determinism.py).
"""
from __future__ import annotations

import ctypes
import math
import os
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.ops.math import blas
from tensorweave.ops.math.blas import large_product

# --- the C API's constants (oneDNN v3, include/oneapi/dnnl/dnnl_*types.h) ---------------
_F32 = 3                          # dnnl_f32
_FORMAT_ANY = 1                   # dnnl_format_tag_any
_CPU = 1                          # dnnl_cpu
_IN_ORDER = 1                     # dnnl_stream_in_order
_FORWARD_TRAINING, _FORWARD_INFERENCE = 64, 96
_CONVOLUTION_DIRECT = 1           # dnnl_convolution_direct
_POOLING_ALGS = {"max": 0x1ff, "avg": 0x3ff}  # dnnl_pooling_max, _avg_exclude_padding
_QUERY_WEIGHTS_MD, _QUERY_DIFF_WEIGHTS_MD, _QUERY_WORKSPACE_MD = 131, 132, 135
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS, _ARG_WORKSPACE = 1, 17, 33, 64
_ARG_BIAS = 41
_ARG_DIFF_SRC, _ARG_DIFF_DST, _ARG_DIFF_WEIGHTS = 129, 145, 161
_ELTWISE_RELU = 0x20              # dnnl_eltwise_relu (a post-op of the forward pass)
_ELTWISE_CLIP = 0x2e              # dnnl_eltwise_clip: its gradient is grad * (lo < x <= hi)
_BINARY_SUB = 0x1fff5             # dnnl_binary_sub
_BINARY_ADD, _BINARY_MUL, _BINARY_DIV = 0x1fff0, 0x1fff1, 0x1fff4
_ELTWISE_SQRT = 0x25              # dnnl_eltwise_sqrt
_ARG_SRC_1, _ARG_ATTR_SCALES = 2, 4096
_ARG_POST_OP_BASE = 32768         # DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE (oneDNN 3)
_ARG_MEAN, _ARG_VARIANCE, _ARG_SCALE, _ARG_SHIFT = 49, 50, 51, 52
_ARG_DIFF_SCALE, _ARG_DIFF_SHIFT = 255, 256
_BACKWARD = 128                   # dnnl_backward: the gradients of data and parameters
_USE_GLOBAL_STATS, _USE_SCALE, _USE_SHIFT, _FUSE_NORM_RELU = 0x1, 0x2, 0x4, 0x8
_LRN_ACROSS_CHANNELS = 0xaff      # dnnl_lrn_across_channels
_MAX_NDIMS = 12

_Dims = ctypes.c_int64 * _MAX_NDIMS
_handle = ctypes.c_void_p


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", _handle)]


class OneDNNError(RuntimeError):
    """A oneDNN call failed in a way that is not "this case is not implemented"."""


def _dims(values: Sequence[int]) -> _Dims:
    out = _Dims()
    for i, v in enumerate(values):
        out[i] = int(v)
    return out


def _library_paths():
    """Where the wheels put libdnnl.so.3: `<prefix>/lib` of the environment that holds them."""
    try:
        from importlib import metadata
        for dist in ("onednn-cpu-gomp", "onednn"):
            try:
                files = metadata.distribution(dist).files or []
            except metadata.PackageNotFoundError:
                continue
            for f in files:
                if f.name == "libdnnl.so.3":
                    yield str(f.locate())
    except Exception:  # a broken metadata tree: fall through to the prefixes
        pass
    for prefix in (sys.prefix, sys.base_prefix):
        yield os.path.join(prefix, "lib", "libdnnl.so.3")


class _Step:
    """One primitive with the memory objects of its arguments, made once: a call only
    points them at its arrays (a step belongs to one lane, which serves one call at a
    time, so sharing is safe)."""

    __slots__ = ("prim", "mems", "packed")

    def __init__(self, lib: "_Library", prim: _handle, args):
        self.prim = prim
        self.mems = []
        for _, md in args:
            mem = _handle()
            lib.check(lib.lib.dnnl_memory_create(ctypes.byref(mem), md, lib.engine, None),
                      "memory")
            self.mems.append(mem)
        self.packed = (_ExecArg * len(args))(
            *[_ExecArg(arg, mem) for (arg, _), mem in zip(args, self.mems)])

    def run(self, lane: "_Lane", *pointers: int) -> None:
        """Executes on the arrays at `pointers` (in the order of the step's arguments)
        on the stream of `lane`, the lane the step was built for."""
        lib = lane.lib
        c = lib.lib
        for mem, ptr in zip(self.mems, pointers):
            c.dnnl_memory_set_data_handle(mem, ptr)
        lib.check(c.dnnl_primitive_execute(self.prim, lane.stream, len(self.mems),
                                           self.packed), "execution")
        lib.check(c.dnnl_stream_wait(lane.stream), "stream wait")

    def destroy(self, lib: "_Library") -> None:
        lib.lib.dnnl_primitive_destroy(self.prim)
        for mem in self.mems:
            lib.lib.dnnl_memory_destroy(mem)


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux: the wheel is Linux-only)
        return os.cpu_count() or 1


class _Library:
    """The loaded library, its CPU engine, OpenMP's runtime and how many calls may run at
    once (`lanes`, each with its own stream: `_turn`)."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        for name in ("dnnl_engine_create", "dnnl_stream_create",
                     "dnnl_memory_desc_create_with_strides", "dnnl_memory_desc_create_with_tag",
                     "dnnl_memory_desc_clone", "dnnl_primitive_create",
                     "dnnl_primitive_desc_destroy", "dnnl_reorder_primitive_desc_create",
                     "dnnl_convolution_forward_primitive_desc_create",
                     "dnnl_convolution_backward_data_primitive_desc_create",
                     "dnnl_convolution_backward_weights_primitive_desc_create",
                     "dnnl_matmul_primitive_desc_create",
                     "dnnl_pooling_forward_primitive_desc_create",
                     "dnnl_pooling_backward_primitive_desc_create",
                     "dnnl_primitive_attr_create", "dnnl_post_ops_create",
                     "dnnl_primitive_attr_set_post_ops", "dnnl_binary_primitive_desc_create"):
            getattr(lib, name).restype = ctypes.c_int
        lib.dnnl_lrn_forward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_lrn_forward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, ctypes.c_int, _handle, _handle,
            ctypes.c_int64, ctypes.c_float, ctypes.c_float, ctypes.c_float, _handle]
        lib.dnnl_lrn_backward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_lrn_backward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, _handle, _handle, _handle,
            ctypes.c_int64, ctypes.c_float, ctypes.c_float, ctypes.c_float, _handle, _handle]
        lib.dnnl_batch_normalization_forward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_batch_normalization_forward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, _handle, _handle, ctypes.c_float,
            ctypes.c_uint, _handle]
        lib.dnnl_batch_normalization_backward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_batch_normalization_backward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, _handle, _handle, _handle,
            ctypes.c_float, ctypes.c_uint, _handle, _handle]
        lib.dnnl_eltwise_forward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_eltwise_forward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, ctypes.c_int, _handle, _handle,
            ctypes.c_float, ctypes.c_float, _handle]
        lib.dnnl_eltwise_backward_primitive_desc_create.restype = ctypes.c_int
        lib.dnnl_eltwise_backward_primitive_desc_create.argtypes = [
            ctypes.POINTER(_handle), _handle, ctypes.c_int, _handle, _handle, _handle,
            ctypes.c_float, ctypes.c_float, _handle, _handle]
        lib.dnnl_post_ops_append_binary.restype = ctypes.c_int
        lib.dnnl_post_ops_append_binary.argtypes = [_handle, ctypes.c_int, _handle]
        lib.dnnl_post_ops_append_eltwise.restype = ctypes.c_int
        lib.dnnl_post_ops_append_eltwise.argtypes = [_handle, ctypes.c_int, ctypes.c_float,
                                                     ctypes.c_float]
        lib.dnnl_primitive_attr_set_scales_mask.restype = ctypes.c_int
        lib.dnnl_primitive_attr_set_scales_mask.argtypes = [_handle, ctypes.c_int, ctypes.c_int]
        lib.dnnl_primitive_desc_query_md.restype = _handle
        lib.dnnl_primitive_desc_query_md.argtypes = [_handle, ctypes.c_int, ctypes.c_int]
        lib.dnnl_memory_desc_clone.argtypes = [ctypes.POINTER(_handle), _handle]
        lib.dnnl_memory_desc_get_size.restype = ctypes.c_size_t
        lib.dnnl_memory_desc_get_size.argtypes = [_handle]
        lib.dnnl_memory_create.restype = ctypes.c_int
        lib.dnnl_memory_create.argtypes = [ctypes.POINTER(_handle), _handle, _handle, _handle]
        lib.dnnl_memory_set_data_handle.restype = ctypes.c_int
        lib.dnnl_memory_set_data_handle.argtypes = [_handle, ctypes.c_size_t]
        lib.dnnl_primitive_execute.restype = ctypes.c_int
        lib.dnnl_primitive_execute.argtypes = [_handle, _handle, ctypes.c_int,
                                               ctypes.POINTER(_ExecArg)]
        lib.dnnl_stream_wait.restype = ctypes.c_int
        lib.dnnl_stream_wait.argtypes = [_handle]
        lib.dnnl_sgemm.restype = ctypes.c_int
        lib.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [
            ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
            ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
        for name in ("dnnl_memory_destroy", "dnnl_memory_desc_destroy",
                     "dnnl_primitive_destroy", "dnnl_post_ops_destroy",
                     "dnnl_primitive_attr_destroy"):
            getattr(lib, name).argtypes = [_handle]
        try:
            self.openmp = ctypes.CDLL("libgomp.so.1")  # the one libdnnl.so.3 loaded
            self.openmp.omp_get_max_threads.restype = ctypes.c_int
        except (OSError, AttributeError):
            self.openmp = None
        self.engine = _handle()
        self.check(lib.dnnl_engine_create(ctypes.byref(self.engine), _CPU, 0), "engine")
        # calls at once: one while OpenMP's threads take every core (each call uses them
        # all), else as many as the cores hold (OMP_NUM_THREADS=1: one per core, for the
        # kernels the inter-op pool overlaps, policy.kernel_weight)
        threads = self.openmp.omp_get_max_threads() if self.openmp is not None else 1
        self.threads = threads
        self.lanes = 1 if self.takes_every_core() else max(1, _cores() // max(1, threads))
        self.shared_sgemm = _Sgemm(self, one_thread=False)
        # the products OpenBLAS runs on one thread, where oneDNN's kernels outrun its own
        self.one_thread_sgemm = _Sgemm(self, one_thread=True) \
            if self.openmp is not None and \
            _outruns_openblas(_effective_isa(self), _openblas_cores()) else None

    def takes_every_core(self) -> bool:
        """Whether OpenMP, the wheel's thread runtime (libgomp, loaded with the library),
        runs as many threads as this process may use cores (its default)."""
        return self.openmp is not None and self.threads >= _cores()

    def check(self, status: int, what: str) -> None:
        if status != 0:
            raise OneDNNError("oneDNN %s failed with status %d" % (what, status))

    def strided_md(self, dims: Sequence[int], strides: Sequence[int]) -> _handle:
        md = _handle()
        self.check(self.lib.dnnl_memory_desc_create_with_strides(
            ctypes.byref(md), len(dims), _dims(dims), _F32, _dims(strides)), "memory desc")
        return md

    def any_md(self, dims: Sequence[int]) -> _handle:
        md = _handle()
        self.check(self.lib.dnnl_memory_desc_create_with_tag(
            ctypes.byref(md), len(dims), _dims(dims), _F32, _FORMAT_ANY), "memory desc")
        return md

    def step(self, pd: _handle, args) -> _Step:
        """The primitive of `pd` (which the caller still owns) as a _Step on
        [(arg id, memory desc)]."""
        prim = _handle()
        self.check(self.lib.dnnl_primitive_create(ctypes.byref(prim), pd), "primitive")
        return _Step(self, prim, args)

    def reorder(self, src_md: _handle, dst_md: _handle) -> _Step:
        pd = _handle()
        self.check(self.lib.dnnl_reorder_primitive_desc_create(
            ctypes.byref(pd), src_md, self.engine, dst_md, self.engine, None), "reorder")
        try:
            return self.step(pd, [(_ARG_SRC, src_md), (_ARG_DST, dst_md)])
        finally:
            self.lib.dnnl_primitive_desc_destroy(pd)


_LOAD_LOCK = threading.Lock()
_LOADED: Optional[_Library] = None
_LOOKED = False


def library() -> Optional[_Library]:
    """The oneDNN library, loaded on first use; None where it is missing or turned off."""
    global _LOADED, _LOOKED
    if _LOOKED:
        return _LOADED
    with _LOAD_LOCK:
        if not _LOOKED:
            if os.environ.get("TW_ONEDNN", "1").strip() not in ("0", "false", "False"):
                for path in _library_paths():
                    if os.path.exists(path):
                        try:
                            _LOADED = _Library(ctypes.CDLL(path))
                        except (OSError, AttributeError, OneDNNError):
                            _LOADED = None
                        break
                if _LOADED is not None:
                    blas.leave_threads_to_onednn()
            _LOOKED = True
    return _LOADED


def _forget_in_child() -> None:
    """After a fork, in the child of a process that loaded the library: OpenMP's
    threads did not survive the fork, and libgomp hangs at the child's first parallel
    region once the parent has run one, so the child runs NumPy's kernels (a child of
    a process that had not loaded it loads its own)."""
    global _LOADED, _LOOKED, _LOAD_LOCK, _TURNS
    if _LOADED is None:
        _LOAD_LOCK = threading.Lock()  # (a lock held by a thread that is gone)
        return
    _LOADED, _LOOKED = None, True
    _LOAD_LOCK, _TURNS = threading.Lock(), threading.Condition()
    del _LANES[:], _FREE_LANES[:]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def available() -> bool:
    """Whether float32 convolutions and large float32 products run through oneDNN here."""
    return library() is not None


def runs_float32(attrs: dict) -> bool:
    """`threaded` of the kernels that call here (framework/registry.KernelDef): a node of
    dtype float32 (attr "T") runs on oneDNN's threads, when they take every core (not
    with OMP_NUM_THREADS below the core count: the inter-op pool can use the rest)."""
    if attrs.get("T") != _dt.float32:
        return False
    lib = library()
    return lib is not None and lib.takes_every_core()


# --- lanes: turns at oneDNN, each with its stream and its primitives -----------------------
_CACHE_SIZE = 64


class _Lane:
    """A turn at oneDNN: a stream and the primitives built for it, cached by geometry (an
    LRU of _CACHE_SIZE, destroyed on eviction). Each primitive keeps its memory objects,
    so a lane serves one call at a time (`_turn`)."""

    __slots__ = ("lib", "stream", "cache")

    def __init__(self, lib: _Library):
        self.lib = lib
        self.stream = _handle()
        lib.check(lib.lib.dnnl_stream_create(ctypes.byref(self.stream), lib.engine,
                                             _IN_ORDER), "stream creation")
        self.cache: "OrderedDict[tuple, object]" = OrderedDict()

    def cached(self, key: tuple, build):
        """The primitive of `key`, built by `build()` on a miss (None: oneDNN does not
        take it)."""
        cache = self.cache
        try:
            cache.move_to_end(key)
            return cache[key]
        except KeyError:
            pass
        entry = cache[key] = build()
        while len(cache) > _CACHE_SIZE:
            _, old = cache.popitem(last=False)
            if old is not None:
                old.destroy(self.lib)
        return entry


_LANES: list = []        # every lane made
_FREE_LANES: list = []
_TURNS = threading.Condition()


class _turn:
    """`with _turn(lib) as lane:` a free lane, made if fewer than `lib.lanes` exist, else
    waited for."""

    __slots__ = ("lib", "lane")

    def __init__(self, lib: _Library):
        self.lib = lib

    def __enter__(self) -> _Lane:
        with _TURNS:
            while not _FREE_LANES:
                if len(_LANES) < self.lib.lanes:
                    _LANES.append(_Lane(self.lib))
                    _FREE_LANES.append(_LANES[-1])
                    break
                _TURNS.wait()
            self.lane = _FREE_LANES.pop()
        return self.lane

    def __exit__(self, *exc) -> None:
        with _TURNS:
            _FREE_LANES.append(self.lane)
            _TURNS.notify()


def _contiguous_strides(shape: Sequence[int]) -> list:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def _channels_last_md(lib: _Library, shape: Sequence[int]) -> _handle:
    """[n, *spatial, c] contiguous, described in oneDNN's (n, c, *spatial) order."""
    st = _contiguous_strides(shape)
    return lib.strided_md([shape[0], shape[-1]] + list(shape[1:-1]),
                          [st[0], st[-1]] + st[1:-1])


def _filter_dims(shape: Sequence[int], depthwise: bool) -> tuple:
    """oneDNN's logical dims of a filter [*ks, ci, co] and their strides in it: (o, i,
    *ks), or for a depthwise filter [*ks, channels, multiplier] the grouped (g, o, i, *ks)
    with one group per channel (output channel g * multiplier + o, as TF's)."""
    st = _contiguous_strides(shape)
    ks, sks = list(shape[:-2]), st[:-2]
    if depthwise:
        return [shape[-2], shape[-1], 1] + ks, [st[-2], st[-1], 1] + sks
    return [shape[-1], shape[-2]] + ks, [st[-1], st[-2]] + sks


def _geometry(wins) -> Optional[tuple]:
    """oneDNN's strides, dilations (minus one), left and right pads; None where TF's
    window does not describe the same output size (oneDNN checks it exactly)."""
    for w in wins:
        eff = (w.k - 1) * w.dilation + 1
        if w.out <= 0 or w.size <= 0 or w.pad_before < 0 or w.pad_after < 0 or \
                (w.size + w.pad_before + w.pad_after - eff) // w.stride + 1 != w.out:
            return None
    return (tuple(w.stride for w in wins), tuple(w.dilation - 1 for w in wins),
            tuple(w.pad_before for w in wins), tuple(w.pad_after for w in wins))


# --- convolutions ----------------------------------------------------------------------------
class _Conv:
    """One pass of a convolution: the filter's reorder into (or, for the filter
    gradient, out of) the primitive's layout, the primitive, and the buffer between."""

    __slots__ = ("kind", "main", "w_reorder", "w_buf", "mds")

    def destroy(self, lib: _Library) -> None:
        self.main.destroy(lib)
        self.w_reorder.destroy(lib)
        for md in self.mds:
            lib.lib.dnnl_memory_desc_destroy(md)

    def run(self, lane: _Lane, act: np.ndarray, other: np.ndarray, out: np.ndarray,
            bias: Optional[np.ndarray] = None) -> None:
        """forward: act=x, other=w, out=y (and the bias of a fused forward pass);
        data: act=dy, other=w, out=dx; filter: act=x, other=dy, out=dw."""
        buf = self.w_buf.ctypes.data
        if self.kind == "filter":
            self.main.run(lane, act.ctypes.data, other.ctypes.data, buf)
            self.w_reorder.run(lane, buf, out.ctypes.data)
            return
        self.w_reorder.run(lane, other.ctypes.data, buf)
        extra = () if bias is None else (bias.ctypes.data,)
        self.main.run(lane, act.ctypes.data, buf, out.ctypes.data, *extra)


def _relu_attr(lib: _Library) -> _handle:
    """Primitive attributes with one post-op, ReLU on the result."""
    c = lib.lib
    attr, post = _handle(), _handle()
    lib.check(c.dnnl_primitive_attr_create(ctypes.byref(attr)), "attr")
    try:
        lib.check(c.dnnl_post_ops_create(ctypes.byref(post)), "post-ops")
        lib.check(c.dnnl_post_ops_append_eltwise(post, _ELTWISE_RELU, 0.0, 0.0), "post-op")
        lib.check(c.dnnl_primitive_attr_set_post_ops(attr, post), "post-ops")
    except OneDNNError:
        c.dnnl_primitive_attr_destroy(attr)
        raise
    finally:
        if post:
            c.dnnl_post_ops_destroy(post)
    return attr


def _build_conv(lib: _Library, kind: str, x_shape, w_shape, y_shape, geometry,
                depthwise: bool, epilogue: str = "") -> Optional[_Conv]:
    """The primitive of one convolution pass ("forward", "data" or "filter"); None where
    oneDNN has no implementation for it. A forward pass may add a bias ("bias") and
    then apply ReLU ("bias_relu"), as TF's _FusedConv2D."""
    c = lib.lib
    strides, dilates, left, right = (_dims(v) for v in geometry)
    x_md, y_md = _channels_last_md(lib, x_shape), _channels_last_md(lib, y_shape)
    w_dims, w_strides = _filter_dims(w_shape, depthwise)
    user_w = lib.strided_md(w_dims, w_strides)
    w_any = lib.any_md(w_dims)
    mds = [x_md, y_md, user_w]
    b_md = lib.strided_md([y_shape[-1]], [1]) if epilogue else None
    if b_md is not None:
        mds.append(b_md)
    attr = _relu_attr(lib) if epilogue == "bias_relu" else None
    fwd, pd = _handle(), _handle()
    conv = None
    try:
        status = c.dnnl_convolution_forward_primitive_desc_create(
            ctypes.byref(fwd), lib.engine, _FORWARD_TRAINING, _CONVOLUTION_DIRECT,
            x_md, w_any, b_md, y_md, strides, dilates, left, right, attr)
        if status != 0:  # not implemented here (or arguments it refuses): NumPy's
            return None
        if kind == "forward":
            pd, fwd = fwd, _handle()
        elif kind == "data":
            status = c.dnnl_convolution_backward_data_primitive_desc_create(
                ctypes.byref(pd), lib.engine, _CONVOLUTION_DIRECT, x_md, w_any, y_md,
                strides, dilates, left, right, fwd, None)
        else:
            status = c.dnnl_convolution_backward_weights_primitive_desc_create(
                ctypes.byref(pd), lib.engine, _CONVOLUTION_DIRECT, x_md, w_any, None, y_md,
                strides, dilates, left, right, fwd, None)
        if status != 0:
            return None
        query = _QUERY_DIFF_WEIGHTS_MD if kind == "filter" else _QUERY_WEIGHTS_MD
        prim_w = _handle()
        lib.check(c.dnnl_memory_desc_clone(ctypes.byref(prim_w),
                                           c.dnnl_primitive_desc_query_md(pd, query, 0)),
                  "memory desc clone")
        mds.append(prim_w)
        conv = _Conv()
        conv.kind, conv.mds = kind, mds
        conv.w_buf = np.empty(c.dnnl_memory_desc_get_size(prim_w) // 4 + 1, np.float32)
        if kind == "forward":
            conv.w_reorder = lib.reorder(user_w, prim_w)
            args = [(_ARG_SRC, x_md), (_ARG_WEIGHTS, prim_w), (_ARG_DST, y_md)]
            if b_md is not None:
                args.append((_ARG_BIAS, b_md))
        elif kind == "data":
            conv.w_reorder = lib.reorder(user_w, prim_w)
            args = [(_ARG_DIFF_DST, y_md), (_ARG_WEIGHTS, prim_w), (_ARG_DIFF_SRC, x_md)]
        else:
            conv.w_reorder = lib.reorder(prim_w, user_w)
            args = [(_ARG_SRC, x_md), (_ARG_DIFF_DST, y_md), (_ARG_DIFF_WEIGHTS, prim_w)]
        conv.main = lib.step(pd, args)
        return conv
    finally:
        if conv is None:
            for md in mds:
                c.dnnl_memory_desc_destroy(md)
        c.dnnl_memory_desc_destroy(w_any)
        if attr is not None:
            c.dnnl_primitive_attr_destroy(attr)
        for handle in (fwd, pd):
            if handle:
                c.dnnl_primitive_desc_destroy(handle)


def _run_conv(kind: str, x_shape, w_shape, y_shape, wins, act, other, out,
              depthwise: bool = False, bias: Optional[np.ndarray] = None,
              epilogue: str = "") -> bool:
    """Runs one pass into `out`; False where oneDNN does not take this convolution."""
    lib = library()
    if lib is None:
        return False
    geometry = _geometry(wins)
    if geometry is None:
        return False
    key = (kind, x_shape, w_shape, geometry, depthwise, epilogue)
    macs = int(np.prod(y_shape)) * int(np.prod(w_shape[:-1]))
    with large_product(macs), _turn(lib) as lane:
        conv = lane.cached(key, lambda: _build_conv(lib, kind, x_shape, w_shape, y_shape,
                                                    geometry, depthwise, epilogue))
        if conv is None:
            return False
        conv.run(lane, act, other, out, bias)
    return True


def _takes(*arrays) -> bool:
    """Whether oneDNN takes these operands: non-empty float32 NumPy arrays (a kernel body
    that also serves the CuPy GPU passes CuPy arrays, which stay with it)."""
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.size > 0
               for a in arrays)


def conv(x: np.ndarray, w: np.ndarray, wins, depthwise: bool = False,
         bias: Optional[np.ndarray] = None, relu: bool = False) -> Optional[np.ndarray]:
    """The channels-last convolution of x [n, *spatial, ci] with w [*ks, ci, co] over
    `wins` (conv_ops.Window per spatial dimension), or None where oneDNN does not take it.
    `depthwise`: w is [*ks, ci, multiplier], each input channel convolved on its own
    (DepthwiseConv2dNative), giving ci * multiplier channels. `bias` (one value per
    output channel) is added, then ReLU applied where `relu`, in the same pass (TF's
    _FusedConv2D with fused_ops BiasAdd, or BiasAdd and Relu)."""
    co = w.shape[-1] * (w.shape[-2] if depthwise else 1)
    if not _takes(x, w, *(() if bias is None else (bias,))) or \
            bias is not None and bias.shape != (co,):
        return None
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
    epilogue = ""
    if bias is not None:
        bias, epilogue = np.ascontiguousarray(bias), "bias_relu" if relu else "bias"
    y = np.empty((x.shape[0],) + tuple(win.out for win in wins) + (co,), np.float32)
    return y if _run_conv("forward", x.shape, w.shape, y.shape, wins, x, w, y, depthwise,
                          bias, epilogue) else None


def conv_backprop_input(input_shape, w: np.ndarray, dy: np.ndarray, wins,
                        depthwise: bool = False) -> Optional[np.ndarray]:
    """The input gradient of `conv`, of the channels-last `input_shape`, or None."""
    if not _takes(w, dy) or 0 in input_shape:
        return None
    w, dy = np.ascontiguousarray(w), np.ascontiguousarray(dy)
    dx = np.empty(tuple(input_shape), np.float32)
    return dx if _run_conv("data", dx.shape, w.shape, dy.shape, wins, dy, w, dx,
                           depthwise) else None


def conv_backprop_filter(x: np.ndarray, filter_shape, dy: np.ndarray, wins,
                         depthwise: bool = False) -> Optional[np.ndarray]:
    """The filter gradient of `conv`, of shape `filter_shape` ([*ks, ci, co]), or None."""
    if not _takes(x, dy):
        return None
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    dw = np.empty(tuple(filter_shape), np.float32)
    return dw if _run_conv("filter", x.shape, dw.shape, dy.shape, wins, x, dy, dw,
                           depthwise) else None


# --- matrix products ------------------------------------------------------------------------
class _MatMul:
    """One matrix-product primitive and its operands' descriptors."""

    __slots__ = ("main", "mds")

    def destroy(self, lib: _Library) -> None:
        self.main.destroy(lib)
        for md in self.mds:
            lib.lib.dnnl_memory_desc_destroy(md)


def _build_matmul(lib: _Library, x: np.ndarray, y: np.ndarray,
                  out_shape) -> Optional[_MatMul]:
    mds = [lib.strided_md(a.shape, [st // 4 for st in a.strides]) for a in (x, y)]
    mds.append(lib.strided_md(out_shape, _contiguous_strides(out_shape)))
    pd = _handle()
    status = lib.lib.dnnl_matmul_primitive_desc_create(ctypes.byref(pd), lib.engine,
                                                       mds[0], mds[1], None, mds[2], None)
    if status != 0:  # not implemented here: NumPy's
        for md in mds:
            lib.lib.dnnl_memory_desc_destroy(md)
        return None
    try:
        mm = _MatMul()
        mm.mds = mds
        mm.main = lib.step(pd, [(_ARG_SRC, mds[0]), (_ARG_WEIGHTS, mds[1]),
                                (_ARG_DST, mds[2])])
        return mm
    finally:
        lib.lib.dnnl_primitive_desc_destroy(pd)


def _gemm_operand(a: np.ndarray) -> Optional[tuple]:
    """(transposed, leading dimension) of a float32 matrix as row-major BLAS reads it
    in place (rows, or a transposed view's columns, evenly spaced), or None."""
    rows, cols = a.shape
    if a.flags.c_contiguous:
        return b"N", cols
    if a.flags.f_contiguous:
        return b"T", rows
    return _strided_operand(rows, cols, a.strides)


def _strided_operand(rows: int, cols: int, strides: tuple) -> Optional[tuple]:
    """`_gemm_operand` of a float32 [rows, cols] matrix from its strides alone."""
    s0, s1 = strides
    if rows == 1:  # (a dimension of one may have any stride)
        s0 = 4 * cols
    if cols == 1:
        s1 = 4
    if s1 == 4 and s0 % 4 == 0 and s0 >= 4 * cols:
        return b"N", s0 // 4
    if s0 == 4 and s1 % 4 == 0 and s1 >= 4 * rows:
        return b"T", s1 // 4
    return None


def _gemm(lib: _Library, x: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
    """x [m, k] @ y [k, n] by oneDNN's sgemm on all of OpenMP's threads, which has no
    primitive to build or look up: 10-30% faster than the matmul primitive on most
    products MatMul hands here (benchmarks/RESULTS.md, twenty-fourth stop). y must be
    readable untransposed in place; x is copied where it is not readable in place."""
    if _gemm_operand(x) is None:
        x = np.ascontiguousarray(x)
    return lib.shared_sgemm.product(x, y)


# --- sgemm with its arguments planned ---------------------------------------------------------
# OpenBLAS's core names (threadpoolctl's "architecture") whose kernels are AVX-512 ones
_OPENBLAS_AVX512_CORES = frozenset(("skylakex", "cooperlake", "sapphirerapids"))
_AVX512_CORE_BIT = 0x20  # set in dnnl_cpu_isa_avx512_core (0x27) and in every ISA above it
_PLANS_MOST = 256


class _Sgemm:
    """oneDNN's sgemm with the arguments of each geometry made once (a bare call takes
    3 us for a 64^3 product on one thread; ctypes' conversions of its 13 arguments
    added 0.7 us, and the checks and wrapping before plans 3.5 more): on the calling
    thread alone (`one_thread`: OpenMP's thread count, a per-thread setting, set to one
    around the call), else on all of OpenMP's threads, taking turns (`_turn`)."""

    def __init__(self, lib: _Library, one_thread: bool):
        self.lib = lib
        self.one_thread = one_thread
        self.sgemm = ctypes.CDLL(lib.lib._name).dnnl_sgemm  # a handle without argtypes
        self.sgemm.restype = ctypes.c_int
        self.set_threads = lib.openmp.omp_set_num_threads if one_thread else None
        self.plans: dict = {}
        self.product = self._product_function()

    def plan(self, key: tuple) -> Optional[tuple]:
        """`_sgemm_arguments` of (x.shape, x.strides, y.shape, y.strides), or None where
        sgemm is slow: on all threads, a transposed y ([32, 1024] x [256, 1024]^T: 207
        us against the matmul primitive's 54); on one thread, where it is not faster
        than OpenBLAS: a vector (m of 1), a few columns (n below 8), or a transposed y
        of fewer than 128 columns (up to 3.7x slower: [16, 1024] x [64, 1024]^T 90 us
        against 25; from 128 columns 0.2-0.9x OpenBLAS's time, untransposed 0.4-0.8x at
        any n: benchmarks/mid_products.py)."""
        arguments = _sgemm_arguments(key)
        if arguments is None:
            return None
        m, n, transposed_y = key[0][0], key[2][1], arguments[-1]
        if self.one_thread:
            if m < 2 or n < 8 or (transposed_y and n < 128):
                return None
        elif transposed_y:
            return None
        return arguments

    def __call__(self, x: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
        return self.product(x, y)

    def _product_function(self):
        """`product(x, y)`: x @ y, or None where the plan of its geometry declines it. A
        closure over what it uses: the path of every product in a loop of small
        matrices, where an attribute lookup or a bound method costs a tenth of a us."""
        plans, make_plan, sgemm, set_threads = self.plans, self.plan, self.sgemm, \
            self.set_threads
        empty, f32, pointer = np.empty, np.float32, _pointer
        lib, one_thread = self.lib, self.one_thread

        def product(x: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
            key = (x.shape, x.strides, y.shape, y.strides)
            plan = plans.get(key)
            if plan is None:
                if len(plans) >= _PLANS_MOST:
                    plans.clear()
                plan = plans[key] = make_plan(key) or False
            if plan is False:
                return None
            ta, tb, m, n, k, one, lda, ldb, zero, ldc, shape, xt, yt = plan
            out = empty(shape, f32)
            a, b, c = pointer(x.T if xt else x), pointer(y.T if yt else y), pointer(out)
            if one_thread:
                # (back after the call: the setting is the thread's, which other users of
                # this OpenMP runtime share; leaving it at one saved 0.25 us a call)
                set_threads(1)
                try:
                    status = sgemm(ta, tb, m, n, k, one, a, lda, b, ldb, zero, c, ldc)
                finally:
                    set_threads(lib.threads)
            else:
                with _turn(lib):  # (OpenBLAS is not involved: no large_product)
                    status = sgemm(ta, tb, m, n, k, one, a, lda, b, ldb, zero, c, ldc)
            return out if status == 0 else None
        return product


def _sgemm_arguments(key: tuple) -> Optional[tuple]:
    """sgemm's arguments for float32 operands of (x.shape, x.strides, y.shape, y.strides)
    (addresses left out), the result's shape and whether x and y are read through their
    transposes; None where sgemm cannot read an operand in place, or one is empty."""
    (m, k), xst, (_, n), yst = key
    a = _strided_operand(m, k, xst)
    b = _strided_operand(k, n, yst)
    if a is None or b is None or not (m and k and n):
        return None
    i64 = ctypes.c_int64
    return (ctypes.c_char(a[0]), ctypes.c_char(b[0]), i64(m), i64(n), i64(k),
            ctypes.c_float(1.0), i64(a[1]), i64(b[1]), ctypes.c_float(0.0), i64(n),
            (m, n), a[0] == b"T", b[0] == b"T")


# id of a read-only array that owns its memory (a variable's value, a constant) -> (a
# weak reference to it, its address as a ctypes argument): such an array's address is
# taken from `a.ctypes` once (0.8 us)
_READ_ONLY_ADDRESSES: dict = {}


def _pointer(a: np.ndarray):
    """A ctypes argument pointing at a's first element: that of a read-only array kept
    while it lives (0.1 us); by reference to a byte over its buffer where it is
    writable and C-contiguous (0.3 us); else from `a.ctypes` (0.8 us: a read-only view,
    such as a dequeued batch, goes straight there; trying its buffer first cost 0.5
    more)."""
    kept = _READ_ONLY_ADDRESSES.get(id(a))
    if kept is not None and kept[0]() is a:
        return kept[1]
    writable = a.flags.writeable
    if writable:
        try:
            return ctypes.byref(ctypes.c_char.from_buffer(a))
        except (TypeError, ValueError, BufferError):
            pass
    address = ctypes.c_void_p(a.ctypes.data)
    if a.base is None and not writable:
        key = id(a)
        _READ_ONLY_ADDRESSES[key] = (
            weakref.ref(a, lambda _, key=key: _READ_ONLY_ADDRESSES.pop(key, None)), address)
    return address


def _outruns_openblas(isa: int, openblas_cores: Sequence[str]) -> bool:
    """Whether oneDNN, at its effective ISA `isa` (dnnl_cpu_isa_t), runs AVX-512 kernels
    where NumPy's OpenBLAS, at the core names `openblas_cores`, does not (a CPU its build
    does not know, or OPENBLAS_CORETYPE set to an older core): then its sgemm takes a
    product of more than 64^3 multiply-adds in about half OpenBLAS's time on one thread
    (benchmarks/RESULTS.md). False where OpenBLAS's core is not known."""
    cores = [core.lower() for core in openblas_cores]
    return bool(isa & _AVX512_CORE_BIT) and bool(cores) and \
        not any(core in _OPENBLAS_AVX512_CORES for core in cores)


def _effective_isa(lib: _Library) -> int:
    """oneDNN's effective ISA (dnnl_cpu_isa_t); 0 where the library cannot say."""
    try:
        query = lib.lib.dnnl_get_effective_cpu_isa
    except AttributeError:
        return 0
    query.restype = ctypes.c_int
    return query()


def _openblas_cores() -> list:
    """The core names of the OpenBLAS libraries loaded (threadpoolctl's "architecture");
    [] where threadpoolctl is missing or reads none."""
    try:
        from threadpoolctl import threadpool_info
        return [str(info.get("architecture") or "") for info in threadpool_info()
                if info.get("internal_api") == "openblas"]
    except Exception:  # no threadpoolctl, or it cannot read a library
        return []


def matmul_one_thread(x: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
    """x [m, k] @ y [k, n] of float32 matrices (transposed views are read in place) by
    oneDNN's sgemm on the calling thread alone, where its kernels outrun NumPy's OpenBLAS
    (`_outruns_openblas`); None elsewhere, and for the operands where OpenBLAS is as
    fast or sgemm cannot read them in place (`_Sgemm.plan`). For the products
    OpenBLAS runs on one thread (MatMul below blas.LARGE_PRODUCT_MACS)."""
    lib = library()
    gemm = None if lib is None else lib.one_thread_sgemm
    return None if gemm is None else gemm.product(x, y)


def matmul(x: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
    """np.matmul of float32 x [..., m, k] and y [..., k, n] whose batch dimensions
    broadcast (transposed views are read in place), or None where oneDNN does not take
    it."""
    lib = library()
    if lib is None or not _takes(x, y) or x.ndim < 2 or y.ndim < 2 or \
            x.shape[-1] != y.shape[-2]:
        return None
    if x.ndim == 2 and y.ndim == 2:
        b = _gemm_operand(y)
        if b is None:
            y, b = np.ascontiguousarray(y), (b"N", y.shape[1])
        if b[0] == b"N":  # a transposed y: the primitive's (`_Sgemm.plan`)
            return _gemm(lib, x, y)
    ndim = max(x.ndim, y.ndim)
    x = x.reshape((1,) * (ndim - x.ndim) + x.shape)  # views: oneDNN wants equal ranks
    y = y.reshape((1,) * (ndim - y.ndim) + y.shape)
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        return None
    strides = x.strides + y.strides
    if any(st % 4 or st < 0 for st in strides):
        return None
    out = np.empty(batch + (x.shape[-2], y.shape[-1]), np.float32)
    with large_product(out.size * x.shape[-1]), _turn(lib) as lane:
        mm = lane.cached(("matmul", x.shape, y.shape, strides),
                         lambda: _build_matmul(lib, x, y, out.shape))
        if mm is None:
            return None
        mm.main.run(lane, x.ctypes.data, y.ctypes.data, out.ctypes.data)
    return out


class _Passes:
    """A forward and (or) a backward step with the memory descriptors they share, as
    cached for pooling (a gradient's forward step records the winners in `workspace`),
    ReLU and GradientDescent's update."""

    __slots__ = ("forward", "backward", "mds", "workspace")

    def __init__(self, mds: list, forward: Optional[_Step] = None,
                 backward: Optional[_Step] = None):
        self.mds, self.forward, self.backward, self.workspace = mds, forward, backward, None

    def destroy(self, lib: _Library) -> None:
        for step in (self.forward, self.backward):
            if step is not None:
                step.destroy(lib)
        for md in self.mds:
            lib.lib.dnnl_memory_desc_destroy(md)


def _release(lib: _Library, passes: _Passes, built: bool, *pds: _handle) -> None:
    """A builder's cleanup: the memory descriptors of `passes` unless they were built
    into steps, and the primitive descriptors `pds` (a primitive keeps what it needs)."""
    if not built:
        passes.destroy(lib)
    for pd in pds:
        if pd:
            lib.lib.dnnl_primitive_desc_destroy(pd)


def _workspace(lib: _Library, passes: _Passes, pd: _handle) -> _handle:
    """The workspace memory descriptor of the forward primitive `pd` (the winners of a
    max pool, an LRN's norms, a fused ReLU's mask), held by `passes` with the array
    it points at (`passes.workspace`)."""
    c = lib.lib
    ws_md = _handle()
    lib.check(c.dnnl_memory_desc_clone(
        ctypes.byref(ws_md), c.dnnl_primitive_desc_query_md(pd, _QUERY_WORKSPACE_MD, 0)),
        "memory desc clone")
    passes.mds.append(ws_md)
    passes.workspace = np.empty(max(c.dnnl_memory_desc_get_size(ws_md), 1), np.uint8)
    return ws_md


# --- pooling ---------------------------------------------------------------------------------
def _build_pool(lib: _Library, kind: str, grad: bool, x_shape, y_shape,
                wins) -> Optional[_Passes]:
    c = lib.lib
    strides, _, left, right = (_dims(v) for v in _geometry(wins))
    kernel = _dims([w.k for w in wins])
    no_dilation = _dims([0] * len(wins))
    x_md, y_md = _channels_last_md(lib, x_shape), _channels_last_md(lib, y_shape)
    pool = _Passes([x_md, y_md])
    fwd, bwd = _handle(), _handle()
    built = False
    try:
        prop = _FORWARD_TRAINING if grad and kind == "max" else _FORWARD_INFERENCE
        status = c.dnnl_pooling_forward_primitive_desc_create(
            ctypes.byref(fwd), lib.engine, prop, _POOLING_ALGS[kind], x_md, y_md, strides,
            kernel, no_dilation, left, right, None)
        if status != 0:
            return None
        args = [(_ARG_SRC, x_md), (_ARG_DST, y_md)]
        ws_md = None
        if prop == _FORWARD_TRAINING:
            ws_md = _workspace(lib, pool, fwd)
            args.append((_ARG_WORKSPACE, ws_md))
        if not grad or kind == "max":
            pool.forward = lib.step(fwd, args)
        if grad:
            status = c.dnnl_pooling_backward_primitive_desc_create(
                ctypes.byref(bwd), lib.engine, _POOLING_ALGS[kind], x_md, y_md, strides,
                kernel, no_dilation, left, right, fwd, None)
            if status != 0:
                return None
            args = [(_ARG_DIFF_DST, y_md), (_ARG_DIFF_SRC, x_md)]
            if ws_md is not None:
                args.append((_ARG_WORKSPACE, ws_md))
            pool.backward = lib.step(bwd, args)
        built = True
        return pool
    finally:
        _release(lib, pool, built, fwd, bwd)


def _pool_entry(lane: _Lane, kind: str, grad: bool, x_shape, y_shape, wins):
    geometry = _geometry(wins)
    if geometry is None or any(w.dilation != 1 for w in wins):
        return None
    return lane.cached(("pool", kind, grad, x_shape, geometry, tuple(w.k for w in wins)),
                       lambda: _build_pool(lane.lib, kind, grad, x_shape, y_shape, wins))


def _has_nan(x: np.ndarray) -> bool:
    """Whether `x` holds a NaN: its maximum is NaN then (one SIMD pass, 3.5x faster than
    a sum or np.isnan(x).any() on cnn_train's first pool)."""
    return bool(np.isnan(np.maximum.reduce(x, axis=None)))


def pool(x: np.ndarray, wins, kind: str) -> Optional[np.ndarray]:
    """MaxPool ("max") or AvgPool ("avg", padding excluded from the count) of the
    channels-last float32 `x` over `wins`, or None where oneDNN does not take it.

    oneDNN's max starts from the lowest finite float and takes only strictly greater
    values, so NaN is skipped and an all -inf (or all NaN) window gives the lowest
    finite float: TF's rule for MaxPool (pooling_ops._max_pool_nhwc)."""
    lib = library()
    if lib is None or not _takes(x):
        return None
    x = np.ascontiguousarray(x)
    y = np.empty((x.shape[0],) + tuple(w.out for w in wins) + (x.shape[-1],), np.float32)
    with _turn(lib) as lane:
        entry = _pool_entry(lane, kind, False, x.shape, y.shape, wins)
        if entry is None:
            return None
        entry.forward.run(lane, x.ctypes.data, y.ctypes.data)
    return y


def max_pool_grad(x: np.ndarray, dy: np.ndarray, wins) -> Optional[np.ndarray]:
    """MaxPoolGrad: `dy` routed to the first maximum of each window of `x` (row-major,
    as TF's kernel), or None. An input with a NaN goes to NumPy: TF keeps a window
    whose first cell is NaN on that cell (pooling_ops.winning_taps), oneDNN does not."""
    lib = library()
    if lib is None or not _takes(x, dy) or _has_nan(x):
        return None
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    dx = np.empty(x.shape, np.float32)
    with _turn(lib) as lane:
        entry = _pool_entry(lane, "max", True, x.shape, dy.shape, wins)
        if entry is None:
            return None
        ws = entry.workspace.ctypes.data
        pooled = np.empty(dy.shape, np.float32)  # (held: oneDNN writes through its address)
        # the forward pass again, for the winners (TF's kernel recomputes them too)
        entry.forward.run(lane, x.ctypes.data, pooled.ctypes.data, ws)
        entry.backward.run(lane, dy.ctypes.data, dx.ctypes.data, ws)
    return dx


def avg_pool_grad(input_shape, dy: np.ndarray, wins) -> Optional[np.ndarray]:
    """AvgPoolGrad: each window's gradient shared among its real (unpadded) cells, or None."""
    lib = library()
    if lib is None or not _takes(dy) or 0 in input_shape:
        return None
    dy = np.ascontiguousarray(dy)
    dx = np.empty(tuple(input_shape), np.float32)
    with _turn(lib) as lane:
        entry = _pool_entry(lane, "avg", True, dx.shape, dy.shape, wins)
        if entry is None:
            return None
        entry.backward.run(lane, dy.ctypes.data, dx.ctypes.data)
    return dx


# --- ReLU on large arrays ----------------------------------------------------------------------
# Below this many values NumPy's one pass is as fast as a call here (about 8 us of
# overhead); above it oneDNN's kernel runs on every core: on cnn_train's first activation
# (1.6M values) Relu 0.08 ms against NumPy's 0.60, ReluGrad 0.43 against 0.99.
ELTWISE_MIN_SIZE = 1 << 18
# Adam's six passes replace NumPy's eleven from fewer values: a [784, 256] update (200K
# values, a GAN's layer) 114 us against 203 us, 128K values 96 against 129 us, 64K
# values 69 against 63 us (one thread for NumPy, oneDNN's two)
ADAM_MIN_SIZE = 1 << 17
# Whether this library's ReLU passes give TF's values on the probe of special values
# (`_relu_passes_agree`, run once per process); None until it has run.
_RELU_AGREES: Optional[bool] = None


def _relu_passes(lib: _Library, size: int) -> Optional[_Passes]:
    """ReLU's passes over `size` contiguous values:
      forward: oneDNN's ReLU, max(x, 0) but for NaN, which it turns into 0 (TF keeps
        NaN; the caller sends such features to NumPy);
      backward: the gradient of clipping to [0, inf] at x, grad * (0 < x <= inf), which
        is TF's grad * (x > 0) at every value, NaN and the infinities included (oneDNN's
        ReLU gradient passes the gradient of a NaN feature)."""
    c = lib.lib
    md = lib.strided_md([size], [1])
    passes = _Passes([md])
    fwd, hint, bwd = _handle(), _handle(), _handle()
    built = False
    try:
        if c.dnnl_eltwise_forward_primitive_desc_create(
                ctypes.byref(fwd), lib.engine, _FORWARD_TRAINING, _ELTWISE_RELU, md, md, 0.0,
                0.0, None) != 0 or c.dnnl_eltwise_forward_primitive_desc_create(
                    ctypes.byref(hint), lib.engine, _FORWARD_TRAINING, _ELTWISE_CLIP, md, md,
                    0.0, math.inf, None) != 0 or \
                c.dnnl_eltwise_backward_primitive_desc_create(
                    ctypes.byref(bwd), lib.engine, _ELTWISE_CLIP, md, md, md, 0.0, math.inf,
                    hint, None) != 0:
            return None
        passes.forward = lib.step(fwd, [(_ARG_SRC, md), (_ARG_DST, md)])
        passes.backward = lib.step(bwd, [(_ARG_SRC, md), (_ARG_DIFF_DST, md),
                                         (_ARG_DIFF_SRC, md)])
        built = True
        return passes
    finally:
        _release(lib, passes, built, fwd, hint, bwd)


def _relu_passes_agree(lane: _Lane) -> bool:
    """Whether `_relu_passes` give NumPy's max(x, 0) (for x not NaN) and grad * (x > 0)
    bit for bit on every pair of special values (NaN, the infinities, signed zeros,
    denormals), over a length with a vector body and a tail. The values at NaN are the
    kernels' detail, not oneDNN's contract, so they are checked rather than assumed."""
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45,
                        3e38], np.float32)
    x, grad = (np.tile(a.ravel(), 11)[:1037] for a in np.meshgrid(special, special))
    passes = _relu_passes(lane.lib, x.size)
    if passes is None:
        return False
    try:
        finite = np.nan_to_num(x, nan=-2.0, posinf=np.inf, neginf=-np.inf)
        y, dx = np.empty_like(x), np.empty_like(x)
        passes.forward.run(lane, finite.ctypes.data, y.ctypes.data)
        passes.backward.run(lane, x.ctypes.data, grad.ctypes.data, dx.ctypes.data)
    finally:
        passes.destroy(lane.lib)
    with np.errstate(invalid="ignore"):
        want_dx = grad * (x > 0).astype(np.float32)
    want_y = np.maximum(finite, np.float32(0))
    return np.array_equal(y.view(np.uint32), want_y.view(np.uint32)) and \
        np.array_equal(dx.view(np.uint32), want_dx.view(np.uint32))


def _build_relu(lane: _Lane, size: int) -> Optional[_Passes]:
    global _RELU_AGREES
    if _RELU_AGREES is None:
        _RELU_AGREES = _relu_passes_agree(lane)
    return _relu_passes(lane.lib, size) if _RELU_AGREES else None


def _run_relu(features: np.ndarray, direction: str, *operands: np.ndarray,
              out: Optional[np.ndarray] = None):
    """ReLU's `direction` ("forward": max(x, 0); "backward": grad * (x > 0)) over the
    features and `operands` (the gradient), into `out` (one of them, or None: a new
    array); None, having written nothing, where oneDNN does not take it: small, not
    float32 or not contiguous, features holding a NaN in the forward direction
    (`_relu_passes`), or passes that would not give TF's values (`_relu_passes_agree`)."""
    lib = library()
    arrays = (features,) + operands
    if lib is None or features.size < ELTWISE_MIN_SIZE or not _takes(*arrays) or \
            any(a.shape != features.shape or not a.flags.c_contiguous for a in arrays) or \
            direction == "forward" and _has_nan(features):
        return None
    if out is None:
        out = np.empty_like(features)
    size = features.size
    with _turn(lib) as lane:
        entry = lane.cached(("relu", size), lambda: _build_relu(lane, size))
        if entry is None:
            return None
        getattr(entry, direction).run(lane, *(a.ctypes.data for a in arrays + (out,)))
    return out


def relu(x: np.ndarray) -> Optional[np.ndarray]:
    """max(x, 0) of a large float32 array on every core, or None."""
    return _run_relu(x, "forward")


def relu_grad(grad: np.ndarray, features: np.ndarray,
              into_grad: bool = False) -> Optional[np.ndarray]:
    """grad * (features > 0) (TF's ReluGrad) of large float32 arrays on every core, or
    None; with `into_grad`, written into `grad` (oneDNN's passes run in place)."""
    return _run_relu(features, "backward", grad, out=grad if into_grad else None)


# --- batch normalization ---------------------------------------------------------------------
# Below this many values NumPy's passes cost about as much as a call here.
BATCH_NORM_MIN_SIZE = 1 << 15


def _normalized_md(lib: _Library, shape: Sequence[int], axis: int) -> _handle:
    """A contiguous array of `shape` whose channels are on `axis`, described in oneDNN's
    (n, c, *spatial) order."""
    st = _contiguous_strides(shape)
    rest = [i for i in range(1, len(shape)) if i != axis]
    return lib.strided_md([shape[0], shape[axis]] + [shape[i] for i in rest],
                          [st[0], st[axis]] + [st[i] for i in rest])


def _build_batch_norm(lib: _Library, shape, axis: int, epsilon: float, training: bool,
                      relu: bool) -> Optional[_Passes]:
    """FusedBatchNorm's passes over float32 x of `shape`: forward (x, scale, shift ->
    y, and the batch's mean and biased variance in training; the given ones otherwise)
    and backward (dx, d_scale, d_shift, with the statistics' own derivatives in
    training, as TF's FusedBatchNormGrad). With `relu`, the forward pass only, ReLU
    applied to y in the same pass (its mask goes to `workspace`, which nothing reads:
    the gradient stays ReluGrad's and FusedBatchNormGrad's, as in TF)."""
    c = lib.lib
    md, vec = _normalized_md(lib, shape, axis), lib.strided_md([shape[axis]], [1])
    passes = _Passes([md, vec])
    flags = _USE_SCALE | _USE_SHIFT | (0 if training else _USE_GLOBAL_STATS) | \
        (_FUSE_NORM_RELU if relu else 0)
    fwd, bwd = _handle(), _handle()
    built = False
    try:
        create_backward = c.dnnl_batch_normalization_backward_primitive_desc_create
        if c.dnnl_batch_normalization_forward_primitive_desc_create(
                ctypes.byref(fwd), lib.engine, _FORWARD_TRAINING, md, md, epsilon, flags,
                None) != 0 or not relu and create_backward(
                    ctypes.byref(bwd), lib.engine, _BACKWARD, md, md, md, epsilon, flags, fwd,
                    None) != 0:
            return None
        args = [(_ARG_SRC, md), (_ARG_SCALE, vec), (_ARG_SHIFT, vec), (_ARG_MEAN, vec),
                (_ARG_VARIANCE, vec), (_ARG_DST, md)]
        if relu:
            args.append((_ARG_WORKSPACE, _workspace(lib, passes, fwd)))
        passes.forward = lib.step(fwd, args)
        if not relu:
            passes.backward = lib.step(bwd, [(_ARG_SRC, md), (_ARG_MEAN, vec),
                                             (_ARG_VARIANCE, vec), (_ARG_DIFF_DST, md),
                                             (_ARG_SCALE, vec), (_ARG_DIFF_SRC, md),
                                             (_ARG_DIFF_SCALE, vec), (_ARG_DIFF_SHIFT, vec)])
        built = True
        return passes
    finally:
        _release(lib, passes, built, fwd, bwd)


def _batch_norm_passes(lane: _Lane, shape, axis: int, epsilon: float, training: bool,
                       relu: bool = False):
    return lane.cached(("batch_norm", shape, axis, epsilon, training, relu),
                       lambda: _build_batch_norm(lane.lib, shape, axis, epsilon, training,
                                                 relu))


def _takes_batch_norm(x: np.ndarray, vectors) -> bool:
    return x.size >= BATCH_NORM_MIN_SIZE and _takes(x, *vectors) and \
        all(v.ndim == 1 and v.flags.c_contiguous for v in vectors)


def batch_norm(x: np.ndarray, scale: np.ndarray, offset: np.ndarray, epsilon: float,
               axis: int, mean: Optional[np.ndarray] = None,
               variance: Optional[np.ndarray] = None, relu: bool = False):
    """FusedBatchNorm of float32 x with channels on `axis`: (y, mean, variance used), with
    the batch's mean and biased variance where `mean` is None (training), or None where
    oneDNN does not take it. With `relu`, y is max(y, 0) (oneDNN's: 0 for NaN)."""
    lib = library()
    training = mean is None
    vectors = (scale, offset) + (() if training else (mean, variance))
    if lib is None or not _takes_batch_norm(x, vectors):
        return None
    x = np.ascontiguousarray(x)
    y = np.empty_like(x)
    if training:
        mean, variance = (np.empty(x.shape[axis], np.float32) for _ in range(2))
    with _turn(lib) as lane:
        entry = _batch_norm_passes(lane, x.shape, axis, float(epsilon), training, relu)
        if entry is None:
            return None
        arrays = (x, scale, offset, mean, variance, y) + \
            ((entry.workspace,) if relu else ())
        entry.forward.run(lane, *(a.ctypes.data for a in arrays))
    return y, mean, variance


def batch_norm_grad(dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray,
                    variance: np.ndarray, epsilon: float, axis: int, training: bool):
    """FusedBatchNormGrad of float32 arrays with channels on `axis`: (dx, d_scale,
    d_offset), or None where oneDNN does not take it."""
    lib = library()
    if lib is None or dy.shape != x.shape or not _takes(dy) or \
            not _takes_batch_norm(x, (scale, mean, variance)):
        return None
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    dx = np.empty_like(x)
    d_scale, d_offset = (np.empty(x.shape[axis], np.float32) for _ in range(2))
    with _turn(lib) as lane:
        entry = _batch_norm_passes(lane, x.shape, axis, float(epsilon), training)
        if entry is None:
            return None
        entry.backward.run(lane, *(a.ctypes.data for a in (x, mean, variance, dy, scale, dx,
                                                           d_scale, d_offset)))
    return dx, d_scale, d_offset


# --- local response normalization ------------------------------------------------------------
def _build_lrn(lib: _Library, shape, radius: int, bias: float, alpha: float,
               beta: float) -> Optional[_Passes]:
    """LRN's passes over float32 NHWC x of `shape`: forward (recording its workspace) and
    backward. TF's window is 2 * radius + 1 channels, clipped at the edges, and its alpha
    multiplies the window's sum where oneDNN's multiplies the window's mean."""
    c = lib.lib
    md = _channels_last_md(lib, shape)
    passes = _Passes([md])
    size = 2 * radius + 1
    params = (size, alpha * size, beta, bias)
    fwd, bwd = _handle(), _handle()
    built = False
    try:
        if c.dnnl_lrn_forward_primitive_desc_create(
                ctypes.byref(fwd), lib.engine, _FORWARD_TRAINING, _LRN_ACROSS_CHANNELS, md, md,
                *params, None) != 0 or c.dnnl_lrn_backward_primitive_desc_create(
                    ctypes.byref(bwd), lib.engine, _LRN_ACROSS_CHANNELS, md, md, md, *params,
                    fwd, None) != 0:
            return None
        ws_md = _workspace(lib, passes, fwd)
        passes.forward = lib.step(fwd, [(_ARG_SRC, md), (_ARG_DST, md),
                                        (_ARG_WORKSPACE, ws_md)])
        passes.backward = lib.step(bwd, [(_ARG_SRC, md), (_ARG_DIFF_DST, md),
                                         (_ARG_WORKSPACE, ws_md), (_ARG_DIFF_SRC, md)])
        built = True
        return passes
    finally:
        _release(lib, passes, built, fwd, bwd)


def _run_lrn(x: np.ndarray, attrs: tuple, dy: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """LRN of float32 NHWC `x` (`attrs`: depth_radius, bias, alpha, beta), or with `dy`
    its input gradient (the forward pass again, for the workspace); None where oneDNN
    does not take it."""
    lib = library()
    arrays = (x,) if dy is None else (x, dy)
    # (a window of one channel, radius 0, crashes oneDNN 3.2's kernel: NumPy's takes it)
    if lib is None or x.ndim != 4 or attrs[0] < 1 or not _takes(*arrays) or \
            dy is not None and dy.shape != x.shape:
        return None
    x = np.ascontiguousarray(x)
    y = np.empty_like(x)
    key = ("lrn", x.shape) + attrs
    with _turn(lib) as lane:
        entry = lane.cached(key, lambda: _build_lrn(lib, x.shape, *attrs))
        if entry is None:
            return None
        ws = entry.workspace.ctypes.data
        entry.forward.run(lane, x.ctypes.data, y.ctypes.data, ws)
        if dy is None:
            return y
        dy = np.ascontiguousarray(dy)
        entry.backward.run(lane, x.ctypes.data, dy.ctypes.data, ws, y.ctypes.data)
    return y  # (the input gradient, written over the recomputed output)


def lrn(x: np.ndarray, radius: int, bias: float, alpha: float,
        beta: float) -> Optional[np.ndarray]:
    """TF's LRN over the last axis of float32 4-D `x`, or None."""
    return _run_lrn(x, (int(radius), float(bias), float(alpha), float(beta)), None)


def lrn_grad(dy: np.ndarray, x: np.ndarray, radius: int, bias: float, alpha: float,
             beta: float) -> Optional[np.ndarray]:
    """TF's LRNGrad: the input gradient of `lrn` at `x` for output gradient `dy`, or None."""
    return _run_lrn(x, (int(radius), float(bias), float(alpha), float(beta)), dy)


# --- Adam's update of a large variable -------------------------------------------------------
class _Chain:
    """Primitives run one after another over arrays of one size (Adam's update)."""

    __slots__ = ("steps", "mds")

    def __init__(self, mds: list):
        self.mds, self.steps = mds, []

    def destroy(self, lib: _Library) -> None:
        for step in self.steps:
            step.destroy(lib)
        for md in self.mds:
            lib.lib.dnnl_memory_desc_destroy(md)


def _binary_step(lib: _Library, alg: int, md: _handle, post: Sequence[tuple],
                 scale_md: Optional[_handle] = None, scaled: int = _ARG_SRC,
                 src1_md: Optional[_handle] = None) -> Optional[_Step]:
    """A binary primitive dst = src0 `alg` src1 over `md` (src1 broadcast from `src1_md`
    where given), then the binary post-ops `post` ((alg, src1 md) each: dst = dst alg
    src1), with a runtime scale of operand `scaled` (_ARG_SRC or _ARG_SRC_1) where
    `scale_md` is given; None where oneDNN does not build it. Its arguments, in order:
    src0, src1, dst, each post-op's src1, the scale."""
    src1_md = md if src1_md is None else src1_md
    c = lib.lib
    attr, ops, pd = _handle(), _handle(), _handle()
    lib.check(c.dnnl_primitive_attr_create(ctypes.byref(attr)), "attr")
    try:
        lib.check(c.dnnl_post_ops_create(ctypes.byref(ops)), "post-ops")
        for op_alg, src1 in post:
            lib.check(c.dnnl_post_ops_append_binary(ops, op_alg, src1), "post-op")
        lib.check(c.dnnl_primitive_attr_set_post_ops(attr, ops), "post-ops")
        if scale_md is not None and c.dnnl_primitive_attr_set_scales_mask(attr, scaled,
                                                                          0) != 0:
            return None
        if c.dnnl_binary_primitive_desc_create(ctypes.byref(pd), lib.engine, alg, md, src1_md,
                                               md, attr) != 0:
            return None
        args = [(_ARG_SRC, md), (_ARG_SRC_1, src1_md), (_ARG_DST, md)] + \
            [(_ARG_POST_OP_BASE * (k + 1) | _ARG_SRC_1, src1) for k, (_, src1) in
             enumerate(post)]
        if scale_md is not None:
            args.append((_ARG_ATTR_SCALES | scaled, scale_md))
        return lib.step(pd, args)
    finally:
        for handle, destroy in ((pd, c.dnnl_primitive_desc_destroy),
                                (ops, c.dnnl_post_ops_destroy),
                                (attr, c.dnnl_primitive_attr_destroy)):
            if handle:
                destroy(handle)


def _build_adam(lib: _Library, size: int) -> Optional[_Chain]:
    """Adam's update over `size` contiguous values as NumPy's kernel computes it
    (train/training_ops.py), one rounded operation at a time, in six passes:
      m' = ((g - m) * (1 - beta1)) + m
      v' = (((g * g) - v) * (1 - beta2)) + v
      s = sqrt(v')
      d = s + epsilon
      t = (alpha * m') / d            (alpha, a runtime scale of m')
      w' = w - t
    the constants broadcast from one-value operands given at each call. (A post-op on
    the square root, or a broadcast first operand, runs oneDNN's reference kernel: 30-60
    ms for 3.2M values.)"""
    c = lib.lib
    md, one = lib.strided_md([size], [1]), lib.strided_md([1], [1])
    chain = _Chain([md, one])
    sqrt = _handle()
    try:
        steps = [
            _binary_step(lib, _BINARY_SUB, md, [(_BINARY_MUL, one), (_BINARY_ADD, md)]),
            _binary_step(lib, _BINARY_MUL, md, [(_BINARY_SUB, md), (_BINARY_MUL, one),
                                                (_BINARY_ADD, md)])]
        if c.dnnl_eltwise_forward_primitive_desc_create(
                ctypes.byref(sqrt), lib.engine, _FORWARD_INFERENCE, _ELTWISE_SQRT, md, md,
                0.0, 0.0, None) == 0:
            steps.append(lib.step(sqrt, [(_ARG_SRC, md), (_ARG_DST, md)]))
        else:
            steps.append(None)
        steps += [_binary_step(lib, _BINARY_ADD, md, [], src1_md=one),
                  _binary_step(lib, _BINARY_DIV, md, [], scale_md=one),
                  _binary_step(lib, _BINARY_SUB, md, [])]
        chain.steps = [step for step in steps if step is not None]
        if len(chain.steps) != len(steps):
            chain.destroy(lib)
            return None
        return chain
    finally:
        if sqrt:
            c.dnnl_primitive_desc_destroy(sqrt)


def _run_adam(lane: _Lane, chain: _Chain, w, m, v, g, alpha, c1, c2, epsilon):
    """The six passes of `_build_adam` into new arrays: (w', m', v')."""
    new_m, new_v, d, t, new_w = (np.empty(w.shape, np.float32) for _ in range(5))
    step_m, step_v, step_s, step_d, step_t, step_w = chain.steps
    step_m.run(lane, g.ctypes.data, m.ctypes.data, new_m.ctypes.data, c1.ctypes.data,
               m.ctypes.data)
    step_v.run(lane, g.ctypes.data, g.ctypes.data, new_v.ctypes.data, v.ctypes.data,
               c2.ctypes.data, v.ctypes.data)
    step_s.run(lane, new_v.ctypes.data, d.ctypes.data)
    step_d.run(lane, d.ctypes.data, epsilon.ctypes.data, d.ctypes.data)
    step_t.run(lane, new_m.ctypes.data, d.ctypes.data, t.ctypes.data, alpha.ctypes.data)
    step_w.run(lane, w.ctypes.data, t.ctypes.data, new_w.ctypes.data)
    return new_w, new_m, new_v


# Whether `_build_adam`'s passes give NumPy's bits on the probe of `_adam_agrees`, run
# once per process; None until it has run.
_ADAM_AGREES: Optional[bool] = None


def _adam_agrees(lane: _Lane) -> bool:
    """Whether the passes give the bits of NumPy's update (in the order of
    training_ops' Adam kernel) on signed zeros, denormals, infinities, NaN and random
    values, over a length with a vector body and a tail. The post-ops' rounding (one
    rounding per operation, no fused multiply-add) is the kernels' detail, so it is
    checked rather than assumed."""
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, 1.0, -1.0, 3e38, -3e38, np.inf,
                        -np.inf, np.nan], np.float32)
    rs = np.random.RandomState(0)
    n = 1037
    w, m, v, g = (rs.randn(n).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    for a in (w, m, g):
        a[:special.size] = special
        a[-special.size:] = special[::-1]
    g[special.size:2 * special.size] = special
    alpha, c1, c2, eps = (np.array([x], np.float32) for x in (1e-3, 0.1, 0.001, 1e-8))
    chain = _build_adam(lane.lib, n)
    if chain is None:
        return False
    try:
        got = _run_adam(lane, chain, w, m, v, g, alpha, c1, c2, eps)
    except OneDNNError:
        return False
    finally:
        chain.destroy(lane.lib)
    with np.errstate(all="ignore"):
        m2 = ((g - m) * c1[0]) + m
        v2 = ((g * g - v) * c2[0]) + v
        w2 = w - (m2 * alpha[0]) / (np.sqrt(v2) + eps[0])
    return all(np.array_equal(a.view(np.uint32), b.view(np.uint32))
               for a, b in zip(got, (w2, m2, v2)))


def adam(w: np.ndarray, m: np.ndarray, v: np.ndarray, g: np.ndarray, alpha, c1, c2,
         epsilon):
    """Adam's update of a large float32 variable `w` with moments `m`, `v` and gradient
    `g` into new arrays (w', m', v'), on every core; `alpha` is the step's learning rate
    lr * sqrt(1 - beta2^t) / (1 - beta1^t), `c1`, `c2` are 1 - beta1, 1 - beta2 (float32
    scalars). None where oneDNN does not take it (small, another dtype, not C-contiguous,
    oneDNN missing, or passes that would not give NumPy's bits).

    Out of place, as GradientDescent's (`subtract_scaled` says why), and on oneDNN's
    threads: NumPy's eleven passes after the step's products on oneDNN ran at a third of
    their speed alone (a 3136x1024 variable: 4.4-6.5 ms in the Deep MNIST tutorial's
    step, 2.4 ms alone on two threads; TensorFlow 1.9 ms)."""
    global _ADAM_AGREES
    lib = library()
    if lib is None or w.size < ADAM_MIN_SIZE or not _takes(w, m, v, g) or \
            not m.shape == v.shape == g.shape == w.shape or \
            not all(a.flags.c_contiguous for a in (w, m, v, g)):
        return None
    size = w.size
    consts = [np.array([x], np.float32) for x in (alpha, c1, c2, epsilon)]
    with _turn(lib) as lane:
        if _ADAM_AGREES is None:
            _ADAM_AGREES = _adam_agrees(lane)
        if not _ADAM_AGREES:
            return None
        chain = lane.cached(("adam", size), lambda: _build_adam(lib, size))
        if chain is None:
            return None
        return _run_adam(lane, chain, w, m, v, g, *consts)


# --- GradientDescent's update of a large variable -------------------------------------------
def _build_subtract_scaled(lib: _Library, size: int) -> Optional[_Passes]:
    """x - alpha * y over `size` contiguous values, alpha given at each call (a runtime
    scale of the second operand), with NumPy's bits (the product is rounded, then the
    difference: no fused multiply-add)."""
    entry = _Passes([lib.strided_md([size], [1]), lib.strided_md([1], [1])])
    md, scale_md = entry.mds
    entry.forward = _binary_step(lib, _BINARY_SUB, md, [], scale_md=scale_md,
                                 scaled=_ARG_SRC_1)
    if entry.forward is None:
        entry.destroy(lib)
        return None
    return entry


def subtract_scaled(x: np.ndarray, y: np.ndarray, alpha: np.ndarray) -> Optional[np.ndarray]:
    """x - alpha * y, into a new array, for a large float32 `x`, `y` of its shape and a
    float32 scalar `alpha`, on every core; None where oneDNN does not take it (small,
    another dtype, not C-contiguous, oneDNN missing).

    GradientDescent's update of a large variable (train/training_ops.py), which then
    takes the new array as the variable's value: on cnn_train's W3 (800K values) 0.26 ms
    in the step, against 0.70-0.75 ms for NumPy's `x -= y * alpha` or this primitive in
    place. Writing in place is what costs: oneDNN's threads have just read the
    variable's lines into the other core's cache (the forward and gradient products), and
    each write must take them back (a [64, 3136] x W3 product on oneDNN, then a write of
    W3 with NumPy: 0.19-1.27 ms against 0.05 ms after a product on NumPy's one thread)."""
    lib = library()
    if lib is None or x.size < ELTWISE_MIN_SIZE or not _takes(x, y, alpha) or \
            y.shape != x.shape or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return None
    out = np.empty(x.shape, np.float32)
    scale = np.array([alpha], np.float32)  # (held: oneDNN reads it through its address)
    size = x.size
    with _turn(lib) as lane:
        entry = lane.cached(("subtract_scaled", size),
                            lambda: _build_subtract_scaled(lib, size))
        if entry is None:
            return None
        entry.forward.run(lane, x.ctypes.data, y.ctypes.data, out.ctypes.data,
                          scale.ctypes.data)
    return out
