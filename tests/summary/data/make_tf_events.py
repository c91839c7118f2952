"""Writes tf_events/ with real TensorFlow (reference only; run with TF's interpreter):

    ~/.cache/tensorweave-bench-tf/bin/python make_tf_events.py

One event file (renamed events.out.tfevents.fixture) holding, at steps 0..2, the
summaries of summary_inputs.build_summaries fed summary_inputs.inputs (the tests feed tensorweave
the same ones), then a SessionLog STOP at step 3.
"""
import os
import shutil
import sys

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from summary_inputs import build_summaries, inputs  # noqa: E402


def main():
    out = os.path.join(HERE, "tf_events")
    shutil.rmtree(out, ignore_errors=True)
    with tf.Graph().as_default():
        ph, merged = build_summaries(tf)
        writer = tf.summary.FileWriter(out, filename_suffix=".tf")
        with tf.Session() as sess:
            for step in range(3):
                feed = {ph[k]: v for k, v in inputs(step).items()}
                writer.add_summary(sess.run(merged, feed), step)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), 3)
        writer.close()
    # one fixed name (TF's holds the time and the host name)
    (name,) = os.listdir(out)
    os.rename(os.path.join(out, name), os.path.join(out, "events.out.tfevents.fixture"))


if __name__ == "__main__":
    main()
