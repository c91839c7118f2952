"""A complete TensorFlow 1.x training program, run unchanged by tensorweave.

It trains a small classifier (64-32-10, ReLU, softmax cross-entropy, SGD) on
scikit-learn's 8x8 handwritten digits (or, without scikit-learn or with
--dataset=synthetic, on a synthetic 10-class problem of the same shape) with the TF1
training loop: tf.app.run and tf.flags, tf.train.MonitoredTrainingSession with hooks
writing checkpoints and summaries into --train_dir, then evaluates the last checkpoint
in a SingularMonitoredSession and writes the result with tf.gfile.

The only TensorFlow-specific line is the import: replace it by
`import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()` to run it on TensorFlow.

Run: python examples/tf1_program.py --train_dir=/tmp/tf1_program --steps=300
"""
import os

import numpy as np

import tensorweave as tf

flags = tf.flags
flags.DEFINE_string("train_dir", "/tmp/tf1_program", "Where checkpoints and summaries go.")
flags.DEFINE_integer("steps", 300, "Training steps (the global step to stop at).")
flags.DEFINE_float("learning_rate", 0.5, "SGD learning rate.")
flags.DEFINE_integer("batch_size", 64, "Examples per step.")
flags.DEFINE_string("dataset", "digits", "'digits' (scikit-learn) or 'synthetic'.")
FLAGS = flags.FLAGS


def load_data(name):
    """(train_x, train_y, test_x, test_y): float32 images in [0, 1], int64 labels."""
    x = y = None
    if name == "digits":
        try:
            from sklearn.datasets import load_digits
            digits = load_digits()
            x, y = digits.data / 16.0, digits.target
        except ImportError:
            tf.logging.warning("scikit-learn is not installed: using synthetic data")
    if x is None:
        rng = np.random.RandomState(0)
        centers = rng.uniform(0, 1, (10, 64))
        y = rng.randint(0, 10, 1800)
        x = np.clip(centers[y] + 0.3 * rng.randn(1800, 64), 0, 1)
    order = np.random.RandomState(1).permutation(len(y))
    x, y = x[order].astype(np.float32), y[order].astype(np.int64)
    split = len(y) * 4 // 5
    return x[:split], y[:split], x[split:], y[split:]


def build_model():
    images = tf.placeholder(tf.float32, [None, 64], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(images, 32, activation=tf.nn.relu, name="hidden",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    logits = tf.layers.dense(hidden, 10, name="logits",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    loss = tf.losses.softmax_cross_entropy(tf.one_hot(labels, 10), logits)
    accuracy, accuracy_update = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(
        loss, global_step=global_step)
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    tf.summary.histogram("logits", logits)
    return images, labels, loss, accuracy, accuracy_update, global_step, train_op


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.gfile.MakeDirs(FLAGS.train_dir)
    train_x, train_y, test_x, test_y = load_data(FLAGS.dataset)
    images, labels, loss, accuracy, accuracy_update, global_step, train_op = build_model()

    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.steps),
             tf.train.NanTensorHook(loss),
             tf.train.LoggingTensorHook({"loss": loss, "step": global_step},
                                        every_n_iter=50)]
    rng = np.random.RandomState(2)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=FLAGS.train_dir, hooks=hooks,
                                           save_summaries_steps=10,
                                           save_checkpoint_steps=100,
                                           log_step_count_steps=100) as sess:
        while not sess.should_stop():
            batch = rng.randint(0, len(train_y), FLAGS.batch_size)
            sess.run([train_op, accuracy_update],
                     feed_dict={images: train_x[batch], labels: train_y[batch]})

    # Evaluate the last checkpoint (restored into a new session).
    with tf.train.SingularMonitoredSession(checkpoint_dir=FLAGS.train_dir) as sess:
        sess.run(accuracy_update, feed_dict={images: test_x, labels: test_y})
        test_accuracy, step = sess.run([accuracy, global_step])
    tf.logging.info("Test accuracy after %d steps: %.4f", step, test_accuracy)
    with tf.gfile.GFile(os.path.join(FLAGS.train_dir, "result.txt"), "w") as f:
        f.write("step %d test_accuracy %.4f\n" % (step, test_accuracy))


if __name__ == "__main__":
    tf.app.run(main)
