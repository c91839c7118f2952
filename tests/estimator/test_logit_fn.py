"""tf.estimator.experimental.call_logit_fn: the arguments passed by name and the check of
what the logit_fn returns; results and messages are what TensorFlow 2.15
(tensorflow-estimator 2.15) gave for the same calls."""
import numpy as np
import pytest

import tensorweave as tf

call_logit_fn = tf.estimator.experimental.call_logit_fn
RETURN_ERROR = ("logit_fn should return a Tensor or a dictionary mapping strings to "
                "Tensors.  logit_fn returned: ")


def test_passes_only_the_named_arguments(sess):
    got = {}

    def logit_fn(features, mode, config):
        got.update(mode=mode, config=config)
        return features["x"] * 2.0

    logits = call_logit_fn(logit_fn, {"x": tf.constant([1.5])}, "train", {"p": 1}, "CFG")
    assert got == {"mode": "train", "config": "CFG"}
    np.testing.assert_allclose(sess.run(logits), [3.0])

    def dict_logit_fn(features, params):
        return {"a": features["x"] + params["p"]}
    logits = call_logit_fn(dict_logit_fn, {"x": tf.constant([1.0])}, "eval", {"p": 1}, None)
    assert sorted(logits) == ["a"]
    np.testing.assert_allclose(sess.run(logits["a"]), [2.0])


def test_canned_logit_fn(sess):
    logit_fn = tf.estimator.experimental.dnn_logit_fn_builder(
        units=2, hidden_units=[3], feature_columns=[tf.feature_column.numeric_column("x")],
        activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
        batch_norm=False)
    logits = call_logit_fn(logit_fn, {"x": tf.constant([[1.0]])},
                           tf.estimator.ModeKeys.TRAIN, None, None)
    assert logits.shape.as_list() == [1, 2]


@pytest.mark.parametrize("result", ["list", "float value", "int key", "variable"])
def test_other_results_are_refused(graph, result):
    x = tf.constant([1.0])
    returned = {"list": [x], "float value": {"a": 1.0}, "int key": {1: x},
                "variable": None}[result]
    if result == "variable":
        returned = tf.Variable(1.0)
    with pytest.raises(ValueError) as info:
        call_logit_fn(lambda features: returned, {"x": x}, "eval", None, None)
    assert str(info.value) == RETURN_ERROR + str(returned)


def test_logit_fn_without_features_argument(graph):
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'features'"):
        call_logit_fn(lambda feats: feats, {}, "eval", None, None)
