"""examples/tf1_program.py: a TF1 program (tf.app, tf.flags, MonitoredTrainingSession)
run in a subprocess; its event files and checkpoints are checked here."""
import glob
import os
import subprocess
import sys

import numpy as np

import tensorweave as tf

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "tf1_program.py")


def test_tf1_program_trains_writes_summaries_and_checkpoints(tmp_path):
    train_dir = str(tmp_path / "train")
    out = subprocess.run([sys.executable, PROGRAM, "--train_dir=" + train_dir,
                          "--steps=60", "--learning_rate=0.5", "--dataset=synthetic"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Test accuracy after 60 steps" in out.stderr

    events = [e for f in sorted(glob.glob(os.path.join(train_dir, "events.out.tfevents.*")))
              for e in tf.train.summary_iterator(f)]
    losses = [(e.step, v.simple_value) for e in events if e.WhichOneof("what") == "summary"
              for v in e.summary.value if v.tag == "loss"]
    steps = [s for s, _ in losses]
    # save_summaries_steps=10 (TensorFlow, whose step reads race with the increment,
    # writes at 1, 10, 19, ...; tensorweave at 1, 11, 21, ...).
    assert steps[0] == 1 and steps[-1] <= 60 and len(steps) >= 6
    assert set(np.diff(steps)) <= {9, 10}
    values = np.array([v for _, v in losses])
    assert values[0] > 1.5 and values[-1] < values[0] / 3
    tags = {v.tag for e in events if e.WhichOneof("what") == "summary"
            for v in e.summary.value}
    assert {"loss", "accuracy_1", "logits_1"} <= tags
    assert any(e.WhichOneof("what") == "graph_def" for e in events)

    with open(os.path.join(train_dir, "result.txt")) as f:
        assert f.read().startswith("step 60 test_accuracy ")

    # The last checkpoint restores into a fresh graph, with the trained global step.
    latest = tf.train.latest_checkpoint(train_dir)
    assert latest == os.path.join(train_dir, "model.ckpt-60")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(latest + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, latest)
            step = sess.run(tf.train.get_global_step())
            [kernel_var] = [v for v in tf.global_variables() if v.op.name == "hidden/kernel"]
            kernel = sess.run(kernel_var)
    assert step == 60
    np.testing.assert_array_equal(kernel, tf.train.load_variable(train_dir, "hidden/kernel"))
    assert kernel.shape == (64, 32) and kernel.dtype == np.float32
