"""TF1 graphs whose reference variables pass through control flow (RefSwitch,
RefEnter, ...) import and run as in TensorFlow: batch normalization with a `training`
placeholder, initialized_value(), an ExponentialMovingAverage applied after the train
op, assigns in a cond branch and in a while loop. The fixture and TF's values come from
tests/fixtures/tf1/make_ref_flow_fixture.py (TF 2.15)."""
import os

import numpy as np

import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")


def test_a_tf_graph_with_references_through_control_flow_trains_as_tfs():
    want = np.load(os.path.join(FIXTURES, "ref_flow_expected.npz"))
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "ref_flow.meta"))
        ops = {op.type for op in g.get_operations()}
        assert not ops & {"RefSwitch", "RefEnter", "RefMerge", "RefExit"}
        train = tf.get_collection("train")[0]
        in_cond, in_loop = tf.get_collection("outs")
        feed = {"x:0": want["x"], "training:0": True}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train, feed)
            for name in ("bn/moving_mean", "bn/moving_variance", "v",
                         "v/ExponentialMovingAverage", "w2"):
                np.testing.assert_allclose(sess.run(name + ":0"), want[name], rtol=1e-6,
                                           err_msg=name)
            np.testing.assert_allclose(sess.run(in_cond, {"training:0": True}),
                                       want["in_cond_true"])
            np.testing.assert_allclose(sess.run(in_cond, {"training:0": False}),
                                       want["in_cond_false"])
            np.testing.assert_allclose(sess.run(in_loop), want["in_loop"])
            np.testing.assert_allclose(sess.run("w:0"), want["w"])
            np.testing.assert_allclose(
                sess.run("bn/batchnorm/add_1:0", {"x:0": want["x"], "training:0": False}),
                want["inference"], rtol=1e-5)
