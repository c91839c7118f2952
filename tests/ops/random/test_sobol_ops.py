"""tf.math.sobol_sample: bit for bit against TensorFlow 2.21 (fixture written by
tests/fixtures/tf1/make_sobol_fixture.py), static shapes, errors, no gradient."""
import builtins
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random import sobol_ops

pytest.importorskip("scipy.stats")

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1",
                       "sobol_expected.npz")
WIDE_COLUMNS = 40  # as the fixture script: only these last columns kept above dim 100


def _expected(fixture, i, dim, num_results, skip):
    """TF's float64 and float32 results of case i (see the fixture script)."""
    bits = int(skip + num_results).bit_length()
    f64 = fixture["c%d_num" % i].astype(np.float64) * 2.0 ** -bits
    f32 = fixture["c%d_f32" % i] if "c%d_f32" % i in fixture.files else f64.astype(np.float32)
    return f64, f32


def test_matches_tensorflow_bit_for_bit(sess):
    fixture = np.load(FIXTURE)
    cases = fixture["cases"]
    assert len(cases) > 20 and cases[:, 0].max() == 21200
    fetches = [(tf.math.sobol_sample(int(d), int(n), skip=int(k), dtype=tf.float64),
                tf.math.sobol_sample(int(d), int(n), skip=int(k)))
               for d, n, k in cases]
    results = sess.run(fetches)
    for i, ((d, n, k), (got64, got32)) in enumerate(zip(cases, results)):
        want64, want32 = _expected(fixture, i, d, n, k)
        if d > 100:
            got64, got32 = got64[:, -WIDE_COLUMNS:], got32[:, -WIDE_COLUMNS:]
        assert got64.dtype == np.float64 and got32.dtype == np.float32
        np.testing.assert_array_equal(got64, want64, err_msg="case %s" % ((d, n, k),))
        np.testing.assert_array_equal(got32, want32, err_msg="case %s" % ((d, n, k),))


def test_first_points_by_hand(sess):
    # van der Corput in dimension 1 (point 0, all zeros, is left out, as TF);
    # dimension 2 has direction numbers 1, 3 (x_2 = 1/2, 1/4, 3/4, 3/8, 7/8, ...)
    got = sess.run(tf.math.sobol_sample(2, 6))
    np.testing.assert_array_equal(got[:, 0], [0.5, 0.75, 0.25, 0.375, 0.875, 0.625])
    np.testing.assert_array_equal(got[:, 1], [0.5, 0.25, 0.75, 0.375, 0.875, 0.125])
    skipped = sess.run(tf.math.sobol_sample(2, 4, skip=2))
    np.testing.assert_array_equal(skipped, got[2:6])


def test_inputs_as_tensors_and_static_shapes(sess):
    dim = tf.placeholder(tf.int32, [])
    n = tf.placeholder(tf.int32, [])
    s = tf.math.sobol_sample(dim, 3, skip=n)
    assert s.shape.as_list() == [3, None]
    assert tf.math.sobol_sample(3, n).shape.as_list() == [None, 3]
    assert tf.math.sobol_sample(4, 5).shape.as_list() == [5, 4]
    np.testing.assert_array_equal(sess.run(s, {dim: 3, n: 1}),
                                  sess.run(tf.math.sobol_sample(3, 4))[1:])


def test_names(graph):
    x = tf.math.sobol_sample(2, 2, name="foo")
    assert x.op.name == "foo/SobolSample" and x.op.inputs[0].op.name == "foo/SobolSample/dim"
    assert tf.math.sobol_sample(2, 2).op.name == "sobol/SobolSample"
    assert tf.math.sobol_sample(2, 2).op.name == "sobol_1/SobolSample"


@pytest.mark.parametrize("args,message", [
    ((0, 0, -1), "dim must be at least one"),
    ((21201, 1, 0), "dim must be at most 21200"),
    ((5, 0, -1), "num_results must be at least one"),
    ((5, 3, -1), "skip must be non-negative"),
    ((3, 2 ** 31 - 2, 1), "num_results+skip must be less than 2147483647"),
])
def test_run_time_errors(sess, args, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("+", r"\+")):
        sess.run(tf.math.sobol_sample(*args))


def test_build_time_errors(graph):
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.math.sobol_sample([2, 3], 4)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 2"):
        tf.math.sobol_sample(2, [[4]])
    with pytest.raises(TypeError, match="float16 not in list of allowed values"):
        tf.math.sobol_sample(2, 2, dtype=tf.float16)
    with pytest.raises(TypeError):
        tf.math.sobol_sample(2.0, 2)


def test_not_differentiable(graph):
    x = tf.math.sobol_sample(3, 4)
    assert tf.gradients(x, x.op.inputs[0]) == [None]


def test_without_scipy_names_the_extra(sess, monkeypatch):
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError("no scipy")
        return real_import(name, *args, **kwargs)
    x = tf.math.sobol_sample(2, 3)
    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(tf.errors.UnimplementedError, match=r"tensorweave\[special\]"):
        sess.run(x)


def test_last_points_are_not_negated(sess):
    # TF negates every coordinate once skip + num_results + 1 >= 2**30 (a 32-bit shift
    # overflow in its kernel); these are the points, as the sequence defines them
    from scipy.stats import qmc
    skip = 2 ** 30 - 3
    got = sess.run(tf.math.sobol_sample(3, 4, skip=skip, dtype=tf.float64))
    engine = qmc.Sobol(3, scramble=False, bits=31)
    engine.fast_forward(skip + 1)
    np.testing.assert_array_equal(got, engine.random(4))
    assert got.min() >= 0.0 and got.max() < 1.0


def test_sobol_points_helper_is_scipy_shifted_by_one():
    from scipy.stats import qmc
    ref = qmc.Sobol(5, scramble=False).random_base2(4)[:11]
    np.testing.assert_array_equal(sobol_ops.sobol_points(5, 10, 0), ref[1:])


def test_points_without_scipys_direction_numbers_walk_the_sequence(monkeypatch):
    # the direct Gray-code path reads SciPy's private direction numbers; without them
    # (another SciPy) the points come from SciPy's own walk, and are the same
    from scipy.stats import qmc
    direct = sobol_ops.sobol_points(7, 9, 1000)

    class Hidden(qmc.Sobol):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.__dict__["_sv_backup"] = self._sv
            self._sv = None

        def fast_forward(self, n):
            self._sv = self.__dict__["_sv_backup"]
            return super().fast_forward(n)
    monkeypatch.setattr(sobol_ops, "_scipy_sobol", lambda: Hidden)
    np.testing.assert_array_equal(sobol_ops.sobol_points(7, 9, 1000), direct)
