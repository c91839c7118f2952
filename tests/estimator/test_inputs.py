"""tf.estimator.inputs.numpy_input_fn / pandas_input_fn: queue-fed batches. The batches,
op names and messages expected here are what TensorFlow 2.15 (tensorflow-estimator
2.15, tf.compat.v1 graph mode) gave for the same input_fns."""
import numpy as np
import pytest

import tensorweave as tf

numpy_input_fn = tf.estimator.inputs.numpy_input_fn
X = {"a": np.arange(7.0), "b": np.arange(7, 14).reshape(7, 1)}
Y = np.arange(-7, 0)


def run_batches(input_fn, limit=100):
    """Runs input_fn() in a fresh graph until OutOfRangeError (or `limit` batches)."""
    with tf.Graph().as_default():
        out = input_fn()
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            batches = []
            try:
                while len(batches) < limit:
                    batches.append(sess.run(out))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    return batches


def test_in_order_batches_run_across_epochs_and_end_with_a_partial_one():
    batches = run_batches(numpy_input_fn(X, Y, batch_size=3, num_epochs=2, shuffle=False))
    # TF 2.15: the third batch runs into the second epoch; the last one has 2 rows
    assert [b[0]["a"].tolist() for b in batches] == [
        [0, 1, 2], [3, 4, 5], [6, 0, 1], [2, 3, 4], [5, 6]]
    assert [b[0]["b"][:, 0].tolist() for b in batches] == [
        [7, 8, 9], [10, 11, 12], [13, 7, 8], [9, 10, 11], [12, 13]]
    assert [b[1].tolist() for b in batches] == [
        [-7, -6, -5], [-4, -3, -2], [-1, -7, -6], [-5, -4, -3], [-2, -1]]
    assert batches[0][0]["a"].dtype == np.float64 and batches[0][1].dtype == np.int64


def test_the_graph_tf_builds():
    with tf.Graph().as_default() as g:
        features, target = numpy_input_fn(X, Y, batch_size=3, num_epochs=2,
                                          shuffle=False)()
        assert features["a"].name == "fifo_queue_DequeueUpTo:1"
        assert features["a"].shape.as_list() == [None]
        assert features["b"].shape.as_list() == [None, 1] and features["b"].dtype == tf.int64
        assert target.name == "fifo_queue_DequeueUpTo:3"
        assert [op.name for op in g.get_operations()][:6] == [
            "enqueue_input/fifo_queue", "enqueue_input/Placeholder",
            "enqueue_input/Placeholder_1", "enqueue_input/Placeholder_2",
            "enqueue_input/Placeholder_3", "enqueue_input/fifo_queue_EnqueueMany"]
        assert [s.name for s in g.get_collection(tf.GraphKeys.SUMMARIES)] == [
            "enqueue_input/queue/enqueue_input/fifo_queuefraction_over_0_of_1000_full:0"]
        assert len(g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
        # shuffling without an epoch limit: a RandomShuffleQueue and dequeue_many
        features, target = numpy_input_fn(X, Y, batch_size=3, num_epochs=None,
                                          shuffle=True)()
        assert features["a"].name == "random_shuffle_queue_DequeueMany:1"
        assert features["b"].shape.as_list() == [3, 1] and target.shape.as_list() == [3]
        assert g.get_collection(tf.GraphKeys.SUMMARIES)[1].name == (
            "enqueue_input_1/queue/enqueue_input_1/random_shuffle_queuefraction_over_250_of"
            "_750_full:0")


def test_a_single_array_is_the_features_tensor():
    batches = run_batches(numpy_input_fn(np.arange(5), batch_size=2, num_epochs=1,
                                         shuffle=False))
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]


def test_a_dict_of_labels():
    batches = run_batches(numpy_input_fn(X, {"t1": Y, "t2": Y * 2}, batch_size=4,
                                         num_epochs=1, shuffle=False))
    assert [(b[0]["a"].tolist(), b[1]["t1"].tolist(), b[1]["t2"].tolist())
            for b in batches] == [([0, 1, 2, 3], [-7, -6, -5, -4], [-14, -12, -10, -8]),
                                  ([4, 5, 6], [-3, -2, -1], [-6, -4, -2])]


def test_no_epoch_limit_repeats_forever_in_full_batches():
    batches = run_batches(numpy_input_fn(X, Y, batch_size=3, num_epochs=None,
                                         shuffle=False), limit=4)
    assert [b[1].tolist() for b in batches] == [
        [-7, -6, -5], [-4, -3, -2], [-1, -7, -6], [-5, -4, -3]]


def test_shuffled_epochs_hold_every_row_once_per_epoch():
    batches = run_batches(numpy_input_fn(X, Y, batch_size=3, num_epochs=2, shuffle=True))
    labels = np.concatenate([b[1] for b in batches])
    assert sorted(labels.tolist()) == sorted(Y.tolist() * 2)
    for features, target in batches:  # the columns of a row stay together
        np.testing.assert_array_equal(features["a"] - 7, target)
        np.testing.assert_array_equal(features["b"][:, 0] - 14, target)
    # each thread feeds num_epochs epochs (TF warns about this)
    batches = run_batches(numpy_input_fn(X, Y, batch_size=2, num_epochs=1, shuffle=True,
                                         num_threads=2))
    assert sorted(np.concatenate([b[1] for b in batches]).tolist()) == sorted(Y.tolist() * 2)


def test_in_a_monitored_session_with_checkpoints(tmp_path):
    x = {"a": np.arange(10, dtype=np.float32)}
    with tf.Graph().as_default():
        features, target = numpy_input_fn(x, x["a"] * 2, batch_size=4, num_epochs=3,
                                           shuffle=False)()
        w = tf.Variable(0.0)
        loss = tf.reduce_mean(tf.square(features["a"] * w - target))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        seen = []
        # the checkpoint's meta graph is written with the fed queue runner in the graph
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
            while not sess.should_stop():
                seen.append(sess.run([train, features["a"]])[1].tolist())
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9],
                    [0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-8")


@pytest.mark.parametrize("x, y, error, message", [
    ({}, None, ValueError, "^x cannot be an empty dict$"),
    (np.ones(0), None, ValueError, "^x cannot be an empty array$"),
    ([1, 2], None, TypeError, "^x must be a dict or array; got list$"),
    ({"a": np.ones(3)}, {}, ValueError, "^y cannot be empty dict, use None instead.$"),
    ({"a": np.ones(3), "b": np.ones(3)}, {"b": np.ones(3), "a": np.ones(3)}, ValueError,
     r"^2 duplicate keys are found in both x and y: \{'[ab]', '[ab]'\}$"),
    ({"a": np.ones(3)}, np.ones(4), ValueError,
     r"^Length of tensors in x and y is mismatched. All elements in x and y must have the "
     r"same length.\nShapes in x: \{'a': \(3,\)\}\nShapes in y: \(4,\)\n$"),
    ({"a": np.ones(3)}, {"t": np.ones(4)}, ValueError,
     r"Shapes in x: \{'a': \(3,\)\}\nShapes in y: \{'t': \(4,\)\}\n$"),
    ({"a": np.ones(3), "b": np.ones(2)}, None, ValueError,
     r"Shapes in x: \{'a': \(3,\), 'b': \(2,\)\}\nShapes in y: None\n$"),
])
def test_input_errors_are_tfs(graph, x, y, error, message):
    input_fn = numpy_input_fn(x, y, shuffle=False)  # checked when called, as TF does
    with pytest.raises(error, match=message):
        input_fn()


def test_shuffle_must_be_given():
    with pytest.raises(ValueError) as e:
        numpy_input_fn({"a": np.ones(3)})
    assert str(e.value) == ("shuffle must be provided and explicitly set as boolean (it is "
                            "recommended to set it as True for training); got None")


def test_a_feature_named_like_the_hidden_label_key(graph):
    features, target = numpy_input_fn({"__target_key__": np.ones(3)}, np.ones(3),
                                      shuffle=False)()
    assert list(features) == ["__target_key__"] and target.name == "fifo_queue_DequeueUpTo:2"


def test_pandas_input_fn_without_pandas(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` fails
    with pytest.raises(TypeError) as e:
        tf.estimator.inputs.pandas_input_fn(None, shuffle=False)
    assert str(e.value) == "pandas_input_fn should not be called without pandas installed"


def test_pandas_input_fn_batches():
    import pandas as pd  # a test dependency (pyproject's "test" extra)
    x = pd.DataFrame({"a": np.arange(5.0), "b": np.arange(5, 10)}, index=np.arange(5))
    y = pd.Series(np.arange(-5, 0))
    batches = run_batches(tf.estimator.inputs.pandas_input_fn(
        x, y, batch_size=2, num_epochs=1, shuffle=False))
    assert [(b[0]["a"].tolist(), b[0]["b"].tolist(), b[1].tolist()) for b in batches] == [
        ([0, 1], [5, 6], [-5, -4]), ([2, 3], [7, 8], [-3, -2]), ([4], [9], [-1])]
