"""The error of lossy transfer compression on a training run (white paper §5.5).

The Figure 1 MLP of examples/figure1_mlp.py (64-100-10 ReLU network, softmax
cross-entropy, Adagrad 0.1, batch 64, 1500 steps, scikit-learn's digits) trained with its
variables (and Adagrad's accumulators) on CPU:1 and everything else on CPU:0, so every
step sends the weights to CPU:0 and the gradients back to CPU:1. It is trained three
times from the same initial values and batches: without compression, and with
ConfigProto(experimental={'transfer_compression': ...}) 'bfloat16' and 'float16'.
Reports the final training loss (mean of the last 100 steps, and the exact loss on the
full training set), the test accuracy, and how far the final weights are from the
uncompressed run's. Optionally writes an extra-figures JSON for results.py.

Usage: python benchmarks/transfer_compression.py [OUT_JSON]
"""
import os
import sys
import time

import numpy as np

import tensorweave as tf

HIDDEN, STEPS, BATCH = 100, 1500, 64  # as examples/figure1_mlp.py


def build_model():
    """examples/figure1_mlp.build_model with its variables on CPU:1 and its compute on
    CPU:0."""
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        init_w = tf.random_uniform([64, HIDDEN], -0.1, 0.1, seed=1)
        init_w2 = tf.random_uniform([HIDDEN, 10], -0.1, 0.1, seed=2)
    with tf.device("/cpu:1"):
        W = tf.Variable(init_w, name="W")
        b = tf.Variable(tf.zeros([HIDDEN]), name="b")
        W2 = tf.Variable(init_w2, name="W2")
        b2 = tf.Variable(tf.zeros([10]), name="b2")
    with tf.device("/cpu:0"):
        h = tf.nn.relu(tf.matmul(x, W) + b)
        logits = tf.matmul(h, W2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels),
                                          tf.float32))
    return x, labels, loss, accuracy


def data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    return train_test_split(x, digits.target.astype(np.int64), test_size=0.25,
                            random_state=0)


def train(mode: str, x_train, x_test, y_train, y_test) -> dict:
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, labels, loss, accuracy = build_model()
        with tf.device("/cpu:0"):  # the gradients; the updates follow their variables
            train_op = tf.train.AdagradOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
        config = tf.ConfigProto(device_count={"CPU": 2},
                                experimental={"transfer_compression": mode})
        rng = np.random.RandomState(0)
        losses = []
        with tf.Session(config=config) as sess:
            sess.run(init)
            md = tf.RunMetadata()
            t0 = time.perf_counter()
            for step in range(STEPS):
                idx = rng.randint(0, len(x_train), BATCH)
                feed = {x: x_train[idx], labels: y_train[idx]}
                if step == 0:
                    _, lv = sess.run([train_op, loss], feed, run_metadata=md,
                                     options=tf.RunOptions(output_partition_graphs=True))
                else:
                    _, lv = sess.run([train_op, loss], feed)
                losses.append(float(lv))
            seconds = time.perf_counter() - t0
            full_loss = float(sess.run(loss, {x: x_train, labels: y_train}))
            test_acc = float(sess.run(accuracy, {x: x_test, labels: y_test}))
            weights = sess.run(tf.trainable_variables())
    transfers = [n for g in md.partition_graphs for n in g.node if n.op == "_Send"]
    compressed = sum(1 for n in transfers if "_transfer_dtype" in n.attr)
    return {"loss_last100": float(np.mean(losses[-100:])), "train_loss": full_loss,
            "test_accuracy": test_acc, "weights": weights, "seconds": seconds,
            "sends": len(transfers), "compressed_sends": compressed}


def main(out_path=None) -> None:
    x_train, x_test, y_train, y_test = data()
    runs = {mode: train(mode, x_train, x_test, y_train, y_test)
            for mode in ("", "bfloat16", "float16")}
    base = runs[""]
    figures = {"workload": "Figure 1 MLP (64-100-10, Adagrad 0.1, batch %d, %d steps, "
                           "digits), variables on CPU:1, compute on CPU:0" % (BATCH, STEPS)}
    for mode, r in runs.items():
        label = mode or "off"
        drift = max(float(np.max(np.abs(w - w0)) / (np.max(np.abs(w0)) or 1.0))
                    for w, w0 in zip(r["weights"], base["weights"]))
        figures["compression %s" % label] = (
            "final training-set loss %.5f, mean loss of the last 100 steps %.5f, test "
            "accuracy %.4f, %d of %d Sends per step compressed, weights' max deviation "
            "from uncompressed %.2e (relative to the max weight), %.1f s"
            % (r["train_loss"], r["loss_last100"], r["test_accuracy"],
               r["compressed_sends"], r["sends"], drift, r["seconds"]))
        print("%-9s %s" % (label, figures["compression %s" % label]), flush=True)
    if out_path:
        from results import write_extra
        write_extra(out_path, "Lossy transfer compression on a training run (issue #14)",
                    "python benchmarks/transfer_compression.py %s" % out_path, figures)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
