"""RandomShuffleQueue hands out TF's order: each draw takes position `word % size` (the
next word of Philox(seed, seed2)) and moves the last element into its place. Against
TF 2.21 (`tensorflow.compat.v1`, graph mode), recorded once and written here as literals.
"""
import pytest

import tensorweave as tf

# (op seed, graph seed or None, n, min_after_dequeue): after enqueue_many(range(n)):
# two dequeues, a dequeue_many(3); after a second enqueue_many(range(n)): two dequeues;
# after close: dequeue_up_to(100)
TF_ORDERS = {
    (3, None, 10, 0): ([7, 1], [4, 5, 6], [6, 9], [9, 8, 3, 0, 2, 8, 7, 1, 2, 0, 4, 5, 3]),
    (5, 2, 20, 4): ([19, 11], [1, 7, 13], [14, 9],
                    [12, 11, 18, 4, 12, 16, 18, 2, 17, 0, 15, 15, 7, 10, 1, 3, 3, 17, 5, 4, 0,
                     8, 6, 2, 19, 9, 13, 10, 6, 16, 14, 8, 5]),
    (7, None, 12, 3): ([3, 10], [5, 4, 0], [11, 7],
                       [8, 5, 6, 9, 8, 2, 1, 11, 6, 3, 9, 1, 0, 7, 4, 2, 10]),
}


@pytest.mark.parametrize("case", sorted(TF_ORDERS, key=str), ids=str)
@pytest.mark.parametrize("shapes", [[[]], None])   # fixed-shape slots; rows of any shape
def test_dequeue_order_is_tfs(case, shapes):
    seed, graph_seed, n, min_after_dequeue = case
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        q = tf.RandomShuffleQueue(50, min_after_dequeue, [tf.int32], shapes=shapes, seed=seed)
        enqueue = q.enqueue_many([tf.range(n)])
        value = tf.placeholder(tf.int32, [])
        enqueue_one = q.enqueue([value])
        one = q.dequeue()
        with tf.Session() as sess:
            def fill():
                if shapes:
                    sess.run(enqueue)
                else:   # rows of unknown shape: enqueued one at a time
                    for v in range(n):
                        sess.run(enqueue_one, {value: v})
            fill()
            first = [int(sess.run(one)) for _ in range(2)]
            many = [int(sess.run(one)) for _ in range(3)] if not shapes else \
                sess.run(q.dequeue_many(3)).tolist()
            fill()
            second = [int(sess.run(one)) for _ in range(2)]
            sess.run(q.close())
            rest = [int(sess.run(one)) for _ in range(2 * n - 7)] if not shapes else \
                sess.run(q.dequeue_up_to(100)).tolist()
    assert (first, many, second, rest) == TF_ORDERS[case]
