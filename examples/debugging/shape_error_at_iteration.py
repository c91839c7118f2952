"""A shape error that happens only at iteration 17 of a loop: the error names the op,
the line that created it, and the loop iteration it failed in."""
import tensorweave as tf


def body(step, total):
    # a data-dependent shape: 4 rows at step 17, 2 rows otherwise
    rows = tf.where(tf.equal(step, 17), 4, 2)
    state = tf.reshape(tf.range(6.0), tf.stack([rows, -1]))
    return step + 1, total + tf.reduce_sum(state)


with tf.name_scope("rnn"):
    _, total = tf.while_loop(lambda step, t: step < 20, body, [0, 0.0])

with tf.Session() as sess:
    try:
        sess.run(total)
    except tf.errors.InvalidArgumentError as e:
        print(type(e).__name__)
        print(e)
