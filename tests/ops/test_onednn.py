"""ops/onednn.py: oneDNN's float32 convolutions and products against float64 NumPy
references, its fallbacks, its cache and its threads. Skipped where the library is not
installed (the `onednn` extra); the kernels then run on NumPy, which the conv tests
cover either way."""
import ctypes
import os
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import onednn
from tensorweave.ops.math import blas
from tensorweave.ops.nn.conv_ops import make_window

pytestmark = pytest.mark.skipif(not onednn.available(),
                                reason="oneDNN is not installed (the `onednn` extra)")
RNG = np.random.RandomState(11)


def _python(code: str, **environ: str) -> list:
    """The words `code` prints in a fresh interpreter with `environ` added (it must exit
    0 within two minutes)."""
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **environ),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


# --- float64 references: one product per filter tap over an explicitly padded input ------
def _taps(w_shape, strides, dilations, outs):
    for tap in np.ndindex(*w_shape[:-2]):
        yield tap, (slice(None),) + tuple(
            slice(t * d, t * d + s * (o - 1) + 1, s)
            for t, s, d, o in zip(tap, strides, dilations, outs))


def _outs(padded_shape, w_shape, strides, dilations):
    return [(p - ((k - 1) * d + 1)) // s + 1
            for p, k, s, d in zip(padded_shape, w_shape[:-2], strides, dilations)]


def ref_conv(x, w, strides, dilations, pads):
    xp = np.pad(x.astype(np.float64), [(0, 0)] + list(pads) + [(0, 0)])
    outs = _outs(xp.shape[1:-1], w.shape, strides, dilations)
    y = np.zeros([x.shape[0]] + outs + [w.shape[-1]])
    for tap, index in _taps(w.shape, strides, dilations, outs):
        y += xp[index] @ w[tap].astype(np.float64)
    return y


def ref_backprop_input(x_shape, w, dy, strides, dilations, pads):
    padded = [n + a + b for n, (a, b) in zip(x_shape[1:-1], pads)]
    dxp = np.zeros([x_shape[0]] + padded + [x_shape[-1]])
    for tap, index in _taps(w.shape, strides, dilations, dy.shape[1:-1]):
        dxp[index] += dy.astype(np.float64) @ w[tap].astype(np.float64).T
    return dxp[(slice(None),) + tuple(slice(a, a + n) for n, (a, _) in
                                      zip(x_shape[1:-1], pads))]


def ref_backprop_filter(x, w_shape, dy, strides, dilations, pads):
    xp = np.pad(x.astype(np.float64), [(0, 0)] + list(pads) + [(0, 0)])
    dw = np.zeros(w_shape)
    for tap, index in _taps(w_shape, strides, dilations, dy.shape[1:-1]):
        dw[tap] = np.tensordot(xp[index], dy.astype(np.float64),
                               axes=(list(range(dy.ndim - 1)),) * 2)
    return dw


# (input shape, filter shape, strides, dilations, padding, explicit pads)
CASES = [
    ([2, 9, 8, 3], [3, 3, 3, 4], [1, 1], [1, 1], "SAME", None),
    ([1, 10, 7, 1], [5, 5, 1, 5], [2, 2], [1, 1], "SAME", None),      # uneven SAME pads
    ([2, 11, 11, 2], [3, 3, 2, 3], [1, 1], [2, 2], "VALID", None),    # dilated
    ([2, 8, 9, 4], [2, 3, 4, 6], [2, 1], [1, 1], "EXPLICIT", [(1, 2), (0, 3)]),
    ([3, 14, 14, 32], [5, 5, 32, 64], [1, 1], [1, 1], "SAME", None),  # cnn_train's 2nd
    ([2, 6, 5, 7], [1, 1, 7, 3], [1, 1], [1, 1], "VALID", None),      # 1x1
    ([2, 5, 6, 7, 3], [3, 3, 3, 3, 4], [1, 2, 1], [1, 1, 1], "SAME", None),   # Conv3D
    ([1, 6, 6, 6, 2], [2, 2, 2, 2, 3], [2, 1, 1], [1, 1, 2], "VALID", None),
]


def _windows(x_shape, w_shape, strides, dilations, padding, pads):
    return [make_window(n, k, s, d, padding, pads[i] if pads else (0, 0))
            for i, (n, k, s, d) in enumerate(zip(x_shape[1:-1], w_shape[:-2], strides,
                                                 dilations))]


@pytest.mark.parametrize("x_shape,w_shape,strides,dilations,padding,pads", CASES)
def test_convolution_and_its_gradients_match_float64_references(
        x_shape, w_shape, strides, dilations, padding, pads):
    x = RNG.randn(*x_shape).astype(np.float32)
    w = RNG.randn(*w_shape).astype(np.float32)
    wins = _windows(x_shape, w_shape, strides, dilations, padding, pads)
    geometry = [(win.pad_before, win.pad_after) for win in wins]
    y = onednn.conv(x, w, wins)
    want = ref_conv(x, w, strides, dilations, geometry)
    assert y.dtype == np.float32 and y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    dy = RNG.randn(*y.shape).astype(np.float32)
    dx = onednn.conv_backprop_input(x_shape, w, dy, wins)
    np.testing.assert_allclose(dx, ref_backprop_input(x_shape, w, dy, strides, dilations,
                                                      geometry), rtol=1e-4, atol=1e-4)
    dw = onednn.conv_backprop_filter(x, w_shape, dy, wins)
    np.testing.assert_allclose(dw, ref_backprop_filter(x, w_shape, dy, strides, dilations,
                                                       geometry), rtol=1e-4, atol=1e-3)
    # the adjoint identities tie the three passes together independently of the references
    dot = float(np.vdot(y.astype(np.float64), dy))
    assert np.isclose(np.vdot(x.astype(np.float64), dx), dot, rtol=1e-4, atol=1e-3)
    assert np.isclose(np.vdot(w.astype(np.float64), dw), dot, rtol=1e-4, atol=1e-3)


def test_what_onednn_does_not_take_falls_back():
    x = RNG.randn(1, 5, 5, 2)
    w = RNG.randn(3, 3, 2, 2)
    wins = _windows(x.shape, w.shape, [1, 1], [1, 1], "SAME", None)
    assert onednn.conv(x, w, wins) is None  # float64 runs on NumPy
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    assert onednn.conv(x32[:0], w32, wins) is None  # empty batch
    # a window whose output size oneDNN would compute differently
    bad = _windows(x.shape, w.shape, [1, 1], [1, 1], "SAME", None)
    bad[0].out += 1
    assert onednn.conv(x32, w32, bad) is None
    assert onednn.matmul(np.ones((4, 3)), np.ones((3, 2))) is None

    class Device(np.ndarray):
        """Stands for an array of another library (CuPy on the GPU shares these kernel
        bodies): float32, but not a NumPy array."""
    other = x32.view(Device)
    assert onednn.conv(other, w32, wins) is None
    assert onednn.pool(other, wins, "max") is None
    assert onednn.matmul(other[0, 0], w32[0, 0]) is None
    big = np.ones(onednn.ELTWISE_MIN_SIZE, np.float32).view(Device)
    assert onednn.relu(big) is None
    # a negative stride: the batched primitive does not take it; a matrix is copied
    flipped = np.arange(12, dtype=np.float32).reshape(4, 3)[::-1]
    assert onednn.matmul(flipped[None], np.ones((1, 3, 2), np.float32)) is None
    np.testing.assert_array_equal(onednn.matmul(flipped, np.ones((3, 2), np.float32)),
                                  flipped.sum(1, keepdims=True).repeat(2, 1))


@pytest.mark.parametrize("m,k,n", [(100, 784, 100), (3, 5, 7), (64, 3136, 256)])
def test_matmul_reads_transposed_views_in_place(m, k, n):
    a = RNG.randn(m, k).astype(np.float32)
    b = RNG.randn(k, n).astype(np.float32)
    want = a.astype(np.float64) @ b
    for x, y in [(a, b), (np.asfortranarray(a), b), (a.T.copy().T, b.T.copy().T),
                 (a[:, :], np.asfortranarray(b))]:
        got = onednn.matmul(x, y)
        assert got.dtype == np.float32 and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_sgemm_reads_every_matrix_layout_and_read_only_arrays(monkeypatch):
    # rows evenly spaced (slices of wider matrices), transposed views, columns taken
    # every other (copied), reversed rows (copied), read-only operands; the second
    # operand transposed goes to the primitive instead
    gemms = []
    real = onednn._gemm
    monkeypatch.setattr(onednn, "_gemm", lambda *a: gemms.append(1) or real(*a))
    m, k, n = 33, 70, 45
    a = RNG.randn(m, k).astype(np.float32)
    b = RNG.randn(k, n).astype(np.float32)
    wide_a = RNG.randn(m, k + 9).astype(np.float32)
    wide_a[:, :k] = a
    tall_at = RNG.randn(k, m + 4).astype(np.float32)
    tall_at[:, :m] = a.T
    spread_b = np.zeros((k, 2 * n), np.float32)
    spread_b[:, ::2] = b
    frozen_a = a.copy()
    frozen_a.flags.writeable = False
    firsts = [a, np.asfortranarray(a), wide_a[:, :k], tall_at[:, :m].T, np.ascontiguousarray(a[::-1])[::-1],
              frozen_a]
    seconds = [b, spread_b[:, ::2], np.ascontiguousarray(b[::-1])[::-1]]
    want = a.astype(np.float64) @ b
    for x in firsts:
        for y in seconds:
            got = onednn.matmul(x, y)
            assert got.flags.c_contiguous and got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert len(gemms) == len(firsts) * len(seconds)
    np.testing.assert_allclose(onednn.matmul(a, np.asfortranarray(b)), want, rtol=1e-4,
                               atol=1e-4)
    assert len(gemms) == len(firsts) * len(seconds)  # a transposed y: the primitive's
    x = np.full((40, 30), np.nan, np.float32)
    x[1:] = 1.0
    got = onednn.matmul(x, np.ones((30, 20), np.float32))  # NaN propagates, C is not read
    assert np.isnan(got[0]).all() and (got[1:] == 30).all()


def test_sgemm_plans_rows_and_columns_of_one_whatever_their_strides():
    # a dimension of one may have any stride (a vector's row or column views): its
    # matrix is still read in place
    v = RNG.randn(300).astype(np.float32)
    b = RNG.randn(300, 40).astype(np.float32)
    gemm = onednn._Sgemm(onednn.library(), one_thread=False)
    for x, y in [(v[None, :], b), (b.T, v[:, None]), (v[None, :], v[:, None])]:
        assert gemm.plan((x.shape, x.strides, y.shape, y.strides)) is not None
        np.testing.assert_allclose(gemm(x, y), x.astype(np.float64) @ y, rtol=1e-4,
                                   atol=1e-4)


def test_large_float32_products_use_sgemm_unless_the_second_is_transposed(sess,
                                                                          monkeypatch):
    shapes = []
    real = onednn._gemm
    monkeypatch.setattr(onednn, "_gemm", lambda lib, x, y: shapes.append(x.shape) or
                        real(lib, x, y))
    a = RNG.randn(64, 512).astype(np.float32)
    b = RNG.randn(512, 96).astype(np.float32)
    want = a.astype(np.float64) @ b
    assert 64 * 512 * 96 >= blas.LARGE_PRODUCT_MACS
    np.testing.assert_allclose(sess.run(tf.matmul(a, b)), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sess.run(tf.matmul(a.T.copy(), b, transpose_a=True)), want,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sess.run(tf.matmul(a, b.T.copy(), transpose_b=True)), want,
                               rtol=1e-4, atol=1e-4)  # the primitive's
    assert shapes == [(64, 512), (64, 512)]


def test_large_float32_matmul_ops_use_onednn(sess, monkeypatch):
    calls = []
    real = onednn.matmul
    monkeypatch.setattr(onednn, "matmul", lambda x, y: calls.append(x.shape) or real(x, y))
    a = RNG.randn(200, 300).astype(np.float32)
    b = RNG.randn(200, 100).astype(np.float32)
    got = sess.run(tf.matmul(a, b, transpose_a=True))
    np.testing.assert_allclose(got, a.T.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    small = sess.run(tf.matmul(a[:8, :8], b[:8, :8]))  # too small to split: NumPy's
    np.testing.assert_allclose(small, a[:8, :8] @ b[:8, :8], rtol=1e-5)
    assert calls == [(300, 200)]


def _one_thread_gemm():
    lib = onednn.library()
    assert lib.openmp is not None  # libgomp, which the `onednn-cpu-gomp` wheel loads
    return onednn._Sgemm(lib, one_thread=True)


def test_one_thread_products_read_their_layouts_in_place_or_decline():
    gemm = _one_thread_gemm()
    lib = onednn.library()
    m, k, n = 70, 96, 130
    a = RNG.randn(m, k).astype(np.float32)
    b = RNG.randn(k, n).astype(np.float32)
    want = a.astype(np.float64) @ b

    def in_wider(matrix, extra):  # a view of `matrix` whose rows lie `extra` apart
        wider = RNG.randn(matrix.shape[0], matrix.shape[1] + extra).astype(np.float32)
        wider[:, :matrix.shape[1]] = matrix
        return wider[:, :matrix.shape[1]]
    wide_a, tall_at = in_wider(a, 5), in_wider(a.T, 3).T
    wide_b, tall_bt = in_wider(b, 7), in_wider(b.T, 2).T
    frozen_a = a.copy()
    frozen_a.flags.writeable = False
    firsts = [a, np.asfortranarray(a), wide_a, tall_at, frozen_a]
    seconds = [b, wide_b, np.asfortranarray(b), tall_bt]  # transposed: 130 columns
    for x in firsts:
        for y in seconds:
            for _ in range(2):  # the geometry's plan is made, then reused
                got = gemm(x, y)
                assert got.dtype == np.float32 and got.flags.c_contiguous
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert len(gemm.plans) == len({(x.shape, x.strides, y.shape, y.strides)
                                   for x in firsts for y in seconds})
    # declined (NumPy's kernel runs): layouts sgemm cannot read in place, and those where
    # it is not faster than OpenBLAS (a vector, a few columns, a transposed y of fewer
    # than 128 columns)
    for x, y in [(a[:, ::2], b[::2]), (a[::-1], b), (a[:, :0], b[:0]), (a[:1], b),
                 (a, b[:, :7]), (a, np.asfortranarray(b[:, :127]))]:
        assert gemm(x, y) is None
    np.testing.assert_allclose(gemm(a, b[:, :127]), want[:, :127], rtol=1e-4, atol=1e-4)
    x = np.full((40, 30), np.nan, np.float32)
    x[1:] = 1.0
    got = gemm(x, np.ones((30, 20), np.float32))  # NaN propagates, C is not read
    assert np.isnan(got[0]).all() and (got[1:] == 30).all()
    # OpenMP's thread count is this thread's own setting, back after each call
    assert lib.openmp.omp_get_max_threads() == lib.threads
    assert lib.threads >= 1 and lib.takes_every_core() == (lib.threads >= onednn._cores())


def test_read_only_operands_keep_their_address_while_they_live():
    # a variable's value is read-only: its address is taken once, and forgotten with it
    gemm = _one_thread_gemm()
    a = RNG.randn(100, 64).astype(np.float32)
    w = RNG.randn(64, 256).astype(np.float32)
    w.flags.writeable = False
    for _ in range(2):
        np.testing.assert_allclose(gemm(a, w), a.astype(np.float64) @ w, rtol=1e-4,
                                   atol=1e-4)
    assert id(w) in onednn._READ_ONLY_ADDRESSES
    view = w[:, :128]  # a view: its address is taken each time, not kept
    np.testing.assert_allclose(gemm(a, view), a.astype(np.float64) @ view, rtol=1e-4,
                               atol=1e-4)
    assert id(view) not in onednn._READ_ONLY_ADDRESSES
    key = id(w)
    del w, view
    assert key not in onednn._READ_ONLY_ADDRESSES


def test_pointers_address_the_first_element_of_every_kind_of_operand():
    def address(arg):
        return arg.value if isinstance(arg, ctypes.c_void_p) else ctypes.addressof(arg._obj)
    owner = RNG.randn(8, 6).astype(np.float32)
    frozen = owner.copy()
    frozen.flags.writeable = False
    batch = frozen[2:5]  # a read-only view, as a dequeued batch is
    for a in (owner, owner[1:], owner.T, frozen, batch, frozen[:, 1:]):
        assert address(onednn._pointer(a)) == a.ctypes.data
    assert id(frozen) in onednn._READ_ONLY_ADDRESSES
    assert id(batch) not in onednn._READ_ONLY_ADDRESSES


def test_one_thread_products_keep_a_bounded_plan_cache(monkeypatch):
    monkeypatch.setattr(onednn, "_PLANS_MOST", 3)
    gemm = _one_thread_gemm()
    for size in range(20, 30):
        x = RNG.randn(size, 8).astype(np.float32)
        y = RNG.randn(8, size).astype(np.float32)
        np.testing.assert_allclose(gemm(x, y), x.astype(np.float64) @ y, rtol=1e-4,
                                   atol=1e-4)
        assert len(gemm.plans) <= 3


def test_one_thread_products_from_many_threads_stay_right():
    gemm = _one_thread_gemm()
    cases = []
    for k in (64, 80, 96, 112):
        a = RNG.randn(72, k).astype(np.float32)
        b = RNG.randn(k, 90).astype(np.float32)
        cases.append((a, b, a.astype(np.float64) @ b))
    errors = []

    def work(a, b, want):
        try:
            for _ in range(50):
                np.testing.assert_allclose(gemm(a, b), want, rtol=1e-4, atol=1e-3)
                np.testing.assert_allclose(gemm(np.asfortranarray(a), b), want, rtol=1e-4,
                                           atol=1e-3)
        except Exception as e:  # reported below
            errors.append(e)
    _all_at_once(work, cases, errors)


@pytest.mark.parametrize("isa,cores,outruns", [
    (0xe7, ["Haswell"], True),          # AVX-512 CPU, OpenBLAS held to AVX2 kernels
    (0x27, ["Zen"], True),
    (0xe7, ["SkylakeX"], False),        # OpenBLAS's own AVX-512 kernels
    (0xe7, ["Haswell", "SapphireRapids"], False),
    (0x7, ["Haswell"], False),          # an AVX2 CPU: the same kernels' width
    (0xe7, [], False),                  # OpenBLAS's core not known (another BLAS)
])
def test_the_one_thread_path_is_taken_where_onednn_outruns_openblas(isa, cores, outruns):
    assert onednn._outruns_openblas(isa, cores) is outruns


def test_mid_size_float32_matmul_ops_take_the_one_thread_path(sess, monkeypatch):
    gemm = _one_thread_gemm()
    taken = []

    def recorded(x, y):
        out = gemm(x, y)
        taken.append((x.flags.c_contiguous, out is not None))
        return out
    monkeypatch.setattr(onednn.library(), "one_thread_sgemm",
                        types.SimpleNamespace(product=recorded))
    a = RNG.randn(100, 64).astype(np.float32)
    b = RNG.randn(64, 256).astype(np.float32)
    want = a.astype(np.float64) @ b
    assert blas.SPLIT_MACS <= 100 * 64 * 256 < blas.LARGE_PRODUCT_MACS
    for got in sess.run([tf.matmul(a, b), tf.matmul(a.T.copy(), b, transpose_a=True),
                         tf.matmul(a, b.T.copy(), transpose_b=True),
                         tf.matmul(a.T.copy(), b.T.copy(), True, True)]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # every layout on sgemm (in the graph's order or not: sorted)
    assert sorted(taken) == [(False, True), (False, True), (True, True), (True, True)]
    # a transposed second operand of fewer than 128 columns: NumPy's
    got = sess.run(tf.matmul(a, b[:, :100].T.copy(), transpose_b=True))
    np.testing.assert_allclose(got, want[:, :100], rtol=1e-4, atol=1e-4)
    assert taken[4:] == [(True, False)]
    np.testing.assert_allclose(sess.run(tf.matmul(a[:64], b[:, :64])),
                               a[:64] @ b[:, :64], rtol=1e-5)  # 64^3: NumPy's
    np.testing.assert_allclose(sess.run(tf.matmul(a.astype(np.float64), b.astype(np.float64))),
                               want, rtol=1e-10)  # float64: NumPy's
    assert len(taken) == 5
    # where it does not outrun OpenBLAS
    monkeypatch.setattr(onednn.library(), "one_thread_sgemm", None)
    np.testing.assert_allclose(sess.run(tf.matmul(a, b)), want, rtol=1e-4, atol=1e-4)
    assert len(taken) == 5


def test_the_cache_evicts_and_rebuilds(monkeypatch):
    monkeypatch.setattr(onednn, "_CACHE_SIZE", 2)
    w = RNG.randn(3, 3, 2, 4).astype(np.float32)
    for _ in range(2):
        for size in (5, 6, 7, 8):
            x = RNG.randn(1, size, size, 2).astype(np.float32)
            wins = _windows(x.shape, w.shape, [1, 1], [1, 1], "SAME", None)
            np.testing.assert_allclose(onednn.conv(x, w, wins),
                                       ref_conv(x, w, [1, 1], [1, 1], [(1, 1), (1, 1)]),
                                       rtol=1e-4, atol=1e-4)
            assert all(len(lane.cache) <= 2 for lane in onednn._LANES)


def _all_at_once(work, argsets, errors: list) -> None:
    """Runs `work(*args)` for each of `argsets` on a thread of its own, all at once;
    `work` appends what fails to `errors`."""
    threads = [threading.Thread(target=work, args=args) for args in argsets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)


def test_calls_from_many_threads_take_turns_and_stay_right():
    problems, errors = [], []
    for size in (6, 9, 12, 15):
        x = RNG.randn(2, size, size, 3).astype(np.float32)
        w = RNG.randn(3, 3, 3, 5).astype(np.float32)
        wins = _windows(x.shape, w.shape, [1, 1], [1, 1], "SAME", None)
        problems.append((x, w, wins, ref_conv(x, w, [1, 1], [1, 1], [(1, 1), (1, 1)])))

    def work(x, w, wins, want):
        try:
            for _ in range(20):
                np.testing.assert_allclose(onednn.conv(x, w, wins), want, rtol=1e-4,
                                           atol=1e-4)
        except Exception as e:  # reported below
            errors.append(e)
    _all_at_once(work, problems, errors)


def test_sgemm_calls_from_many_threads_stay_right():
    # products on sgemm and on the primitive (a transposed second operand) at once from
    # four threads: each takes its turn
    cases = []
    for k in (64, 96, 128, 160):
        a = RNG.randn(48, k).astype(np.float32)
        b = RNG.randn(k, 72).astype(np.float32)
        cases.append((a, b, np.asfortranarray(b), a.astype(np.float64) @ b))
    errors = []

    def work(a, b, bt, want):
        try:
            for _ in range(30):
                np.testing.assert_allclose(onednn.matmul(a, b), want, rtol=1e-4, atol=1e-3)
                np.testing.assert_allclose(onednn.matmul(a, bt), want, rtol=1e-4, atol=1e-3)
        except Exception as e:  # reported below
            errors.append(e)
    _all_at_once(work, cases, errors)


def test_lanes_run_calls_at_once_each_on_its_own_primitives(monkeypatch):
    # with OMP_NUM_THREADS below the core count, calls need not take turns: a second
    # turn taken while the first is held gets a lane of its own
    lib = onednn.library()
    monkeypatch.setattr(lib, "lanes", 2)
    monkeypatch.setattr(onednn, "_LANES", [])
    monkeypatch.setattr(onednn, "_FREE_LANES", [])
    x = RNG.randn(2, 9, 9, 3).astype(np.float32)
    w = RNG.randn(3, 3, 3, 5).astype(np.float32)
    wins = _windows(x.shape, w.shape, [1, 1], [1, 1], "SAME", None)
    want = ref_conv(x, w, [1, 1], [1, 1], [(1, 1), (1, 1)])
    try:
        with onednn._turn(lib) as first:
            got = onednn.conv(x, w, wins)  # runs on the second lane
            with onednn._turn(lib) as second:
                assert second is not first and len(onednn._LANES) == 2
                third = []
                waiter = threading.Thread(target=lambda: third.append(onednn.conv(x, w, wins)))
                waiter.start()
                waiter.join(0.2)
                assert waiter.is_alive()  # both lanes held: it waits its turn
            waiter.join(30)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(third[0], want, rtol=1e-4, atol=1e-4)
        assert len(onednn._LANES) == 2 and second.cache and not first.cache
    finally:
        for lane in onednn._LANES:
            for entry in lane.cache.values():
                if entry is not None:
                    entry.destroy(lib)


def test_the_filter_gradient_is_the_same_bits_every_run():
    x = RNG.randn(16, 14, 14, 32).astype(np.float32)
    dy = RNG.randn(16, 14, 14, 64).astype(np.float32)
    wins = _windows(x.shape, [5, 5, 32, 64], [1, 1], [1, 1], "SAME", None)
    first = onednn.conv_backprop_filter(x, [5, 5, 32, 64], dy, wins)
    for _ in range(3):
        np.testing.assert_array_equal(onednn.conv_backprop_filter(x, [5, 5, 32, 64], dy,
                                                                  wins), first)


def test_loading_leaves_blas_on_one_thread():
    # this process loaded the library (the skip condition): OpenBLAS's pool is idle
    assert blas._ONE_POOL


def test_tw_onednn_0_turns_the_path_off():
    code = ("import numpy as np, tensorweave as tf\n"
            "from tensorweave.ops import onednn\n"
            "from tensorweave.ops.math import blas\n"
            "x = np.ones((1, 4, 4, 1), np.float32)\n"
            "w = np.ones((3, 3, 1, 1), np.float32)\n"
            "with tf.Session() as s:\n"
            "    y = s.run(tf.nn.conv2d(x, w, 1, 'SAME'))\n"
            "print(onednn.available(), blas._ONE_POOL, int(y.sum()))\n")
    # 4 corners x 4 + 8 edges x 6 + 4 inner x 9
    assert _python(code, TW_ONEDNN="0") == ["False", "False", "100"]


def test_its_kernels_run_inline_when_its_threads_take_every_core():
    # policy.kernel_weight: a float32 kernel here is `threaded` (not overlapped on the
    # inter-op pool) only while OpenMP runs a thread per core, its default
    # and calls take turns on one lane while its threads take every core, else on as
    # many lanes as the cores hold
    code = ("import tensorweave as tf\n"
            "from tensorweave.ops import onednn\n"
            "print(onednn.runs_float32({'T': tf.float32}), "
            "onednn.runs_float32({'T': tf.float64}), onednn.library().lanes)\n")
    cores = len(os.sched_getaffinity(0))
    for threads, want in ((cores, ["True", "False", "1"]),
                          (1, ["True" if cores == 1 else "False", "False", str(cores)])):
        assert _python(code, OMP_NUM_THREADS=str(threads)) == want, threads


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_convolves_on_numpy_instead_of_hanging():
    # libgomp hangs at a forked child's first parallel region once the parent has run
    # one: the child of a process that loaded oneDNN runs NumPy's kernels
    code = (
        "import os, sys, time\n"
        "import numpy as np\n"
        "import tensorweave as tf\n"
        "from tensorweave.ops import onednn\n"
        "x = np.random.RandomState(0).rand(4, 12, 12, 8).astype(np.float32)\n"
        "w = np.random.RandomState(1).rand(3, 3, 8, 16).astype(np.float32)\n"
        "with tf.Session() as s:\n"
        "    y = s.run(tf.nn.conv2d(x, w, 1, 'SAME'))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    with tf.Session() as s:\n"
        "        y2 = s.run(tf.nn.conv2d(x, w, 1, 'SAME'))\n"
        "    os._exit(0 if not onednn.available() and np.allclose(y, y2, rtol=1e-5)\n"
        "             else 3)\n"
        "deadline = time.time() + 60\n"
        "while time.time() < deadline:\n"
        "    done, status = os.waitpid(pid, os.WNOHANG)\n"
        "    if done:\n"
        "        print('exit', os.waitstatus_to_exitcode(status))\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "else:\n"
        "    os.kill(pid, 9)\n"
        "    os.waitpid(pid, 0)\n"
        "    print('hung')\n")
    assert _python(code) == ["exit", "0"]


# --- pooling: against the NumPy kernels (pooling_ops), TF's rules for ties and NaN -------
def _pool_windows(shape, k, s, padding):
    return tuple(make_window(n, k, s, 1, padding) for n in shape[1:3])


POOLS = [((4, 28, 28, 32), 2, 2, "SAME"), ((2, 7, 9, 3), 3, 2, "SAME"),
         ((2, 7, 9, 3), 3, 1, "VALID"), ((1, 5, 5, 2), 2, 2, "SAME"),
         ((2, 6, 6, 1), 3, 2, "VALID")]


@pytest.mark.parametrize("shape,k,s,padding", POOLS)
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_and_its_gradient_pick_the_first_maximum(shape, k, s, padding, ties):
    from tensorweave.ops.nn import pooling_ops
    x = RNG.rand(*shape).astype(np.float32)
    if ties:  # few distinct values: most windows hold their maximum several times
        x = np.round(x * 2).astype(np.float32)
    wins = _pool_windows(shape, k, s, padding)
    want, _ = pooling_ops._max_pool_nhwc(x, *wins)
    np.testing.assert_array_equal(onednn.pool(x, wins, "max"), want)
    dy = RNG.rand(*want.shape).astype(np.float32)
    np.testing.assert_allclose(onednn.max_pool_grad(x, dy, wins),
                               pooling_ops._max_pool_grad_nhwc(x, dy, *wins), rtol=1e-6)


def test_max_pool_follows_tf_nan_and_inf_rule():
    from tensorweave.ops.nn import pooling_ops
    for trial in range(40):
        shape = (2, 6, 6, [1, 3, 16, 32][trial % 4])
        x = RNG.randn(*shape).astype(np.float32)
        x[RNG.rand(*shape) < 0.3] = np.nan
        x[RNG.rand(*shape) < 0.1] = -np.inf
        wins = _pool_windows(shape, 2 + trial % 2, 1 + trial % 3 // 2,
                             ["SAME", "VALID"][trial % 5 // 3])
        want, _ = pooling_ops._max_pool_nhwc(x, *wins)
        np.testing.assert_array_equal(onednn.pool(x, wins, "max"), want)
        dy = RNG.rand(*want.shape).astype(np.float32)
        assert onednn.max_pool_grad(x, dy, wins) is None  # NaN: TF's rule is NumPy's
    big = RNG.rand(4, 28, 28, 32).astype(np.float32)
    wins = _pool_windows(big.shape, 2, 2, "SAME")
    dy = RNG.rand(4, 14, 14, 32).astype(np.float32)
    assert onednn.max_pool_grad(big, dy, wins) is not None
    big[3, 27, 27, 31] = np.nan  # a single NaN, the last element
    assert onednn.max_pool_grad(big, dy, wins) is None


@pytest.mark.parametrize("shape,k,s,padding", POOLS)
def test_avg_pool_and_its_gradient_count_real_cells_only(shape, k, s, padding):
    x = RNG.randn(*shape).astype(np.float32)
    wins = _pool_windows(shape, k, s, padding)
    pads = [(w.pad_before, w.pad_after) for w in wins]
    ones = np.ones((k, k, 1, 1))
    counts = ref_conv(np.ones(shape[:3] + (1,)), ones, [s, s], [1, 1], pads)
    want = np.stack([ref_conv(x[..., c:c + 1], ones, [s, s], [1, 1], pads)[..., 0]
                     for c in range(shape[3])], axis=-1) / counts
    y = onednn.pool(x, wins, "avg")
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    dy = RNG.randn(*y.shape).astype(np.float32)
    dx = onednn.avg_pool_grad(shape, dy, wins)
    # the adjoint of the average: <avg(x), dy> = <x, dx>
    assert np.isclose(np.vdot(y.astype(np.float64), dy), np.vdot(x.astype(np.float64), dx),
                      rtol=1e-4)
    share = dy / counts
    want_dx = sum(ref_backprop_input(shape[:3] + (1,), ones, share[..., c:c + 1], [s, s],
                                     [1, 1], pads)[..., 0:1] * np.eye(shape[3])[c]
                  for c in range(shape[3]))
    np.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape,k,multiplier,strides,dilations,padding", [
    ([2, 9, 8, 3], 3, 2, [1, 1], [1, 1], "SAME"),
    ([1, 10, 7, 4], 5, 1, [2, 2], [1, 1], "SAME"),
    ([2, 11, 11, 2], 3, 3, [1, 1], [2, 2], "VALID"),
])
def test_depthwise_convolution_is_one_convolution_per_channel(x_shape, k, multiplier,
                                                              strides, dilations, padding):
    c = x_shape[-1]
    x = RNG.randn(*x_shape).astype(np.float32)
    w = RNG.randn(k, k, c, multiplier).astype(np.float32)
    wins = _windows(x_shape, [k, k, 1, 1], strides, dilations, padding, None)
    pads = [(win.pad_before, win.pad_after) for win in wins]
    y = onednn.conv(x, w, wins, depthwise=True)
    # output channel ch * multiplier + q is channel ch convolved with w[..., ch, q]
    want = np.concatenate([ref_conv(x[..., ch:ch + 1], w[:, :, ch:ch + 1, :], strides,
                                    dilations, pads) for ch in range(c)], axis=-1)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    dy = RNG.randn(*y.shape).astype(np.float32)
    dx = onednn.conv_backprop_input(x_shape, w, dy, wins, depthwise=True)
    dw = onednn.conv_backprop_filter(x, w.shape, dy, wins, depthwise=True)
    for ch in range(c):
        part = dy[..., ch * multiplier:(ch + 1) * multiplier]
        np.testing.assert_allclose(
            dx[..., ch:ch + 1], ref_backprop_input(x_shape[:-1] + [1], w[:, :, ch:ch + 1],
                                                   part, strides, dilations, pads),
            rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            dw[:, :, ch:ch + 1], ref_backprop_filter(x[..., ch:ch + 1], [k, k, 1, multiplier],
                                                     part, strides, dilations, pads),
            rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("x_shape,y_shape", [([4, 30, 40], [4, 40, 20]), ([3, 1, 30, 40],
                                                                          [5, 40, 20]),
                                             ([30, 40], [6, 40, 20]), ([2, 30, 40], [40, 20])])
def test_batched_matmul_broadcasts_as_numpy(x_shape, y_shape):
    x = RNG.randn(*x_shape).astype(np.float32)
    y = RNG.randn(*y_shape).astype(np.float32)
    want = np.matmul(x.astype(np.float64), y)
    np.testing.assert_allclose(onednn.matmul(x, y), want, rtol=1e-4, atol=1e-4)
    # adjoint views, as BatchMatMulV2's adj_x / adj_y pass them
    xt = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    np.testing.assert_allclose(onednn.matmul(np.swapaxes(xt, -1, -2), y), want, rtol=1e-4,
                               atol=1e-4)


def test_batch_matmul_op_uses_onednn_for_large_products(sess, monkeypatch):
    calls = []
    real = onednn.matmul
    monkeypatch.setattr(onednn, "matmul", lambda x, y: calls.append(x.shape) or real(x, y))
    a = RNG.randn(8, 64, 96).astype(np.float32)
    b = RNG.randn(8, 64, 80).astype(np.float32)
    got = sess.run(tf.matmul(a, b, adjoint_a=True))
    np.testing.assert_allclose(got, np.matmul(np.swapaxes(a, 1, 2).astype(np.float64), b),
                               rtol=1e-4, atol=1e-3)
    empty = sess.run(tf.matmul(np.zeros((2, 3, 0), np.float32), np.zeros((2, 0, 4),
                                                                         np.float32)))
    np.testing.assert_array_equal(empty, np.zeros((2, 3, 4)))
    assert calls == [(8, 96, 64)]


# --- ReLU on large arrays ----------------------------------------------------------------
def test_relu_and_its_gradient_on_large_arrays():
    n = onednn.ELTWISE_MIN_SIZE + 17
    x = RNG.randn(n).astype(np.float32)
    g = RNG.randn(n).astype(np.float32)
    x[:6] = [-np.inf, np.inf, -0.0, 0.0, -1.0, 1.0]
    g[:6] = [np.inf, np.nan, np.nan, np.inf, np.nan, np.inf]
    y = onednn.relu(x)
    np.testing.assert_array_equal(y, np.maximum(x, np.float32(0)))
    assert not np.signbit(y).any()  # +0 for negative inputs, as max(x, 0)
    with np.errstate(invalid="ignore"):
        want = g * (x > 0)  # TF's ReluGrad: an inf or NaN gradient at x <= 0 gives NaN
    np.testing.assert_array_equal(onednn.relu_grad(g, x), want)
    assert onednn.relu(x[:1000]) is None  # small: NumPy's one pass is as fast
    x[7] = np.nan  # oneDNN's ReLU does not follow TF's NaN rule: NumPy's does
    assert onednn.relu(x) is None


def test_relu_gradient_takes_nan_features_bit_for_bit():
    """The gradient is the clip to [0, inf]'s: TF's grad * (x > 0) at NaN and every
    other special value, so NaN features stay on oneDNN (its ReLU gradient would pass
    the gradient of a NaN)."""
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45,
                        3e38], np.float32)
    n = onednn.ELTWISE_MIN_SIZE + 17
    x, g = RNG.randn(2, n).astype(np.float32)
    pairs = np.meshgrid(special, special)
    x[:100], g[:100] = pairs[0].ravel(), pairs[1].ravel()
    x[-100:], g[-100:] = pairs[0].ravel(), pairs[1].ravel()  # the tail too
    got = onednn.relu_grad(g, x)
    if not onednn.available():
        assert got is None
        return
    with np.errstate(invalid="ignore"):
        want = g * (x > 0).astype(np.float32)
    assert onednn._RELU_AGREES and got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_relu_ops_keep_tf_nan_rule_on_large_inputs(sess):
    x = RNG.randn(1 << 19).astype(np.float32)
    g = RNG.randn(1 << 19).astype(np.float32)
    x[5] = np.nan
    xt = tf.constant(x)
    y = tf.nn.relu(xt)
    dx = tf.gradients(y, xt, grad_ys=tf.constant(g))[0]
    got_y, got_dx = sess.run([y, dx])
    assert np.isnan(got_y[5]) and got_dx[5] == 0  # TF: Relu(NaN) = NaN, no gradient
    np.testing.assert_array_equal(np.delete(got_y, 5), np.maximum(np.delete(x, 5), 0))


# --- GradientDescent's update of a large variable ------------------------------------------
def test_subtract_scaled_has_numpys_bits_and_falls_back():
    n = onednn.ELTWISE_MIN_SIZE + 5
    x = RNG.randn(n).astype(np.float32)
    y = (RNG.randn(n) * 1e3).astype(np.float32)
    x[:4] = [np.inf, np.nan, 1.0, -0.0]
    y[:4] = [1.0, 1.0, np.inf, 0.0]
    alpha = np.array(0.37, np.float32)
    before = x.copy()
    got = onednn.subtract_scaled(x, y, alpha)
    with np.errstate(invalid="ignore"):
        want = x - y * alpha  # the product rounded, then the difference
    np.testing.assert_array_equal(got, want)
    assert got is not x and np.array_equal(x, before, equal_nan=True)  # a new array
    assert onednn.subtract_scaled(x[:1000], y[:1000], alpha) is None  # small
    assert onednn.subtract_scaled(x.astype(np.float64), y.astype(np.float64),
                                  alpha.astype(np.float64)) is None
    wide = np.stack([x, x], axis=1)
    assert onednn.subtract_scaled(wide[:, 0], y, alpha) is None      # not contiguous
    assert onednn.subtract_scaled(x, y[:-1], alpha[()] * np.ones(1, np.float32)) is None


def test_gradient_descent_on_a_large_variable_publishes_a_new_value(sess, monkeypatch):
    from tensorweave.train import training_ops
    made = []

    def counted(x, y, alpha):
        made.append(onednn.subtract_scaled(x, y, alpha))
        return made[-1]
    monkeypatch.setattr(training_ops, "_subtract_scaled", counted)
    shape = (700, 400)  # 280,000 values: above ELTWISE_MIN_SIZE
    w0 = RNG.randn(*shape).astype(np.float32)
    g0 = RNG.randn(*shape).astype(np.float32)
    w = tf.Variable(w0)
    lr = tf.placeholder(tf.float32, [])
    update = tf.train.GradientDescentOptimizer(lr).apply_gradients(
        [(tf.constant(g0), w)])
    sess.run(w.initializer)
    held = sess.run(w.value())  # a value read before the update keeps its contents
    sess.run(update, {lr: 0.25})
    sess.run(update, {lr: 0.5})  # the scale is given at each call
    want = (w0 - g0 * np.float32(0.25)) - g0 * np.float32(0.5)
    got = sess.run(w)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(held, w0)
    assert len(made) == 2 and all(m is not None for m in made)


# --- Adam's update of a large variable ---------------------------------------------------------
def test_adam_gives_numpys_bits_into_new_arrays():
    n = onednn.ADAM_MIN_SIZE + 29
    rs = np.random.RandomState(4)
    w, m, g = rs.randn(3, n).astype(np.float32)
    v = np.abs(rs.randn(n)).astype(np.float32)
    w[:4], g[:4], m[:4] = [0.0, -0.0, 1e-45, 3e38], [-0.0, 0.0, np.inf, 1.0], [0.0] * 4
    before = [a.copy() for a in (w, m, v, g)]
    alpha, c1, c2, eps = (np.float32(x) for x in (3e-4, 0.1, 0.001, 1e-7))
    got = onednn.adam(w, m, v, g, alpha, c1, c2, eps)
    with np.errstate(all="ignore"):
        m2 = m + (g - m) * c1
        v2 = v + (g * g - v) * c2
        w2 = w - (m2 * alpha) / (np.sqrt(v2) + eps)
    for a, b in zip(got, (w2, m2, v2)):
        assert a is not w and a.view(np.uint32).tolist() == b.view(np.uint32).tolist()
    for a, b in zip((w, m, v, g), before):  # the inputs are left as they were
        assert a.view(np.uint32).tolist() == b.view(np.uint32).tolist()
    k = onednn.ADAM_MIN_SIZE - 1
    assert onednn.adam(w[:k], m[:k], v[:k], g[:k], alpha, c1, c2, eps) is None
    assert onednn.adam(w, m, v, g.astype(np.float64), alpha, c1, c2, eps) is None


# --- 3-D pooling (ops/nn/pooling_nd_ops.py) ---------------------------------------------------
def test_float32_pool3d_runs_on_onednn(sess, monkeypatch):
    calls = []
    real = onednn.pool
    monkeypatch.setattr(onednn, "pool", lambda *a: calls.append(a[-1]) or real(*a))
    x = RNG.randn(1, 4, 4, 4, 3).astype(np.float32)
    sess.run([tf.nn.max_pool3d(x, 2, 2, "SAME"), tf.nn.avg_pool3d(x, 2, 2, "SAME")])
    assert sorted(calls) == ["avg", "max"]
