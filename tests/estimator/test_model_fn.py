"""tf.estimator.ModeKeys and EstimatorSpec: the fields each mode needs and the checks
of their types and graphs. Expected error classes and messages are what TensorFlow 2.15
(tensorflow-estimator 2.15) raised for the same calls."""
import pytest

import tensorweave as tf

M = tf.estimator.ModeKeys
Spec = tf.estimator.EstimatorSpec

_FOREIGN_GRAPH = (
    '{0} with "{1}" must be from the default graph. Possible causes of this error '
    'include: \n\n1) {0} was created outside the context of the default graph.\n\n'
    '2) The object passed through to EstimatorSpec was not created in the most recent '
    'call to "model_fn".')


def test_mode_keys_are_tfs_strings():
    assert (M.TRAIN, M.EVAL, M.PREDICT) == ("train", "eval", "infer")


@pytest.fixture
def parts(graph):
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0, name="foreign")
    return dict(loss=tf.constant(1.0, name="loss"), op=tf.no_op(name="train"),
                pred=tf.constant([[1.0]], name="pred"), foreign=foreign)


@pytest.mark.parametrize("mode, kwargs, message", [
    (M.TRAIN, dict(train_op="op"), "Missing loss."),
    (M.TRAIN, dict(loss="loss"), "Missing train_op."),
    (M.EVAL, dict(), "Missing loss."),
    (M.PREDICT, dict(), "Missing predictions."),
])
def test_a_field_the_mode_needs_is_missing(parts, mode, kwargs, message):
    with pytest.raises(ValueError) as e:
        Spec(mode, **{k: parts[v] for k, v in kwargs.items()})
    assert str(e.value) == message


def test_fields_of_the_wrong_type_raise_tfs_type_errors(parts):
    loss, op = parts["loss"], parts["op"]
    cases = [
        (dict(mode=M.EVAL, loss=1.0), "loss must be Tensor, given: 1.0"),
        (dict(mode=M.TRAIN, loss=loss, train_op="x"),
         "train_op must be Operation or Tensor, given: x"),
        (dict(mode=M.PREDICT, predictions="x"), "predictions must be Tensor, given: x"),
        (dict(mode=M.PREDICT, predictions={"a": 1}), "predictions[a] must be Tensor, given: 1"),
        (dict(mode=M.EVAL, loss=loss, eval_metric_ops=[1]),
         "eval_metric_ops must be a dict, given: [1]"),
        (dict(mode=M.EVAL, loss=loss, evaluation_hooks=["x"]),
         "All hooks must be SessionRunHook instances, given: x"),
        (dict(mode=M.TRAIN, loss=loss, train_op=op, training_hooks=[1]),
         "All hooks must be SessionRunHook instances, given: 1"),
        (dict(mode=M.EVAL, loss=loss, scaffold="x"),
         "scaffold must be tf.train.Scaffold. Given: x"),
        (dict(mode=M.PREDICT, predictions=parts["pred"], export_outputs={"a": 1}),
         "Values in `export_outputs` must be ExportOutput objects, received: {'a': 1}."),
        (dict(mode=M.PREDICT, predictions=parts["pred"], export_outputs=[1]),
         "`export_outputs` must be dict, received: [1]."),
    ]
    for kwargs, message in cases:
        with pytest.raises(TypeError) as e:
            Spec(**kwargs)
        assert str(e.value) == message


def test_metric_values_must_be_pairs(parts):
    loss, op = parts["loss"], parts["op"]
    with pytest.raises(TypeError) as e:
        Spec(M.EVAL, loss=loss, eval_metric_ops={"m": loss})
    assert str(e.value) == ("Values of eval_metric_ops must be (metric_value, update_op) "
                            "tuples, given: %s for key: m" % loss)
    with pytest.raises(TypeError, match="^Values of eval_metric_ops must be"):
        Spec(M.EVAL, loss=loss, eval_metric_ops={"m": (loss, op, op)})
    spec = Spec(M.EVAL, loss=loss, eval_metric_ops={"m": (loss, op)})
    assert spec.eval_metric_ops == {"m": (loss, op)}



def test_keras_metrics_become_value_and_update_pairs(parts):
    """TF 2.15: a Keras Metric in eval_metric_ops becomes (result(), its update op) and
    its variables join LOCAL_VARIABLES and METRIC_VARIABLES."""
    metric = tf.keras.metrics.Mean(name="mm")
    update = metric.update_state(tf.constant([1.0, 3.0]))
    spec = Spec(M.EVAL, loss=parts["loss"], eval_metric_ops={"m": metric})
    value, update_op = spec.eval_metric_ops["m"]
    assert update_op is update
    assert isinstance(value, tf.Tensor)
    for key in (tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.METRIC_VARIABLES):
        assert set(map(id, metric.variables)) <= set(map(id, tf.get_collection(key)))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update_op)
        assert sess.run(value) == 2.0


def test_a_keras_metric_never_updated_is_refused(parts):
    with pytest.raises(ValueError) as e:
        Spec(M.EVAL, loss=parts["loss"], eval_metric_ops={"m": tf.keras.metrics.Mean()})
    assert str(e.value) == 'Please call update_state(...) on the "mean" metric'


def test_loss_must_be_a_scalar_and_one_element_is_reshaped(parts):
    two = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError) as e:
        Spec(M.EVAL, loss=two)
    assert str(e.value) == "Loss must be scalar, given: %s" % two
    assert Spec(M.EVAL, loss=tf.constant([1.0])).loss.shape.as_list() == []
    assert Spec(M.EVAL, loss=tf.constant(1)).loss.dtype == tf.int32


def test_tensors_from_another_graph_are_refused(parts):
    foreign = parts["foreign"]
    with pytest.raises(ValueError) as e:
        Spec(M.EVAL, loss=foreign)
    assert str(e.value) == _FOREIGN_GRAPH.format("loss", "foreign:0")
    with pytest.raises(ValueError) as e:
        Spec(M.PREDICT, predictions={"p": foreign})
    assert str(e.value) == _FOREIGN_GRAPH.format("prediction values", "p: foreign:0")
    with pytest.raises(ValueError) as e:
        Spec(M.EVAL, loss=parts["loss"], eval_metric_ops={"m": (foreign, parts["op"])})
    assert str(e.value) == _FOREIGN_GRAPH.format("eval_metric_ops", "m: foreign:0")


def test_defaults_of_each_mode(parts):
    loss, op, pred = parts["loss"], parts["op"], parts["pred"]
    spec = Spec(M.EVAL, loss=loss)
    assert spec.predictions == {} and spec.eval_metric_ops == {}
    assert spec.export_outputs is None and spec.training_hooks == ()
    assert isinstance(spec.scaffold, tf.train.Scaffold)
    train = Spec(M.TRAIN, loss=loss, train_op=op)
    assert train.train_op is op and train.export_outputs is None
    # a Tensor is a valid train_op; a loss is accepted in PREDICT
    assert Spec(M.TRAIN, loss=loss, train_op=loss).train_op is loss
    assert Spec(M.PREDICT, predictions=pred, loss=loss).loss is loss
    predict = Spec(M.PREDICT, predictions={"p": pred})
    assert list(predict.export_outputs) == ["serving_default"]
    output = predict.export_outputs["serving_default"]
    assert isinstance(output, tf.estimator.export.PredictOutput)
    assert output.outputs == {"p": pred}


def test_replace_keeps_the_mode(parts):
    spec = Spec(M.TRAIN, loss=parts["loss"], train_op=parts["op"])
    with pytest.raises(ValueError, match="^mode of EstimatorSpec cannot be changed.$"):
        spec._replace(mode=M.EVAL)
    replaced = spec._replace(predictions={"p": parts["pred"]})
    assert replaced.predictions == {"p": parts["pred"]} and replaced.loss is parts["loss"]
    with pytest.raises(ValueError, match="^Missing train_op.$"):
        spec._replace(train_op=None)
