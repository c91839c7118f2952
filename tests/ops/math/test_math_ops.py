"""cast, add_n, clip_by_value, range, linspace, scalar_mul and the Tensor operators."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


# --- cast -----------------------------------------------------------------------------
@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float64, np.int64),
                                     (np.int32, np.float32), (np.int64, np.float16),
                                     (np.float32, np.float64), (np.float64, np.float16),
                                     (np.bool_, np.float32), (np.int32, np.int8),
                                     (np.float32, ml_dtypes.bfloat16),
                                     (np.int32, np.complex64), (np.uint8, np.int32)])
def test_cast_matches_numpy(sess, src, dst):
    x = np.array([[1.7, -2.5, 0.0], [3.2, -0.4, 100.9]])
    x = (x > 0) if src is np.bool_ else x.astype(src)
    y = tf.cast(tf.constant(x), dst)
    assert y.dtype == tf.as_dtype(dst) and y.op.type == "Cast" and y.shape.as_list() == [2, 3]
    out = sess.run(y)
    assert out.dtype == np.dtype(dst)
    np.testing.assert_array_equal(out, x.astype(dst))


@pytest.mark.parametrize("dst", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_cast_of_integer_scalars_in_a_loop(sess, dst):
    """Loop counters are NumPy scalars in the compiled loop: their cast to a float (its
    own fast path) equals NumPy's astype, overflow to inf included."""
    big = 2 ** 40 + 1
    _, acc = tf.while_loop(
        lambda i, a: i < 3,
        lambda i, a: (i + 1, tf.concat([a, [tf.cast(i * 70000, dst),
                                            tf.cast(tf.constant(big, tf.int64), dst),
                                            tf.cast(i > 0, dst)]], 0)),
        [tf.constant(0), tf.zeros([0], dst)], shape_invariants=[tf.TensorShape([]),
                                                                 tf.TensorShape([None])])
    out = sess.run(acc)
    want = np.concatenate([np.array([np.int32(i * 70000), np.int64(big), i > 0]).astype(
        np.float64) for i in range(3)])
    assert out.dtype == np.dtype(dst)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, want.astype(dst))


def test_cast_semantics(sess):
    # float -> int truncates toward zero; NaN/inf/out of range give INT_MIN like TF (x86)
    f = tf.constant([np.nan, np.inf, -np.inf, 3e10, -1.7, 1.7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sess.run(tf.cast(f, tf.int32))
    assert out.tolist() == [-2**31] * 4 + [-1, 1]
    assert sess.run(tf.cast(tf.constant([0.0, 0.5, -1.0, np.nan]), tf.bool)).tolist() == \
        [False, True, True, True]
    assert sess.run(tf.cast(tf.constant([1.7 + 2j]), tf.int32)).tolist() == [1]
    np.testing.assert_array_equal(sess.run(tf.cast(tf.constant([1.5 - 2j], tf.complex64),
                                                   tf.float64)), [1.5])
    # complex -> bool reads the real part only (TF 2.21's values)
    for dtype in (tf.complex64, tf.complex128):
        assert sess.run(tf.cast(tf.constant([0j, 1j, 1 + 0j, 0.5 - 2j], dtype),
                                tf.bool)).tolist() == [False, False, True, True]
    assert sess.run(tf.cast(tf.constant([300, -200]), tf.int8)).tolist() == [44, 56]


def test_cast_same_dtype_returns_input_and_python_values_convert(sess):
    x = tf.constant([1.0])
    assert tf.cast(x, tf.float32) is x
    assert sess.run(tf.cast(1.7, tf.int32)) == 1
    y = tf.cast([1, 2], tf.float32, name="c")
    assert y.op.name == "c" and sess.run(y).tolist() == [1.0, 2.0]


def test_cast_of_strings_is_unimplemented(sess):
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to int32"):
        sess.run(tf.cast(tf.constant(["1"]), tf.int32))
    # TF's type names: float, double, half
    for dtype, text in ((tf.float32, "float"), (tf.float64, "double"), (tf.float16, "half")):
        x = tf.placeholder(dtype, [1])
        with pytest.raises(tf.errors.UnimplementedError,
                           match="^Cast %s to string is not supported" % text):
            sess.run(tf.cast(x, tf.string), {x: [1]})
        y = tf.placeholder(tf.string, [1])
        with pytest.raises(tf.errors.UnimplementedError,
                           match="^Cast string to %s is not supported" % text):
            sess.run(tf.cast(y, dtype), {y: ["1"]})


def test_cast_static_value_and_indexed_slices(graph):
    c = tf.cast(tf.constant([1.9, 2.1]), tf.int32)
    assert tf.get_static_value(c).tolist() == [1, 2]
    assert tf.get_static_value(tf.cast(tf.placeholder(tf.float32), tf.int32)) is None
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]), tf.constant([3, 2]))
    cs = tf.cast(s, tf.float64)
    assert isinstance(cs, tf.IndexedSlices) and cs.values.dtype == tf.float64


def test_cast_aliases(sess):
    i = tf.constant([1, 2])
    for fn, dt, name in ((tf.to_float, tf.float32, "ToFloat"),
                         (tf.to_double, tf.float64, "ToDouble"),
                         (tf.to_bfloat16, tf.bfloat16, "ToBFloat16")):
        y = fn(i)
        assert y.dtype == dt and y.op.name == name
    f = tf.constant([1.7])
    assert tf.to_int32(f).dtype == tf.int32 and tf.to_int64(f).dtype == tf.int64
    assert sess.run(tf.to_int64(f)).tolist() == [1]
    assert tf.dtypes.cast is tf.cast and tf.dtypes.saturate_cast is tf.saturate_cast


def test_cast_gradient(graph):
    x = tf.placeholder(tf.float32, [3])
    g = tf.gradients(tf.reduce_sum(tf.cast(x, tf.float64) * 2.0), x)[0]
    assert g.dtype == tf.float32
    with tf.Session() as s:
        assert s.run(g, {x: [1, 2, 3]}).tolist() == [2, 2, 2]
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]
    xd = tf.placeholder(tf.float64, [3])
    err = compute_gradient_error(xd, [3], tf.cast(xd, tf.float64) * tf.cast(xd, tf.float64),
                                 [3], x_init_value=np.array([0.5, 1.0, 2.0]), delta=1e-6)
    assert err < 1e-6


def test_saturate_cast(sess):
    out = sess.run(tf.saturate_cast(tf.constant([-5.0, 300.0, 7.6]), tf.uint8))
    assert out.dtype == np.uint8 and out.tolist() == [0, 255, 7]
    out = sess.run(tf.saturate_cast(tf.constant([3e9, -3e9, 5.5]), tf.int32))
    assert out.tolist() == [2147483520, -2147483648, 5]
    out = sess.run(tf.saturate_cast(tf.constant([-5, 300, 7], tf.int64), tf.int8))
    assert out.tolist() == [-5, 127, 7]
    out = sess.run(tf.saturate_cast(tf.constant([1e6, -1e6], tf.float64), tf.float16))
    assert out.tolist() == [65504.0, -65504.0]
    out = sess.run(tf.saturate_cast(tf.constant([-5 + 1j, 300.0]), tf.uint8))
    assert out.tolist() == [0, 255]
    with tf.Graph().as_default():
        assert tf.saturate_cast(tf.constant([1.0]), tf.int32).op.name == "saturate_cast"


def test_saturate_cast_64_bit_bounds_are_exact(sess):
    """The clamp bound must be the largest value that casts in range, found exactly:
    2**63 - 1 for uint64 -> int64 (not a float-rounded neighbour)."""
    big = np.array([2**64 - 1, 5], np.uint64)
    out = sess.run(tf.saturate_cast(tf.constant(big), tf.int64))
    assert out.tolist() == [2**63 - 1, 5]
    out = sess.run(tf.saturate_cast(tf.constant([2**63 - 1, -2**63], tf.int64), tf.uint32))
    assert out.tolist() == [2**32 - 1, 0]
    out = sess.run(tf.saturate_cast(tf.constant([1e30, -1e30, 2.5], tf.float64), tf.int64))
    assert out.tolist() == [int(np.nextafter(2.0**63, 0)), -2**63, 2]


def test_saturate_cast_to_complex_clamps_each_part(sess):
    f32_max = float(np.finfo(np.float32).max)
    out = sess.run(tf.saturate_cast(tf.constant([1e300, -1e300, 2.0], tf.float64),
                                    tf.complex64))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out, np.array([f32_max, -f32_max, 2.0], np.complex64))
    out = sess.run(tf.saturate_cast(tf.constant([1e300 - 1e300j, 3 + 4j]), tf.complex64))
    np.testing.assert_array_equal(
        out, np.array([complex(f32_max, -f32_max), 3 + 4j], np.complex64))
    with pytest.raises(TypeError, match="bool"):
        tf.saturate_cast(tf.constant([True]), tf.int32)


# --- add_n / accumulate_n -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.complex64])
def test_add_n(sess, dtype):
    xs = [np.arange(6).reshape(2, 3).astype(dtype) * (k + 1) for k in range(4)]
    y = tf.add_n([tf.constant(x) for x in xs])
    assert y.op.type == "AddN" and y.dtype == tf.as_dtype(dtype)
    out = sess.run(y)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, sum(xs))


def test_add_n_does_not_mutate_inputs(sess):
    a = tf.placeholder(tf.float64, [3])
    av = np.array([1.0, 2.0, 3.0])
    out = sess.run(tf.add_n([a, a, a, a]), {a: av})
    assert out.tolist() == [4, 8, 12] and av.tolist() == [1, 2, 3]
    assert sess.run(tf.add_n([tf.constant(1.0), tf.constant(2.0), tf.constant(3.0)])) == 6.0


def test_add_n_special_cases(sess):
    x = tf.constant([1, 2])
    assert tf.add_n([x]) is x
    named = tf.add_n([x], name="foo")
    assert named.op.type == "Identity" and named.op.name == "foo"
    assert sess.run(tf.add_n([[1, 2], [3, 4]])).tolist() == [4, 6]
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])
    with pytest.raises(ValueError):
        tf.add_n(x)
    with pytest.raises(TypeError, match="don't all match"):
        tf.add_n([tf.constant([1.0]), tf.constant([1.0], tf.float64)])
    with pytest.raises(ValueError):
        tf.add_n([tf.constant([1.0, 2.0]), tf.constant(1.0)])


def test_add_n_static_shape_merges_and_runtime_shape_check(sess):
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [2, None])
    assert tf.add_n([a, b]).shape.as_list() == [2, 3]
    c = tf.placeholder(tf.float32, [None])
    d = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size and shape"):
        sess.run(tf.add_n([c, d]), {c: [1.0], d: [1.0, 2.0]})


def test_add_n_of_indexed_slices_is_dense(sess):
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    y = tf.add_n([s, tf.ones([3, 2])])
    assert sess.run(y).tolist() == [[1, 1], [2, 3], [1, 1]]


def test_add_n_gradient(graph):
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    err = compute_gradient_error(x, [2], tf.add_n([x, y, x * x]), [2],
                                 x_init_value=np.array([0.5, 1.5]), delta=1e-6,
                                 extra_feed_dict={y: [1.0, 2.0]})
    assert err < 1e-6


def test_accumulate_n(sess):
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    assert sess.run(tf.accumulate_n([a, b])).tolist() == [4, 6]
    assert tf.math.accumulate_n is tf.accumulate_n
    with pytest.raises(ValueError, match="not compatible"):
        tf.accumulate_n([a], shape=[3])
    with pytest.raises(TypeError, match="tensor_dtype"):
        tf.accumulate_n([a], tensor_dtype=tf.int32)
    with pytest.raises(ValueError, match="at least one"):
        tf.accumulate_n([])
    with pytest.raises(ValueError):
        tf.accumulate_n([a, tf.constant([1.0, 2.0, 3.0])])


# --- clip_by_value --------------------------------------------------------------------------
def test_clip_by_value(sess):
    t = tf.constant([[1.0, 5.0, -3.0], [0.5, 2.0, 9.0]])
    y = tf.clip_by_value(t, 0.0, 3.0)
    assert y.op.type == "Maximum" and y.op.name == "clip_by_value"
    np.testing.assert_array_equal(sess.run(y), np.clip(sess.run(t), 0, 3))
    y2 = tf.clip_by_value(t, [0.0, 1.0, 2.0], 3.0)
    assert sess.run(y2).tolist() == [[1, 3, 2], [0.5, 2, 3]]
    assert sess.run(tf.clip_by_value(tf.constant([1, 5]), 2, 3)).tolist() == [2, 3]
    with pytest.raises(ValueError):
        tf.clip_by_value(tf.constant([1.0, 2.0]), [0.0, 1.0, 2.0], 1.0)
    with pytest.raises(ValueError):
        tf.clip_by_value(tf.constant([1.0, 2.0]), 0.0, tf.ones([2, 2]))


def test_clip_by_value_indexed_slices(sess):
    s = tf.IndexedSlices(tf.constant([[-1.0, 5.0]]), tf.constant([0]), tf.constant([2, 2]))
    c = tf.clip_by_value(s, 0.0, 1.0)
    assert isinstance(c, tf.IndexedSlices)
    assert sess.run(c.values).tolist() == [[0.0, 1.0]]


def test_clip_by_value_gradient_passes_inside_and_at_bounds(sess):
    x = tf.constant([-1.0, 0.0, 0.5, 1.0, 2.0])
    g = tf.gradients(tf.clip_by_value(x, 0.0, 1.0), x)[0]
    assert sess.run(g).tolist() == [0, 1, 1, 1, 0]


# --- range / linspace -----------------------------------------------------------------------
def test_range_values_and_dtypes(sess):
    r = tf.range(5)
    assert r.dtype == tf.int32 and r.shape.as_list() == [5] and r.op.name == "range"
    assert sess.run(r).tolist() == [0, 1, 2, 3, 4]
    assert sess.run(tf.range(10, 1, -3)).tolist() == [10, 7, 4]
    f = tf.range(1, 5, 0.5)
    assert f.dtype == tf.float32 and f.shape.as_list() == [8]
    np.testing.assert_allclose(sess.run(f), np.arange(1, 5, 0.5))
    d = tf.range(5, dtype=tf.float64)
    assert d.dtype == tf.float64 and sess.run(d).dtype == np.float64
    m = tf.range(tf.constant(1, tf.int64), 5.5)
    assert m.dtype == tf.float32 and m.shape.as_list() == [5]
    assert tf.range(tf.constant(1, tf.int64), 5).dtype == tf.int64
    out = sess.run(tf.range(0.1, 1.0, 0.3))
    assert out.dtype == np.float32 and len(out) == 3
    assert sess.run(tf.range(3, 3)).shape == (0,)


def test_range_static_shape_unknown_and_static_value(sess):
    n = tf.placeholder(tf.int32, [])
    r = tf.range(n)
    assert r.shape.as_list() == [None]
    assert sess.run(r, {n: 3}).tolist() == [0, 1, 2]
    assert tf.get_static_value(tf.range(2, 8, 2)).tolist() == [2, 4, 6]


def test_range_errors(sess):
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(1, 5, 0)
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0"):
        tf.range(5, 1, 1)
    with pytest.raises(ValueError, match="Requires start >= limit when delta < 0"):
        tf.range(1, 5, -1)
    with pytest.raises(TypeError):
        tf.range(1.5, 5, dtype=tf.int32)
    d = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0"):
        sess.run(tf.range(0, 5, d), {d: 0})


def test_linspace(sess):
    y = tf.linspace(1.0, 3.0, 4)
    assert y.dtype == tf.float32 and y.shape.as_list() == [4] and y.op.type == "LinSpace"
    np.testing.assert_allclose(sess.run(y), [1.0, 5 / 3, 7 / 3, 3.0], rtol=1e-6)
    assert sess.run(y)[-1] == 3.0
    assert sess.run(tf.linspace(1.0, 3.0, 1)).tolist() == [1.0]
    assert sess.run(tf.linspace(1.0, 3.0, 0)).shape == (0,)
    i = tf.linspace(0, 1, 3)
    assert i.dtype == tf.float64 and sess.run(i).tolist() == [0.0, 0.5, 1.0]
    n = tf.placeholder(tf.int32, [])
    z = tf.lin_space(tf.constant(0.0, tf.float64), 1.0, n)
    assert z.shape.as_list() == [None] and z.dtype == tf.float64
    assert sess.run(z, {n: 5}).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError):
        tf.linspace(0.0, 1.0, -1)


# --- scalar_mul -------------------------------------------------------------------------------
def test_scalar_mul(sess):
    x = tf.constant([1.0, 2.0])
    assert sess.run(tf.scalar_mul(2, x)).tolist() == [2.0, 4.0]
    s = tf.IndexedSlices(tf.constant([1.0, 2.0]), tf.constant([0, 1]))
    m = tf.scalar_mul(3.0, s)
    assert isinstance(m, tf.IndexedSlices) and sess.run(m.values).tolist() == [3.0, 6.0]
    with pytest.raises(ValueError, match="0-D"):
        tf.scalar_mul(tf.constant([1.0, 2.0]), x)
    assert tf.math.scalar_mul is tf.scalar_mul


# --- operators --------------------------------------------------------------------------------
def test_operators_build_tf1_ops_and_names(graph):
    f = tf.placeholder(tf.float32, [2, None])
    b = tf.placeholder(tf.bool, [3])
    cases = [(f + f, "AddV2", "add"), (f - f, "Sub", "sub"), (f * f, "Mul", "mul"),
             (f / f, "RealDiv", "truediv"), (f // f, "FloorDiv", "floordiv"),
             (f % f, "FloorMod", "mod"), (f ** f, "Pow", "pow"), (-f, "Neg", "Neg"),
             (abs(f), "Abs", "Abs"), (f < 1, "Less", "Less"),
             (f <= 1, "LessEqual", "LessEqual"), (f > 1, "Greater", "Greater"),
             (f >= 1, "GreaterEqual", "GreaterEqual"), (b & b, "LogicalAnd", "and"),
             (b | b, "LogicalOr", "or"), (b ^ b, "LogicalAnd", "xor"),
             (~b, "LogicalNot", "LogicalNot")]
    for t, op_type, name in cases:
        assert t.op.type == op_type and t.op.name == name, (t.op.type, t.op.name)
    assert (f + f).shape.as_list() == [2, None]


def test_reflected_operators(sess):
    x = tf.constant([1.0, 2.0])
    r = 1 - x
    assert r.op.type == "Sub" and r.op.inputs[1] is x and r.dtype == tf.float32
    assert sess.run([1 - x, 2 * x, 2 + x, 2 / x, 7 // x, 3 % x, 2 ** x]) is not None
    out = sess.run([1 - x, 2 * x, 2 + x, 2 / x, 7 // x, 3 % x, 2 ** x])
    assert [o.tolist() for o in out] == [[0, -1], [2, 4], [3, 4], [2, 1], [7, 3], [0, 1],
                                         [2, 4]]
    i = tf.constant([1, 2])
    half = sess.run(1 / i)
    assert half.dtype == np.float64 and half.tolist() == [1.0, 0.5]
    assert sess.run(True & tf.constant([True, False])).tolist() == [True, False]
    assert sess.run(x * np.float64(2.0)).dtype == np.float32
    assert sess.run(x * np.array([1.0, 2.0])).tolist() == [1.0, 4.0]


def test_operator_dtype_errors(graph):
    i = tf.constant([1, 2])
    with pytest.raises(TypeError):
        2.0 * i  # even a whole-number float is not converted to int32
    with pytest.raises(TypeError):
        i * 2.5
    with pytest.raises(TypeError):
        tf.constant(1) + tf.constant(2.0)
    with pytest.raises(TypeError):
        tf.constant([1.0]) & tf.constant([2.0])  # bool or integer only


def test_logical_operators_are_bitwise_on_integers(sess):
    """tensorflow.compat.v1's `&`, `|`, `^`, `~`: logical on bools, bitwise on ints
    (TF 1.15 had logical ones only)."""
    i = tf.constant([6, -1], tf.int32)
    got = sess.run([i & 3, i | 3, i ^ 3, ~i, 5 & i, i & tf.constant([3, 3])])
    want = [[2, 3], [7, -1], [5, -4], [-7, 0], [4, 5], [2, 3]]
    assert [g.tolist() for g in got] == want
    assert (i & 3).op.type == "BitwiseAnd" and (~i).op.type == "Invert"
    b = tf.constant([True, False])
    assert sess.run(b ^ True).tolist() == [False, True]
    assert (b & b).op.type == "LogicalAnd"


def test_equality_is_identity(graph):
    x = tf.constant([1.0])
    y = tf.constant([1.0])
    assert (x == x) is True and (x == y) is False and (x != y) is True
    assert len({x, y}) == 2


def test_matmul_operator(sess):
    a = tf.constant([[1.0, 2.0]])
    b = tf.constant([[3.0], [4.0]])
    assert (a @ b).op.type == "MatMul"
    assert sess.run(a @ b).tolist() == [[11.0]]
    assert sess.run(np.array([[1.0, 2.0]], np.float32) @ b).tolist() == [[11.0]]


def test_operator_gradients(graph):
    x = tf.placeholder(tf.float64, [3])
    y = 3.0 * x * x - x / 2.0 + 1.0 / (x + 4.0) - (-x) ** 3.0
    err = compute_gradient_error(x, [3], y, [3], x_init_value=np.array([0.5, 1.0, 1.5]),
                                 delta=1e-6)
    assert err < 1e-6


def test_cast_of_sparse_tensors_casts_their_values(sess):
    sp = tf.SparseTensor([[0, 1]], [3], [2, 2])
    c = tf.cast(sp, tf.float32)
    assert isinstance(c, tf.SparseTensor) and c.values.name == "Cast:0"
    got = sess.run(c)
    assert got.values.dtype == np.float32 and got.values.tolist() == [3.0]
    assert got.indices.tolist() == [[0, 1]] and got.dense_shape.tolist() == [2, 2]
