"""ops/group_fold.py: rows folded into their index's row one after another, bit for bit
what ufunc.at gives (TF's CPU loop order), and the kernels built on it."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import group_fold


def _cases(seed, count):
    rs = np.random.RandomState(seed)
    for _ in range(count):
        num = rs.randint(1, 200)
        width = rs.choice([1, 2, 3, 64])
        n = rs.randint(1, 3000)
        inner = () if width == 1 and rs.rand() < 0.5 else (width,)
        dtype = rs.choice([np.float32, np.float64, np.float16, np.int32])
        if rs.rand() < 0.6:   # Zipf: a few ids repeated hundreds of times
            ids = np.minimum(rs.zipf(rs.choice([1.1, 1.3, 2.0]), n), num) - 1
        else:
            ids = rs.randint(0, num, n)
        rows = (rs.randn(*((n,) + inner)) * 100).astype(dtype)
        if rows.dtype.kind == "f" and rows.size > 3:
            rows.ravel()[:3] = [-0.0, np.inf, np.nan]
        yield num, ids.astype(rs.choice([np.int32, np.int64])), rows


@pytest.mark.parametrize("ufunc", [np.add, np.subtract])
def test_fold_in_groups_is_ufunc_at(ufunc):
    for num, ids, rows in _cases(0, 150):
        start = (np.random.RandomState(1).randn(*((num,) + rows.shape[1:])) * 10).astype(
            rows.dtype)
        want = start.copy()
        with np.errstate(all="ignore"):
            ufunc.at(want, ids, rows)
            index, out = group_fold.fold_in_groups(ufunc, start.__getitem__, ids, rows)
        got = start.copy()
        got[index] = out
        assert got.tobytes() == want.tobytes()
        assert np.array_equal(index, np.unique(ids))


def test_a_fold_from_zero_is_add_at_into_zeros():
    # start_of None: the first rows plus zero in place of a zeroed array (-0.0 rows
    # become +0.0 as 0 + -0.0 does)
    for num, ids, rows in _cases(4, 150):
        want = np.zeros((num,) + rows.shape[1:], rows.dtype)
        with np.errstate(all="ignore"):
            np.add.at(want, ids, rows)
            index, out = group_fold.fold_in_groups(np.add, None, ids, rows)
        assert out.dtype == rows.dtype
        assert want[index].tobytes() == out.tobytes()


def test_sums_in_order_through_scipy_are_add_at_into_zeros():
    # SciPy's CSR product with weights of one: the fold's bits, empty ids zero
    pytest.importorskip("scipy.sparse")
    taken = 0
    for num, ids, rows in _cases(6, 150):
        want = np.zeros((num,) + rows.shape[1:], rows.dtype)
        with np.errstate(all="ignore"):
            np.add.at(want, ids, rows)
            got = group_fold.sums_in_order(ids, rows, num)
        if rows.dtype not in (np.float32, np.float64):
            assert got is None   # SciPy's products take float32/64 and complex
            continue
        taken += 1
        assert got.dtype == rows.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    assert taken > 50


@pytest.fixture(params=["scipy", "fold"])
def sum_path(request, monkeypatch):
    """Segment sums through SciPy (where installed) and through the fold alone."""
    if request.param == "scipy":
        pytest.importorskip("scipy.sparse")
    else:
        monkeypatch.setattr(group_fold, "_SCIPY_SPARSE", False)
    return request.param


def test_segment_sums_of_deduplicated_ids_are_add_at(sess, sum_path):
    # TF1's deduplication of an embedding gradient (unique, then unsorted_segment_sum
    # into as many segments as ids): every segment has rows, its sums are the output
    rs = np.random.RandomState(5)
    ids = rs.randint(0, 3000, 6400)
    _, inverse = np.unique(ids, return_inverse=True)
    data = (rs.randn(6400, 32) * 100).astype(np.float32)
    data[:4, 0] = [-0.0, np.inf, np.nan, -0.0]
    want = np.zeros((inverse.max() + 1, 32), np.float32)
    with np.errstate(all="ignore"):
        np.add.at(want, inverse, data)
    got = sess.run(tf.math.unsorted_segment_sum(data, inverse.astype(np.int32),
                                                int(inverse.max()) + 1))
    assert got.tobytes() == want.tobytes()


def test_stable_order_is_a_stable_argsort():
    rs = np.random.RandomState(2)
    for ids in (rs.randint(0, 5, 1000), rs.randint(-2 ** 40, 2 ** 40, 300),
                np.array([], np.int64), np.array([2 ** 63 - 1, -2 ** 63, 0, 0]),
                rs.randint(0, 2 ** 64 - 1, 50, dtype=np.uint64), rs.rand(100)):
        assert np.array_equal(group_fold.stable_order(ids), np.argsort(ids, kind="stable"))


def test_large_segment_sums_and_scatters_are_sequential(sess, sum_path):
    """UnsortedSegmentSum of many float rows and ResourceScatterAdd/Sub with many
    repeated ids, through sessions: each segment's rows added in their order, as TF's
    loop does (np.add.at's bits; no float64 accumulation)."""
    rs = np.random.RandomState(3)
    data = (rs.randn(3000, 16) * 1e4).astype(np.float32)
    ids = (np.minimum(rs.zipf(1.2, 3000), 500) - 1).astype(np.int32)
    want = np.zeros((500, 16), np.float32)
    np.add.at(want, ids, data)
    got = sess.run(tf.math.unsorted_segment_sum(data, ids, 500))
    assert got.tobytes() == want.tobytes()
    start = rs.randn(500, 16).astype(np.float32)
    v = tf.get_variable("v", initializer=start, use_resource=True)
    sess.run(v.initializer)
    sess.run(tf.scatter_add(v, ids, data))
    after_add = start.copy()
    np.add.at(after_add, ids, data)
    assert sess.run(v).tobytes() == after_add.tobytes()
    sess.run(tf.scatter_sub(v, ids[::-1].copy(), data))
    np.subtract.at(after_add, ids[::-1], data)
    assert sess.run(v).tobytes() == after_add.tobytes()
