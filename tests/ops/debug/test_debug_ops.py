"""Print, tf.print, check_numerics, Assert and the assert_* family."""
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.debug.debug_ops import summarize_v1, summarize_v2

IAE = errors.InvalidArgumentError


# --- formatting (expected strings taken from TF 2.21's Print / tf.print) -----------------
def test_summarize_v1_matches_tf():
    f32 = np.array([1.0, 0.1, 1e-8, 1234567.0, np.nan, np.inf, -0.0, 2.5e10], np.float32)
    assert summarize_v1(f32, 20) == "1 0.1 1e-08 1234567 nan inf -0 2.5e+10"
    f64 = np.array([1.0, 1 / 3, 2.5e10, -np.inf])
    assert summarize_v1(f64, 20) == "1 0.33333333333333331 25000000000 -inf"
    assert summarize_v1(np.array([1.0, 0.1, 3.3], np.float16), 3) == \
        "1 0.0999755859 3.30078125"
    assert summarize_v1(np.array([True, False])) == "1 0"
    assert summarize_v1(np.array([b"ab", b"c d"], dtype=object)) == "ab c d"
    assert summarize_v1(np.array(b"str", dtype=object)) == "str"
    assert summarize_v1(np.zeros((0, 3))) == ""
    assert summarize_v1(np.array([-1, 2, 3, 4])) == "-1 2 3..."
    assert summarize_v1(np.array([[1, 2], [3, 4]])) == "[1 2][3...]..."
    x3 = np.arange(24).reshape(2, 3, 4)
    assert summarize_v1(x3, 5) == "[[0 1 2 3][4...]]..."
    assert summarize_v1(x3, 3) == "[[0 1 2...]]..."
    assert summarize_v1(x3, -1) == ("[[0 1 2 3][4 5 6 7][8 9 10 11]]"
                                    "[[12 13 14 15][16 17 18 19][20 21 22 23]]")


def test_summarize_v2_matches_tf():
    assert summarize_v2(np.arange(10), 2) == "[0 1 ... 8 9]"
    assert summarize_v2(np.arange(10), 3) == "[0 1 2 ... 7 8 9]"
    assert summarize_v2(np.arange(10), -1) == "[0 1 2 3 4 5 6 7 8 9]"
    assert summarize_v2(np.arange(24).reshape(2, 3, 4), 1) == (
        "[[[0 ... 3]\n  ...\n  [8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]]")
    # one more line break per level above the innermost (TF 2.21's text)
    assert summarize_v2(np.arange(16).reshape(2, 2, 2, 2), 2) == (
        "[[[[0 1]\n   [2 3]]\n\n  [[4 5]\n   [6 7]]]\n\n\n [[[8 9]\n   [10 11]]\n\n"
        "  [[12 13]\n   [14 15]]]]")
    assert summarize_v2(np.array([b"ab", b"c d"], dtype=object)) == '["ab" "c d"]'
    assert summarize_v2(np.array(3.5, np.float32)) == "3.5"
    assert summarize_v2(np.zeros((0, 3))) == "[]"


# --- Print ----------------------------------------------------------------------------
def test_print_prints_and_passes_value(sess, capsys):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    y = tf.Print(x, [x, "tag", tf.constant(7)], message="vals: ", summarize=2)
    assert y.op.type == "Print" and y.shape.as_list() == [4] and y.name == "Print:0"
    np.testing.assert_array_equal(sess.run(y), [1, 2, 3, 4])
    assert capsys.readouterr().err == "vals: [1 2...][tag][7]\n"


def test_print_first_n(sess, capsys):
    x = tf.constant([1, 2])
    y = tf.Print(x, [x], first_n=2)
    for _ in range(4):
        sess.run(y)
    assert capsys.readouterr().err == "[1 2]\n[1 2]\n"


def test_print_gradient_passes_through(sess):
    x = tf.constant([1.0, 2.0])
    y = tf.Print(x, [x])
    (g,) = tf.gradients(y, [x], grad_ys=[tf.constant([3.0, 4.0])])
    np.testing.assert_array_equal(sess.run(g), [3.0, 4.0])


# --- tf.print ---------------------------------------------------------------------------
def test_tf_print_structure_sep_end(sess, capsys):
    x = tf.constant(np.arange(10))
    op = tf.print("a", x, 5, 2.5, [1, x], {"k": x}, output_stream=sys.stdout, sep=",",
                  end="!\n", summarize=2)
    assert isinstance(op, tf.Operation) and op.type == "PrintV2"
    assert capsys.readouterr().out == ""  # nothing printed at build time
    sess.run(op)
    assert capsys.readouterr().out == \
        "a,[0 1 ... 8 9],5,2.5,[1, [0 1 ... 8 9]],{'k': [0 1 ... 8 9]}!\n"


def test_tf_print_defaults_to_stderr(sess, capsys):
    op = tf.print(tf.constant([[1, 2], [3, 4]]), tf.constant("s"), tf.constant(True))
    sess.run(op)
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == '[[1 2]\n [3 4]] "s" 1\n'


def test_tf_print_in_control_dependencies_and_file(sess, tmp_path):
    path = tmp_path / "out.txt"
    x = tf.constant([1.5, 2.5])
    op = tf.print("x =", x, output_stream="file://%s" % path)
    with tf.control_dependencies([op]):
        y = tf.identity(x)
    sess.run(y)
    assert path.read_text() == "x = [1.5 2.5]\n"


def test_tf_print_scalar_strings_summarize_none_and_sparse_tensors(sess, capsys):
    loss = tf.constant(0.25)
    ops = [
        tf.print(tf.strings.format("loss={} step={}", (loss, tf.constant(3)))),  # as is
        tf.print(tf.constant("x"), tf.constant("y")),  # several: quoted
        tf.print(tf.range(10), summarize=None),  # None: 3 at each end
        tf.print(tf.SparseTensor([[0, 1]], [1.5], [2, 2])),
        tf.print("a", {"s": tf.SparseTensor([[0, 1]], [1.5], [2, 2])}),
    ]
    for op in ops:
        sess.run(op)
    assert capsys.readouterr().err == (
        "loss=0.25 step=3\n\"x\" \"y\"\n[0 1 2 ... 7 8 9]\n"
        "'SparseTensor(indices=[[0 1]], values=[1.5], shape=[2 2])'\n"
        "a {'s': 'SparseTensor(indices=[[0 1]], values=[1.5], shape=[2 2])'}\n")


def test_tf_print_to_tf_logging(sess, caplog):
    import logging
    caplog.set_level(logging.INFO, logger="tensorflow")
    for stream in (tf.logging.info, tf.logging.INFO, tf.logging.warn, tf.logging.error):
        sess.run(tf.print("to the log", output_stream=stream))
    assert [r.levelname for r in caplog.records if "to the log" in r.getMessage()] == \
        ["INFO", "INFO", "WARNING", "ERROR"]
    with pytest.raises(ValueError):  # the standard library's are not TF's streams
        tf.print("x", output_stream=logging.info)


def test_tf_print_errors(graph):
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print(tf.constant(1), output_stream=3)
    with pytest.raises(TypeError):
        tf.print(tf.constant(1), bogus=1)


# --- check_numerics ---------------------------------------------------------------------
@pytest.mark.parametrize("value,what", [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"),
                                        ([-np.inf, np.nan], "Inf and NaN")])
def test_check_numerics_fails(sess, value, what):
    p = tf.placeholder(tf.float32, [None])
    c = tf.check_numerics(p, "chk")
    with pytest.raises(IAE, match="chk : Tensor had %s values" % what) as e:
        sess.run(c, {p: value})
    assert "CheckNumerics" in str(e.value)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64])
def test_check_numerics_passes(sess, dtype):
    x = tf.constant([1.0, -2.0], dtype=dtype)
    c = tf.debugging.check_numerics(x, "ok")
    assert c.dtype == dtype and c.shape.as_list() == [2]
    np.testing.assert_array_equal(sess.run(c).astype(np.float32), [1.0, -2.0])


def test_check_numerics_rejects_ints(graph):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.check_numerics(tf.constant([1, 2]), "m")


def test_check_numerics_gradient(sess):
    from tensorweave.autodiff.gradient_checker import compute_gradient_error
    x = tf.constant([[0.5, -1.0], [2.0, 3.0]], tf.float64)
    # x * x: the checker aliases fed arrays, so y must not be x itself (see report)
    y = tf.check_numerics(x * x, "m")
    assert compute_gradient_error(x, [2, 2], y, [2, 2]) < 1e-6
    z = tf.check_numerics(x, "m")
    (g,) = tf.gradients(z, [x])
    assert g.op.type == "CheckNumerics" and b"in gradient. m" in g.op.get_attr("message")
    np.testing.assert_array_equal(sess.run(g), np.ones((2, 2)))


def test_verify_tensor_all_finite(sess):
    p = tf.placeholder(tf.float32, [None])
    v = tf.verify_tensor_all_finite(p, "vmsg")
    assert tf.debugging.assert_all_finite is tf.verify_tensor_all_finite
    np.testing.assert_array_equal(sess.run(v, {p: [1.0]}), [1.0])
    with pytest.raises(IAE, match="vmsg : Tensor had Inf values"):
        sess.run(v, {p: [np.inf]})


# --- Assert ---------------------------------------------------------------------------------
def test_assert_op(sess):
    c = tf.placeholder(tf.bool, [])
    p = tf.placeholder(tf.float32, [None])
    a = tf.Assert(c, [p, "hi", tf.constant([[1, 2], [3, 4]])], summarize=2)
    assert isinstance(a, tf.Operation) and a.type == "Assert" and a.name == "Assert/Assert"
    assert tf.debugging.Assert is tf.Assert
    sess.run(a, {c: True, p: [1.0]})
    with pytest.raises(IAE) as e:
        sess.run(a, {c: False, p: [-1.0, 2.0, 3.0]})
    msg = str(e.value)
    assert "assertion failed: [-1 2...] [hi] [[1 2]...]" in msg and "Assert/Assert" in msg


def test_assert_in_control_dependencies(sess):
    p = tf.placeholder(tf.float32, [None])
    with tf.control_dependencies([tf.Assert(tf.constant(False), ["boom"])]):
        y = tf.identity(p)
    with pytest.raises(IAE, match=r"assertion failed: \[boom\]"):
        sess.run(y, {p: [1.0]})


def test_assert_condition_must_be_a_bool_scalar(sess):
    # TF checks the rank in the kernel (run time) and the dtype at build time
    op = tf.Assert(tf.constant([True, True]), ["x"])
    with pytest.raises(IAE, match=r"In\[0\] should be a scalar"):
        sess.run(op)
    with pytest.raises(TypeError, match="expected type of bool"):
        tf.Assert(tf.constant(1), ["x"])


# --- binary asserts ---------------------------------------------------------------------
BINARY = [("assert_equal", "==", [1.0, 2.0], [1.0, 3.0], [1.0, 2.0]),
          ("assert_none_equal", "!=", [1.0, 2.0], [1.0, 3.0], [3.0, 4.0]),
          ("assert_less", "<", [1.0, 2.0], [2.0, 2.0], [2.0, 3.0]),
          ("assert_less_equal", "<=", [1.0, 2.0], [1.0, 1.0], [1.0, 2.0]),
          ("assert_greater", ">", [1.0, 2.0], [0.0, 2.0], [0.0, 1.0]),
          ("assert_greater_equal", ">=", [1.0, 2.0], [1.0, 3.0], [0.0, 2.0])]


@pytest.mark.parametrize("fname,sym,x,bad,good", BINARY)
def test_binary_assert_static_failure(graph, fname, sym, x, bad, good):
    fn = getattr(tf, fname)
    assert getattr(tf.debugging, fname) is fn
    with pytest.raises(IAE) as e:
        fn(tf.constant(x), tf.constant(bad), message="hello")
    msg = str(e.value)
    assert msg.startswith("hello\nCondition x %s y did not hold element-wise:\nx (" % sym)
    op = fn(tf.constant(x), tf.constant(good))
    assert isinstance(op, tf.Operation)


@pytest.mark.parametrize("fname,sym,x,bad,good", BINARY)
def test_binary_assert_run_time(sess, fname, sym, x, bad, good):
    p = tf.placeholder(tf.float32, [None])
    c = tf.constant(x)
    op = getattr(tf, fname)(c, p, summarize=1)
    sess.run(op, {p: good})
    with pytest.raises(IAE) as e:
        sess.run(op, {p: bad})
    msg = str(e.value)
    assert ("assertion failed: [Condition x %s y did not hold element-wise:] "
            "[x (%s) = ] [%g...] [y (Placeholder:0) = ] [%g...]"
            % (sym, c.name, x[0], bad[0])) in msg
    assert op.name in msg


def test_binary_assert_messages_like_tf(sess):
    with pytest.raises(IAE) as e:
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    assert str(e.value) == ("Condition x == y did not hold element-wise:\nx (Const:0) = \n"
                            "[1 2]\ny (Const_1:0) = \n[1 3]")
    p = tf.placeholder(tf.float32, [None])
    a = tf.assert_equal(p, 1.0, message="pm", summarize=2)
    with pytest.raises(IAE) as e:
        sess.run(a, {p: [1.0, 2.0, 3.0]})
    assert ("assertion failed: [pm] [Condition x == y did not hold element-wise:] "
            "[x (Placeholder:0) = ] [1 2...] [y (%s) = ] [1]" % a.inputs[1].name) in str(e.value)


def test_binary_assert_custom_data(sess):
    p = tf.placeholder(tf.int32, [None])
    a = tf.assert_less(p, 3, data=["custom", p], message="M")
    with pytest.raises(IAE, match=r"assertion failed: \[M\] \[custom\] \[5\]"):
        sess.run(a, {p: [5]})


def test_binary_assert_shape_and_type_errors(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))
    with pytest.raises(TypeError):
        tf.assert_equal(tf.placeholder(tf.float32), 1)


def test_binary_assert_broadcast_run_time_error(sess):
    p = tf.placeholder(tf.float32)
    a = tf.assert_equal(p, tf.constant([1.0, 1.0]))
    with pytest.raises(IAE, match=r"Incompatible shapes: \[3\] vs. \[2\]"):
        sess.run(a, {p: [1.0, 1.0, 1.0]})


def test_assert_equal_same_tensor_is_noop(graph):
    p = tf.placeholder(tf.float32)
    assert tf.assert_equal(p, p).type == "NoOp"


def test_assert_equal_strings_static(graph):
    with pytest.raises(IAE, match=r"x \(Const:0\) = \n\[b'a'\]"):
        tf.assert_equal(tf.constant(["a"]), tf.constant(["b"]))


# --- sign asserts -------------------------------------------------------------------------
SIGN = [("assert_positive", ">", [1, 2], [1, 0]), ("assert_negative", "<", [-1], [0, -1]),
        ("assert_non_negative", ">=", [0, 1], [-1]),
        ("assert_non_positive", "<=", [0, -1], [1])]


@pytest.mark.parametrize("fname,sym,good,bad", SIGN)
def test_sign_asserts(sess, fname, sym, good, bad):
    fn = getattr(tf, fname)
    assert getattr(tf.debugging, fname) is fn
    with pytest.raises(IAE) as e:
        fn(tf.constant(bad), message="m")
    assert str(e.value).startswith("m.  \nCondition x %s 0 did not hold element-wise:" % sym)
    fn(tf.constant(good))
    p = tf.placeholder(tf.int32, [None])
    op = fn(p)
    sess.run(op, {p: good})
    with pytest.raises(IAE) as e:
        sess.run(op, {p: bad})
    assert "assertion failed: [] [Condition x %s 0 did not hold" % sym in str(e.value)


def test_assert_near(sess):
    p = tf.placeholder(tf.float32, [None])
    op = tf.assert_near(p, 1.0, message="m")
    sess.run(op, {p: [1.0, 1.0 + 1e-7]})
    with pytest.raises(IAE, match=r"assertion failed: \[m.  \] \[x and y not equal to "
                                  r"tolerance rtol = "):
        sess.run(op, {p: [1.0, 2.0]})
    loose = tf.assert_near(p, 1.0, rtol=0.0, atol=1.5)
    sess.run(loose, {p: [2.0, 0.0]})


# --- ranks ------------------------------------------------------------------------------------
def test_rank_asserts_static(graph):
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match=r"^Tensor Const:0 must have rank 2.  Received rank "
                                          r"1, shape \(2,\)$"):
        tf.assert_rank(tf.constant([1.0, 2.0]), 2)
    with pytest.raises(ValueError, match=r"^msg.  Tensor Placeholder:0 must have rank 2"):
        tf.assert_rank(p, 2, message="msg")
    with pytest.raises(ValueError, match="must have rank at least 2.  Received rank 1"):
        tf.assert_rank_at_least(p, 2)
    with pytest.raises(ValueError, match=r"must have rank in \(0, 2\).  Received rank 1"):
        tf.assert_rank_in(p, [0, 2])
    with pytest.raises(ValueError, match="Rank must be a scalar."):
        tf.assert_rank(p, [1])
    with pytest.raises(TypeError, match="must be of type tf.int32; got tf.float32"):
        tf.assert_rank(p, 1.5)
    ok = tf.assert_rank(p, 1)
    assert ok.type == "NoOp" and ok.name.endswith("static_checks_determined_all_ok")
    assert tf.assert_rank_at_least(p, 0).type == "NoOp"
    assert tf.assert_rank_in(p, [1, 2]).type == "NoOp"


def test_rank_asserts_run_time(sess):
    q = tf.placeholder(tf.int32)
    r = tf.placeholder_with_default(2, [])
    a = tf.assert_rank(q, r)
    sess.run(a, {q: [[1]]})
    with pytest.raises(IAE) as e:
        sess.run(a, {q: [1, 2, 3]})
    assert ("assertion failed: [] [Tensor Placeholder:0 must have rank] [2] "
            "[Received shape: ] [3]") in str(e.value)
    b = tf.assert_rank_at_least(q, r, message="m")
    sess.run(b, {q: np.zeros((1, 1, 1), np.int32)})
    with pytest.raises(IAE, match=r"\[m.  \] \[Tensor Placeholder:0 must have rank at least\]"):
        sess.run(b, {q: 1})
    c = tf.assert_rank_in(q, [r, 3])
    sess.run(c, {q: np.zeros((1, 1, 1), np.int32)})
    with pytest.raises(IAE, match=r"must have rank in\] \[2\] \[3\] \[Received shape: \] "
                                  r"\[1\]"):
        sess.run(c, {q: [1]})
    rr = tf.placeholder(tf.int32)
    d = tf.assert_rank(q, rr)
    with pytest.raises(IAE, match=r"Rank must be a scalar. Received rank: \] \[1 2\]"):
        sess.run(d, {q: [1], rr: [1, 2]})


# --- dtypes and static properties ----------------------------------------------------------
def test_assert_type_integer_scalar(graph):
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(TypeError, match=r"^mm.  Placeholder:0 must be of type tf.int32; "
                                        r"got tf.float32$"):
        tf.assert_type(p, tf.int32, message="mm")
    assert tf.assert_type(p, tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match=r'Expected "x" to be integer type.  Found: '
                                        r"Placeholder:0 of dtype <dtype: 'float32'>"):
        tf.assert_integer(p)
    assert tf.assert_integer(tf.constant([1])).type == "NoOp"
    with pytest.raises(ValueError, match=r"Expected scalar shape for Placeholder:0, saw "
                                         r"shape: \(\?,\)."):
        tf.assert_scalar(p)
    with pytest.raises(ValueError, match="saw shape: <unknown>"):
        tf.assert_scalar(tf.placeholder(tf.float32))
    s = tf.constant(1.0)
    assert tf.assert_scalar(s) is s


def test_assert_proper_iterable_and_same_float_dtype(graph):
    with pytest.raises(TypeError, match='"proper" iterable'):
        tf.assert_proper_iterable("abc")
    with pytest.raises(TypeError, match="to be iterable"):
        tf.assert_proper_iterable(3)
    tf.assert_proper_iterable([1])
    p = tf.placeholder(tf.float32)
    d = tf.constant(1.0, tf.float64)
    assert tf.assert_same_float_dtype([p]) == tf.float32
    assert tf.assert_same_float_dtype(None) == tf.float32
    with pytest.raises(ValueError, match="must be of the same type"):
        tf.assert_same_float_dtype([p, d])
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.assert_same_float_dtype(None, tf.int32)


def test_is_numeric_tensor(graph):
    assert tf.is_numeric_tensor(tf.constant(1.0))
    assert tf.is_numeric_tensor(tf.constant([1], tf.int64))
    assert not tf.is_numeric_tensor(tf.constant(True))
    assert not tf.is_numeric_tensor(tf.constant("s"))
    assert not tf.is_numeric_tensor(np.ones(2))
    assert tf.debugging.is_numeric_tensor is tf.is_numeric_tensor


def test_assert_family_types_names_and_none_data(graph):
    with pytest.raises(TypeError, match="DataType string"):
        tf.assert_less(tf.constant(["a"]), tf.constant(["b"]))  # TF orders reals only
    with pytest.raises(TypeError, match="DataType complex128"):
        tf.assert_greater(tf.constant([1j]), tf.constant([2j]))
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        # TF's assert_equal opens its scope twice: the first call's ops are assert_equal_1/
        assert tf.assert_equal(p, 1.0).name == "assert_equal_1/Assert"
        assert tf.assert_equal(p, 1.0, name="chk").name == "chk_1/Assert"
    assert tf.assert_equal(tf.constant(["a"]), tf.constant(["a"])) is not None
    p = tf.placeholder(tf.float32)
    with pytest.raises(ValueError, match="None values not supported"):
        tf.assert_equal(p, 1.0, data=["msg", None])
    sparse = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.assert_type(sparse, tf.float32).type == "NoOp"  # its values' dtype
    with pytest.raises(TypeError, match="must be of type"):
        tf.assert_type(sparse, tf.int32)
