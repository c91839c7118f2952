"""The structured executor's compiled loops (runtime/frames.py): each loop frame runs as
one generated function; these tests pin what that compilation must keep."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.runtime import frames


def _loop_programs(monkeypatch):
    progs = []
    orig = frames.StructuredCompiler.compile_loop

    def spy(self, frame):
        p = orig(self, frame)
        progs.append(p)
        return p
    monkeypatch.setattr(frames.StructuredCompiler, "compile_loop", spy)
    return progs


def test_kernel_error_in_loop_body_names_its_op(sess):
    x = tf.placeholder(tf.float32, None)
    m = tf.placeholder(tf.float32, None)
    _, a = tf.while_loop(lambda i, a: i < 3,
                         lambda i, a: (i + 1, tf.matmul(a, m, name="body_mm")), [0, x])
    ok = sess.run(a, {x: np.ones((2, 2), np.float32), m: np.ones((2, 2), np.float32)})
    np.testing.assert_allclose(ok, np.full((2, 2), 8.0))
    with pytest.raises(errors.InvalidArgumentError, match="Matrix size-incompatible") as e:
        sess.run(a, {x: np.ones((2, 3), np.float32), m: np.ones((2, 2), np.float32)})
    assert e.value.op.name == "while/body_mm"


def test_kernel_error_in_cond_branch_of_nested_loop_names_its_op(sess):
    x = tf.placeholder(tf.float32, None)
    m = tf.placeholder(tf.float32, None)

    def outer(i, a):
        def inner(j, b):
            return j + 1, tf.cond(j < 1, lambda: tf.matmul(b, m, name="mm"),
                                  lambda: b * 2.0)
        return i + 1, tf.while_loop(lambda j, b: j < 2, inner, [0, a])[1]
    _, a = tf.while_loop(lambda i, a: i < 3, outer, [0, x])
    ok = sess.run(a, {x: np.ones((2, 2), np.float32), m: np.ones((2, 2), np.float32)})
    np.testing.assert_allclose(ok, np.full((2, 2), 64.0))
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(a, {x: np.ones((2, 3), np.float32), m: np.ones((2, 2), np.float32)})
    assert e.value.op.name == "while/while/cond/mm"


def test_loop_with_several_exits_and_zero_iterations(sess):
    n = tf.placeholder(tf.int32, [])
    i, s, p = tf.while_loop(lambda i, s, p: i < n,
                            lambda i, s, p: (i + 1, s + tf.cast(i, tf.float32), p * 2.0),
                            [0, tf.constant(0.0), tf.constant(1.0)])
    assert sess.run([i, s, p], {n: 4}) == [4, 6.0, 16.0]
    assert sess.run([i, s, p], {n: 0}) == [0, 0.0, 1.0]


@pytest.mark.skipif(os.environ.get("TW_EXECUTOR") == "tagged",
                    reason="inspects the structured executor's loop programs")
def test_gradient_loop_runs_no_trigger_or_constant_steps(graph, monkeypatch):
    # ControlTriggers only order pushes/pops (the step order already does) and
    # constants are written once per loop run, not once per iteration
    progs = _loop_programs(monkeypatch)
    w = tf.Variable(tf.ones([3, 3]) * 0.1)
    x = tf.placeholder(tf.float32, [3, 3])
    _, a = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))),
                         [tf.constant(0), x])
    gw = tf.gradients(tf.reduce_sum(a), w)[0]
    with tf.Session(graph=graph) as s:
        s.run(tf.global_variables_initializer())
        xv = np.eye(3, dtype=np.float32)
        got = s.run(gw, {x: xv})
    assert len(progs) == 2
    for p in progs:
        types = [op.type for op in p.ops]
        assert "ControlTrigger" not in types and "Const" not in types, types
    wv = np.full((3, 3), 0.1, np.float32)
    acts = [xv]
    for _ in range(5):
        acts.append(np.tanh(acts[-1] @ wv))
    dy, want = np.ones((3, 3), np.float32), np.zeros((3, 3), np.float32)
    for k in range(5, 0, -1):
        dz = dy * (1 - acts[k] ** 2)
        want += acts[k - 1].T @ dz
        dy = dz @ wv.T
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_scalar_loop_constants_keep_dtype(sess):
    i = tf.while_loop(lambda i: i < 10, lambda i: i + tf.constant(3, tf.int64),
                      [tf.constant(0, tf.int64)])
    r = sess.run(i)
    assert r == 12 and r.dtype == np.int64


@pytest.mark.skipif(os.environ.get("TW_EXECUTOR") == "tagged",
                    reason="inspects the structured executor's generated code")
def test_traceback_through_a_compiled_loop_shows_its_source_lines(sess):
    import linecache
    import traceback
    x = tf.placeholder(tf.float32, None)
    m = tf.placeholder(tf.float32, None)
    _, a = tf.while_loop(lambda i, a: i < 3,
                         lambda i, a: (i + 1, tf.matmul(a, m, name="body_mm")), [0, x])
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(a, {x: np.ones((2, 3), np.float32), m: np.ones((2, 2), np.float32)})
    # the kernel's own exception (the cause) was raised through the generated function
    frames_ = traceback.extract_tb(e.value.__cause__.__traceback__)
    generated = [f for f in frames_ if f.filename.startswith("<tensorweave while loop")]
    assert generated, [f.filename for f in frames_]
    call = generated[-1]
    assert call.line.startswith("v") and "= f" in call.line, call.line  # "v7 = f2(c2, ...)"
    text = "".join(traceback.format_exception(e.value.__cause__))
    assert call.line in text
    assert linecache.getline(call.filename, call.lineno).strip() == call.line


@pytest.mark.skipif(os.environ.get("TW_EXECUTOR") == "tagged",
                    reason="inspects the structured executor's generated code")
def test_generated_source_leaves_linecache_with_its_program(graph):
    import gc
    import linecache
    i = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    with tf.Session() as s:
        assert s.run(i) == 3
        names = [k for k in linecache.cache if k.startswith("<tensorweave while loop")]
        assert names
    del s
    gc.collect()
    left = [k for k in linecache.cache if k.startswith("<tensorweave while loop")]
    assert not set(names) & set(left)


def test_loop_value_makes_0d_numeric_arrays_numpy_scalars():
    from tensorweave.runtime.values import DEAD, loop_value
    for dtype in (np.bool_, np.int8, np.int32, np.uint16, np.float16, np.float32,
                  np.float64, np.complex64):
        v = loop_value(np.array(3, dtype))
        assert type(v) is dtype and v == dtype(3)
    strings = np.empty((), object)
    strings[()] = b"s"
    for kept in (strings, np.zeros((1,), np.float32), np.zeros((2, 2)), DEAD, None, 3):
        assert loop_value(kept) is kept


SEEN_TYPES = []
register_op("TestRecordValueType", inputs=["x: float32"], outputs=["y: float32"],
            stateful=True, shape=lambda op: op.inputs[0].shape)
not_differentiable("TestRecordValueType")


@kernel("TestRecordValueType")
def _record_value_type(ctx, x):
    SEEN_TYPES.append(type(x))
    return x


@pytest.mark.parametrize("executor", [None, "tagged"])
def test_fed_scalars_enter_loops_as_numpy_scalars(monkeypatch, executor):
    # a fed bound and a fed step are 0-d arrays; inside the loop each op on them would
    # be a ufunc call per iteration: they enter as NumPy scalars, and the results are
    # the same (a fed scalar fetched is still the 0-d array fed)
    if executor:
        monkeypatch.setenv("TW_EXECUTOR", executor)
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    del SEEN_TYPES[:]
    n = tf.placeholder(tf.int32, [])
    step = tf.placeholder(tf.float32, [])
    r = tf.while_loop(lambda i, a: i < n, lambda i, a: (
        i + 1, a + apply_op("TestRecordValueType", [step]).outputs[0] * 0.5), [0, 0.0])
    with tf.Session() as sess:
        got = sess.run(r, {n: 5, step: np.float32(3.0)})
        fed = sess.run([r, n], {n: 2, step: 1.0})[1]
    assert got == (5, 7.5)
    assert type(fed) is np.ndarray and fed.shape == () and fed == 2
    assert SEEN_TYPES == [np.float32] * 7
