"""The lowered step tuples run_steps walks (executor.lowered): each kernel gets its
inputs in order whatever their number, on the sequential and the dataflow plans."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import executor


def test_lowered_tuple_gathers_three_or_more_inputs():
    fn, ctx, ins, out, n_out, free, n_in, gather = executor.lowered("f", "c", (4, 0, 2), 7,
                                                                    1, (0,))
    assert (fn, ctx, ins, out, n_out, free, n_in) == ("f", "c", (4, 0, 2), 7, 1, (0,), 3)
    assert gather(["a", "b", "c", "d", "e"]) == ("e", "a", "c")
    for ins in [(), (3,), (3, 1)]:
        step = executor.lowered("f", "c", ins, 0, 1, ())
        assert step[6] == len(ins) and step[7] is None


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_kernels_get_their_inputs_in_order(graph, sess, n):
    xs = [tf.placeholder(tf.float32, [2]) for _ in range(n)]
    stacked = tf.stack(xs[::-1])  # Pack with n inputs, fed in reverse
    total = tf.add_n(xs)
    sliced = tf.strided_slice(xs[0], [1], [2], [1])  # four inputs
    vals = [np.array([k, 10 * k + 1], np.float32) for k in range(n)]
    got = sess.run([stacked, total, sliced], dict(zip(xs, vals)))
    np.testing.assert_array_equal(got[0], np.stack(vals[::-1]))
    np.testing.assert_array_equal(got[1], np.sum(vals, axis=0))
    np.testing.assert_array_equal(got[2], vals[0][1:2])


def test_dataflow_plan_with_a_queue_gets_inputs_in_order(graph, sess):
    q = tf.FIFOQueue(4, [tf.int32, tf.float32, tf.string])
    a, b, c = tf.placeholder(tf.int32, []), tf.placeholder(tf.float32, []), \
        tf.placeholder(tf.string, [])
    enq = q.enqueue([a, b, c])  # an asynchronous kernel with three inputs
    sess.run(enq, {a: 3, b: 1.5, c: b"x"})
    sess.run(enq, {a: 4, b: 2.5, c: b"y"})
    first, second = sess.run(q.dequeue()), sess.run(q.dequeue())
    assert [first[0], first[1], first[2]] == [3, 1.5, b"x"]
    assert [second[0], second[1], second[2]] == [4, 2.5, b"y"]
