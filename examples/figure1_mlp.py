"""The Figure 1 program of the TensorFlow white paper, trained for real.

A two-layer ReLU network (64-100-10) with softmax cross-entropy and Adagrad, written
exactly as a TensorFlow 1.x graph-mode program, trained on scikit-learn's handwritten
digits (8x8 images). It reports test accuracy, saves a checkpoint, restores it into a
fresh graph and session, and checks that the restored model scores the same.

Run: `make demo` (or `python examples/figure1_mlp.py` with tensorweave installed).
"""
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import tensorweave as tf

HIDDEN = 100
STEPS = 1500
BATCH = 64


def build_model():
    """The graph of Figure 1: placeholders, two layers, loss, optimizer, initializer."""
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    W = tf.Variable(tf.random_uniform([64, HIDDEN], -0.1, 0.1, seed=1), name="W")
    b = tf.Variable(tf.zeros([HIDDEN]), name="b")
    h = tf.nn.relu(tf.matmul(x, W) + b)
    W2 = tf.Variable(tf.random_uniform([HIDDEN, 10], -0.1, 0.1, seed=2), name="W2")
    b2 = tf.Variable(tf.zeros([10]), name="b2")
    logits = tf.matmul(h, W2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    return x, labels, loss, accuracy


def main() -> int:
    digits = load_digits()
    data = (digits.data / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        data, digits.target.astype(np.int64), test_size=0.25, random_state=0)
    ckpt_dir = tempfile.mkdtemp(prefix="figure1-")

    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, labels, loss, accuracy = build_model()
        train_op = tf.train.AdagradOptimizer(0.1).minimize(loss)
        saver = tf.train.Saver()
        print("graph: %d ops; W: %s, W2: %s" % (
            len(tf.get_default_graph().get_operations()),
            tf.trainable_variables()[0].shape, tf.trainable_variables()[2].shape))
        rng = np.random.RandomState(0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            bar = tqdm(range(STEPS), desc="training", file=sys.stdout, mininterval=0.25)
            for step in bar:
                idx = rng.randint(0, len(x_train), BATCH)
                _, loss_value = sess.run([train_op, loss],
                                         {x: x_train[idx], labels: y_train[idx]})
                if step % 50 == 0:
                    bar.set_postfix(loss="%.4f" % loss_value)
            test_acc = sess.run(accuracy, {x: x_test, labels: y_test})
            path = saver.save(sess, os.path.join(ckpt_dir, "figure1"), global_step=STEPS)
    print("test accuracy: %.4f" % test_acc)
    print("saved checkpoint: %s" % path)

    with tf.Graph().as_default():
        x, labels, loss, accuracy = build_model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))
            restored_acc = sess.run(accuracy, {x: x_test, labels: y_test})
    print("restored accuracy: %.4f" % restored_acc)
    if test_acc <= 0.90:
        print("FAILED: test accuracy %.4f is not above 0.90" % test_acc)
        return 1
    if restored_acc != test_acc:
        print("FAILED: the restored model scores %.4f, the trained one %.4f"
              % (restored_acc, test_acc))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
