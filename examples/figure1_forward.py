"""The Figure 1 graph of the TensorFlow white paper, run forward.

A two-layer ReLU network (784-100-10) with a softmax cross-entropy loss, written exactly
as a TensorFlow 1.x graph-mode program: placeholders for the batch, variables for the
weights, an initializer, then `Session.run` on fixed data. It prints the static shapes
the graph inferred and the loss of each of a few batches.

Run: `make demo` (or `python examples/figure1_forward.py` with tensorweave installed).
"""
import numpy as np

import tensorweave as tf

BATCH, IN, HIDDEN, OUT = 100, 784, 100, 10


def build():
    x = tf.placeholder(tf.float32, [None, IN], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    W = tf.Variable(tf.random_uniform([IN, HIDDEN], -0.1, 0.1, seed=1), name="W")
    b = tf.Variable(tf.zeros([HIDDEN]), name="b")
    relu = tf.nn.relu(tf.matmul(x, W) + b)
    W2 = tf.Variable(tf.random_uniform([HIDDEN, OUT], -0.1, 0.1, seed=2), name="W2")
    b2 = tf.Variable(tf.zeros([OUT]), name="b2")
    logits = tf.matmul(relu, W2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits), name="loss")
    return x, labels, relu, logits, loss


def main() -> None:
    rng = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        tf.set_random_seed(0)
        x, labels, relu, logits, loss = build()
        print("graph: %d ops" % len(g.get_operations()))
        for t in (x, relu, logits, loss):
            print("  %-28s static shape %s" % (t.name, t.shape))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                data = rng.rand(BATCH, IN).astype(np.float32)
                target = rng.randint(0, OUT, size=BATCH)
                h, out, value = sess.run([relu, logits, loss], {x: data, labels: target})
                print("batch %d: hidden %s, logits %s, loss %.4f (uniform guess: %.4f)"
                      % (step, h.shape, out.shape, value, np.log(OUT)))


if __name__ == "__main__":
    main()
