"""tf.data.experimental.from_list and RandomDataset / Dataset.random (data/sources.py):
element specs and errors as TensorFlow 2.21 gives them."""
import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental


def test_from_list_specs_and_elements(drain):
    pairs = X.from_list([(1, "a"), (2, "b")])
    assert pairs.output_types == (tf.int32, tf.string)
    assert pairs.output_shapes == (tf.TensorShape([]), tf.TensorShape([]))
    assert [tuple(e) for e in drain(pairs)] == [(1, b"a"), (2, b"b")]
    with tf.Session() as sess:
        assert sess.run(X.cardinality(pairs)) == 2
    rows = X.from_list([[1, 2], [3, 4]])
    assert rows.output_shapes == tf.TensorShape([2])
    # shapes may differ: the spec is the most specific shape compatible with all
    ragged = X.from_list([[1, 2], [3]])
    assert ragged.output_shapes.as_list() == [None]
    assert [e.tolist() for e in drain(ragged)] == [[1, 2], [3]]
    dicts = X.from_list([{"a": np.zeros((2, 3)), "b": 1}, {"a": np.ones((2, 3)), "b": 2}])
    assert dicts.output_types == {"a": tf.float64, "b": tf.int32}
    got = drain(dicts)
    assert got[1]["a"].tolist() == np.ones((2, 3)).tolist() and got[1]["b"] == 2


def test_from_list_errors():
    with pytest.raises(ValueError, match="`elements` should not be empty"):
        X.from_list([])
    with pytest.raises(ValueError, match="same number of elements"):
        X.from_list([(1, 2), (1,)])
    with pytest.raises(TypeError, match="element 1 has \\['float32'\\] but element 0 has "
                                        "\\['int32'\\]"):
        X.from_list([1, 2.5])


def _values(sess, dataset, n):
    return sess.run(tf.data.make_one_shot_iterator(dataset.take(n).batch(n)).get_next())


def test_random_dataset_values_and_seeds(sess):
    ds = X.RandomDataset(seed=4)
    assert isinstance(ds, tf.data.Dataset)
    assert ds.output_types == tf.int64 and ds.output_shapes == tf.TensorShape([])
    assert sess.run(X.cardinality(ds)) == X.INFINITE_CARDINALITY
    v = _values(sess, ds, 4000)
    # uniform over [0, 2**32), as TF's
    assert v.dtype == np.int64 and 0 <= v.min() and v.max() < 2 ** 32
    assert abs(v.mean() / 2 ** 32 - 0.5) < 0.02 and len(set(v.tolist())) > 3990
    assert (_values(sess, X.RandomDataset(seed=4), 50) == v[:50]).all()
    assert not (_values(sess, X.RandomDataset(seed=5), 50) == v[:50]).all()
    # no seed: a new sequence each time the dataset is made
    assert not (_values(sess, X.RandomDataset(), 50) ==
                _values(sess, X.RandomDataset(), 50)).all()


def _initialized_twice(dataset) -> list:
    """The elements of `dataset` read through an initializable iterator, initialized
    twice in one session: one list for each initialization."""
    it = tf.data.make_initializable_iterator(dataset)
    nxt = it.get_next()
    runs = []
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(it.initializer)
            runs.append([int(sess.run(nxt)) for _ in range(6)])
    return runs


def test_rerandomize_each_iteration(drain):
    same = drain(tf.data.Dataset.random(seed=7).take(3).repeat(2))
    assert same[:3] == same[3:]
    with pytest.warns(UserWarning, match="only supported for repeat-based epochs"):
        rerandomized = tf.data.Dataset.random(seed=7, rerandomize_each_iteration=True)
    first, again = _initialized_twice(rerandomized.take(3).repeat(2))
    # TF 2.21's values (an initializable iterator): each pass takes its seeds from the
    # dataset's, even the first; initialized again, the iterator starts again from pass 0
    assert same == [1992159687, 3200305987, 237021325] * 2
    assert first == again == [3796837372, 101266603, 2298337980, 2134240549, 2631225618,
                              892156681]


def test_rerandomized_random_refuses_a_one_shot_iterator():
    # TF's graph: RandomDatasetV2 reads a DummySeedGenerator, a stateful op that a
    # one-shot iterator cannot capture (TF 2.21's ValueError, when the iterator is made)
    with pytest.warns(UserWarning):
        ds = tf.data.Dataset.random(seed=7, rerandomize_each_iteration=True)
    assert ds._variant.op.type == "RandomDatasetV2"
    assert ds._variant.op.inputs[2].op.type == "DummySeedGenerator"
    with pytest.raises(ValueError, match=r"^Cannot capture a stateful node \(name:"
                       r"DummySeedGenerator, type:DummySeedGenerator\) by value.: A likely "
                       r"cause of this error is that the dataset for which you are calling "
                       r"`make_one_shot_iterator\(\)` captures a stateful object"):
        tf.data.make_one_shot_iterator(ds)
    assert tf.data.Dataset.random(seed=7)._variant.op.type == "RandomDataset"


def test_graph_seed_makes_the_sequence_repeatable():
    def first_values():
        with tf.Graph().as_default():
            tf.set_random_seed(11)
            with tf.Session() as sess:
                return _values(sess, X.RandomDataset(), 20).tolist()
    assert first_values() == first_values()


def test_from_tensor_slices_puts_each_numpy_component_in_the_graph_once():
    # A real program (cs20 07_convnet_mnist) feeding MNIST arrays got each array as two
    # Consts, doubling its .meta and event files; TF builds one Const per component.
    import numpy as np
    import tensorweave as tf
    g = tf.Graph()
    with g.as_default():
        images = np.arange(24, dtype=np.float32).reshape(4, 6)
        ds = tf.data.Dataset.from_tensor_slices((images, np.arange(4))).batch(2)
        consts = [op for op in g.get_operations() if op.type == "Const"]
        big = [op for op in consts if op.outputs[0].shape.as_list() == [4, 6]]
        assert len(big) == 1
        first = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session(graph=g) as sess:
            x, y = sess.run(first)
    np.testing.assert_array_equal(x, images[:2])
    np.testing.assert_array_equal(y, [0, 1])
