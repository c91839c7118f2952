"""Graphs written by TF 2.21 with control flow v2 (gradients and a frozen RNN), imported
(functional ops lowered by framework/functional_lowering.py) and run on both executors.

What they exercise: TF's gradient of a nested while loop keeps the inner loop's
accumulators (TensorLists) in TensorLists of the outer loop, and a cond's intermediates
inside a loop as optionals in TensorLists; its gradient Case ops return single tensors;
its functional ops declare output shapes more specific than tensorweave's shape
functions infer (zeros of a variable's shape, values popped from lists); a resource
variable's handle is a loop variable of the lowered loop. The graphs are
tests/fixtures/tf2_functional/{nested_loop,case,while_in_cond}_grad.pb and
frozen_gru.pb (make_functional_fixtures.py there); the values expected are the ones TF
printed, also NumPy formulas, and tensorweave's own gradients through the imported
graphs are checked against TF's and numerically.
"""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import graph_def_proto as gp
from tensorweave.test import compute_gradient_error

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf2_functional")


def _import(name, **kwargs):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return tf.import_graph_def(gp.parse_graph_def(f.read()), name="", **kwargs)


@pytest.fixture(params=["default", "tagged"])
def executor(request, monkeypatch):
    """Runs a test on the default executor and on the tagged one (TW_EXECUTOR)."""
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param


# --- a cond in a loop in a loop -----------------------------------------------------------
def _nested(x, w):
    """NumPy: for each i, acc goes j = 0..i: + x[i] * w for even j, * x[i] for odd j;
    the sum of the acc**2."""
    total = 0.0
    for i, xi in enumerate(x):
        acc = 0.0
        for j in range(i + 1):
            acc = acc + xi * w if j % 2 == 0 else acc * xi
        total += acc * acc
    return total


def test_nested_loop_gradient_with_lists_of_lists(graph, executor):
    _import("nested_loop_grad.pb")
    # the gradient If in the loops declares scalar outputs that tensorweave's cond does
    # not infer (values popped from lists): they are taken as declared
    grad_if = graph.get_operation_by_name("gradients/while_grad/while_grad_1/gradients/"
                                          "while_grad/while_grad_1/gradients/cond_grad/"
                                          "StatelessIf")
    assert [t.shape.ndims for t in grad_if.outputs] == [1, 0, 0]
    feed = {"x:0": [0.5, 1.0, -0.2], "w:0": 0.7}
    with tf.Session() as sess:
        out, dx, dw = sess.run(["out:0", "dx:0", "dw:0"], feed)
    assert out == pytest.approx(0.6250439, rel=1e-6)  # TF's values
    assert out == pytest.approx(_nested([0.5, 1.0, -0.2], 0.7), rel=1e-6)
    np.testing.assert_allclose(dx, [0.48999998, 1.9599999, -0.09408], rtol=1e-5)
    assert dw == pytest.approx(1.78584, rel=1e-5)


def test_own_gradient_of_the_imported_nested_loop(graph, sess):
    x = tf.placeholder(tf.float32, [3])
    out, = _import("nested_loop_grad.pb", input_map={"x": x, "w": tf.constant(0.7)},
                   return_elements=["out:0"])
    x0 = np.array([0.5, 1.0, -0.2], np.float32)
    grad, = tf.gradients(out, x)
    np.testing.assert_allclose(sess.run(grad, {x: x0}), [0.48999998, 1.9599999, -0.09408],
                               rtol=1e-5)
    assert compute_gradient_error(x, [3], out, [], x_init_value=x0) < 1e-3


# --- switch_case and case, and their gradient Case ops ---------------------------------
def _case(x):
    """NumPy: y = [x * x, 3 x, -x][min(int(|x|), 2)]; then y * 2 if x < -1, y * x if
    x > 1, else y + 1; and its derivative."""
    k = min(int(abs(x)), 2)
    y, dy = [(x * x, 2 * x), (3 * x, 3.0), (-x, -1.0)][k]
    if x < -1:
        return 2 * y, 2 * dy
    if x > 1:
        return y * x, dy * x + y
    return y + 1, dy


@pytest.mark.parametrize("x, tf_z, tf_dz", [(0.5, 1.25, 1.0), (1.5, 6.75, 9.0),
                                            (-2.5, 5.0, -2.0), (7.0, -49.0, -14.0)])
def test_case_gradient_with_single_outputs(graph, executor, x, tf_z, tf_dz):
    _import("case_grad.pb")
    with tf.Session() as sess:
        z, dz = sess.run(["z:0", "dz:0"], {"x:0": x})
    assert (z, dz) == pytest.approx((tf_z, tf_dz), rel=1e-6)
    assert (z, dz) == pytest.approx(_case(x), rel=1e-6)


# --- a while loop in a cond, and its gradient -------------------------------------------
W_LOOP = np.array([0.8, -0.4], np.float32)


def _loop_in_cond(x, n=3):
    x = np.asarray(x, np.float32)
    if x.sum() <= 0:
        return x * W_LOOP
    v = x
    for _ in range(n):
        v = v * W_LOOP + np.sin(x)
    return v


@pytest.mark.parametrize("x, tf_y, tf_dx, tf_dw", [
    ([0.6, 0.2], [1.6849277, 0.13818869], [8.511644, 0.18817171], [8.829259, 0.03751377]),
    ([-0.6, 0.2], [-0.48000002, -0.08000001], [-0.76800007, 0.064], [0.57600003, -0.032])])
def test_while_in_cond_gradient_with_declared_output_shapes(graph, executor, x, tf_y, tf_dx,
                                                            tf_dw):
    _import("while_in_cond_grad.pb")
    # TF's gradient While starts from zeros of the resource variable's VariableShape:
    # [2] for TF's shape refiner, [?] here; the While's output_shapes say [2]
    grad_while = graph.get_operation_by_name(
        "gradients/cond_grad/If_1/gradients/while_grad/while_grad")
    assert grad_while.outputs[4].shape.as_list() == [2]
    with tf.Session() as sess:
        sess.run("w/Assign")
        y, dx, dw = sess.run(["y:0", "dx:0", "dw:0"], {"x:0": x, "n:0": 3})
    np.testing.assert_allclose(y, tf_y, rtol=1e-6)
    np.testing.assert_allclose(y, _loop_in_cond(x), rtol=1e-6)
    np.testing.assert_allclose(dx, tf_dx, rtol=1e-5)
    np.testing.assert_allclose(dw, tf_dw, rtol=1e-5)


def test_own_gradient_of_the_imported_while_in_cond(graph, sess):
    # the variable's handle is a loop variable of the lowered loop: its gradient (one of
    # the variable's value, as TF's) sums the reads' in every iteration
    x = tf.placeholder(tf.float32, [2])
    y, handle = _import("while_in_cond_grad.pb", input_map={"x": x, "n": tf.constant(3)},
                        return_elements=["y:0", "w:0"])
    dx, dw = tf.gradients(tf.reduce_sum(y * y), [x, handle])
    sess.run("w/Assign")
    for x0, tf_dx, tf_dw in (([0.6, 0.2], [8.511644, 0.18817171], [8.829259, 0.03751377]),
                             ([-0.6, 0.2], [-0.76800007, 0.064], [0.57600003, -0.032])):
        got = sess.run([dx, dw], {x: x0})
        np.testing.assert_allclose(got[0], tf_dx, rtol=1e-5)
        np.testing.assert_allclose(got[1], tf_dw, rtol=1e-5)
        x0 = np.array(x0, np.float32)
        assert compute_gradient_error(x, [2], y, [2], x_init_value=x0) < 1e-3


# --- a frozen tf.nn.dynamic_rnn (GRUCell, sequence_length) ------------------------------
GRU_FEED = {"x:0": [[[1.0, -1.0], [0.5, 2.0], [-0.3, 0.1]], [[0.2, 0.4], [1.5, -0.5], [9, 9]]],
            "seq:0": [3, 2]}
GRU_OUTS = [[[0.47480342, -0.65540916], [0.6935244, -0.63066334], [0.52338934, -0.32168728]],
            [[0.24049833, -0.041819], [0.6108143, -0.6781534], [0.0, 0.0]]]  # TF's values
GRU_STATE = [[0.52338934, -0.32168728], [0.6108143, -0.6781534]]


def test_frozen_dynamic_rnn_outputs_and_names(graph, executor):
    _import("frozen_gru.pb")
    with tf.Session() as sess:
        # "rnn/transpose_1:0" is the batch-major output TF users fetch; the initial
        # state is a loop input they may feed
        outs, state, transposed = sess.run(["outs:0", "state:0", "rnn/transpose_1:0"],
                                           GRU_FEED)
        fed = sess.run("state:0", dict(GRU_FEED, **{"rnn/GRUCellZeroState/zeros:0":
                                                    [[0.5, 0.5], [0.5, 0.5]]}))
    np.testing.assert_allclose(outs, GRU_OUTS, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(transposed, GRU_OUTS, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(state, GRU_STATE, rtol=1e-5)
    np.testing.assert_allclose(fed, [[0.57701546, -0.29440832], [0.71906257, -0.5328759]],
                               rtol=1e-5)
    assert graph.get_operation_by_name("rnn/while").type == "IdentityN"


def test_own_gradient_of_the_frozen_dynamic_rnn(graph, sess):
    # TF 2.21 differentiates no imported While; its values are of the graph it froze
    x = tf.placeholder(tf.float32, [2, 3, 2])
    state, = _import("frozen_gru.pb", input_map={"x": x, "seq": tf.constant([3, 2])},
                     return_elements=["state:0"])
    dx, = tf.gradients(tf.reduce_sum(state), x)
    x0 = np.array(GRU_FEED["x:0"], np.float32)
    np.testing.assert_allclose(sess.run(dx, {x: x0}), [
        [[0.02102626, 0.00592309], [0.03184714, -0.01233712], [-0.05508296, 0.194776]],
        [[-0.03115212, 0.03729488], [-0.04591653, 0.2763525], [0.0, 0.0]]],
        rtol=1e-4, atol=1e-7)
    assert compute_gradient_error(x, [2, 3, 2], state, [2, 2], x_init_value=x0) < 1e-3
