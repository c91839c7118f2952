"""The random shuffle queue's slot storage (queue_resources._ShuffleArrays): rows stay in
their slots and draws move slot numbers, so enqueues reuse scattered slots and the arrays
grow while elements wait. Checked against a plain list run through TF's draw-and-swap."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.data_flow.queue_resources import _draw
from tensorweave.ops.random import philox


def _script(rng, steps):
    """Random enqueue_many/dequeue_many sizes that keep 0 <= size <= 300."""
    script, size, key = [], 0, 0
    for _ in range(steps):
        if size < 40 or (size < 260 and rng.random() < 0.5):
            k = int(rng.integers(1, 300 - size + 1))
            script.append(("enqueue", range(key, key + k)))
            key, size = key + k, size + k
        else:
            k = int(rng.integers(1, size + 1))
            script.append(("dequeue", k))
            size -= k
    return script


@pytest.mark.parametrize("trial", range(3))
def test_interleaved_batches_follow_the_draw_order(graph, trial, swap_remove_order):
    rng = np.random.default_rng(trial)
    q = tf.RandomShuffleQueue(300, 0, [tf.int64, tf.string, tf.float32],
                              shapes=[[], [], [3]], seed=5 + trial)
    seed, seed2 = q.queue_ref.op.get_attr("seed"), q.queue_ref.op.get_attr("seed2")
    keys = tf.placeholder(tf.int64, [None])
    n = tf.placeholder(tf.int32, [])
    enq = q.enqueue_many([keys, tf.as_string(keys), tf.stack(
        [tf.cast(keys, tf.float32), -tf.cast(keys, tf.float32), tf.ones_like(
            tf.cast(keys, tf.float32))], axis=1)])
    deq = q.dequeue_many(n)
    script = _script(rng, 60)
    got = []
    with tf.Session() as sess:
        for kind, arg in script:
            if kind == "enqueue":
                sess.run(enq, {keys: np.array(arg, np.int64)})
                continue
            k, s, f = sess.run(deq, {n: arg})
            assert k.dtype == np.int64 and s.dtype == object and f.dtype == np.float32
            assert k.shape == (arg,) and s.shape == (arg,) and f.shape == (arg, 3)
            assert s.tolist() == [b"%d" % v for v in k.tolist()]
            np.testing.assert_array_equal(f, np.stack([k, -k, np.ones_like(k)], 1))
            got += k.tolist()
        # the drawn strings are no longer referenced by the queue's arrays
        store = sess.run(q.queue_ref).queue._store
        strings = store._arrays[1]
        in_use = set(store._slots)
        assert all(strings[i] is None for i in range(len(strings)) if i not in in_use)
        assert len(in_use) == store.n == sum(
            len(a) if kind == "enqueue" else -a for kind, a in script)
    assert got == swap_remove_order(seed, seed2, script)


def test_draw_swaps_the_last_item_into_the_drawn_place():
    key, counter = philox.key_counter_of_seeds(3, 4)
    items = list("abcdefgh")
    w = philox.words(key, counter, 1).tolist()
    want, rest = [], list(items)
    for i in range(3):
        j = w[i] % len(rest)
        want.append(rest[j])
        rest[j] = rest[-1]
        rest.pop()
    words = philox.WordStream(key, counter)
    assert _draw(words, items, 3) == want
    assert items == rest
    assert _draw(words, items, 0) == [] and items == rest
    # the next draw takes the next word
    assert _draw(words, items, 1) == [rest[w[3] % len(rest)]]
