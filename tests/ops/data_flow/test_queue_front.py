"""The FIFO queue's front offset (queue_resources.QueueResource._take/_restore): single
dequeues from a large block, then a waiting dequeue_many that gives its elements back
when it times out, keep FIFO order exactly."""
import numpy as np
import pytest

import tensorweave as tf


def test_dequeues_from_one_block_then_a_cancelled_wait_keep_fifo_order(graph):
    q = tf.FIFOQueue(100, [tf.int32, tf.float32], shapes=[[], [2]])
    fill = q.enqueue_many([np.arange(6, dtype=np.int32),
                           np.arange(12, dtype=np.float32).reshape(6, 2)])
    one = q.dequeue()
    many = q.dequeue_many(10)
    rest = q.dequeue_many(4)
    with tf.Session() as sess:
        sess.run(fill)
        a, b = sess.run(one)
        assert a == 0 and b.tolist() == [0.0, 1.0]
        a, b = sess.run(one)
        assert a == 1 and b.tolist() == [2.0, 3.0]
        # takes the 4 left, waits for 6 more, times out: the 4 go back to the front
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(many, options=tf.RunOptions(timeout_in_ms=50))
        assert sess.run(q.size()) == 4
        sess.run(fill)
        a, b = sess.run(rest)
        assert a.tolist() == [2, 3, 4, 5]
        np.testing.assert_array_equal(b, np.arange(4, 12, dtype=np.float32).reshape(4, 2))
        a, _ = sess.run(rest)
        assert a.tolist() == [0, 1, 2, 3]
        assert sess.run(one)[0] == 4
        assert sess.run(q.size()) == 1
