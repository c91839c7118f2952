"""tf.data.Dataset's methods that twin a tf.data.experimental function
(data/dataset_methods.py): TF 2.21's signatures, each method's elements against its twin's
and against TF 2.21 graph mode's (the literals, recorded with
`tensorflow.compat.v1` under `disable_eager_execution()`), and TF's errors."""
import inspect

import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset
X = tf.data.experimental
_EMPTY = inspect.Parameter.empty

# inspect.signature of TF 2.21's compat.v1 Dataset methods (dtype's default: tf.int64)
TF_SIGNATURES = {
    "as_numpy_iterator": [],
    "bucket_by_sequence_length": [
        ("element_length_func", _EMPTY), ("bucket_boundaries", _EMPTY),
        ("bucket_batch_sizes", _EMPTY), ("padded_shapes", None), ("padding_values", None),
        ("pad_to_bucket_boundary", False), ("no_padding", False),
        ("drop_remainder", False), ("name", None)],
    "cardinality": [],
    "choose_from_datasets": [("datasets", _EMPTY), ("choice_dataset", _EMPTY),
                             ("stop_on_empty_dataset", True)],
    "counter": [("start", 0), ("step", 1), ("dtype", tf.int64), ("name", None)],
    "from_sparse_tensor_slices": [("sparse_tensor", _EMPTY)],
    "get_single_element": [("name", None)],
    "group_by_window": [("key_func", _EMPTY), ("reduce_func", _EMPTY),
                        ("window_size", None), ("window_size_func", None), ("name", None)],
    "ignore_errors": [("log_warning", False), ("name", None)],
    "rebatch": [("batch_size", _EMPTY), ("drop_remainder", False), ("name", None)],
    "rejection_resample": [("class_func", _EMPTY), ("target_dist", _EMPTY),
                           ("initial_dist", None), ("seed", None), ("name", None)],
    "sample_from_datasets": [("datasets", _EMPTY), ("weights", None), ("seed", None),
                             ("stop_on_empty_dataset", False),
                             ("rerandomize_each_iteration", None)],
    "scan": [("initial_state", _EMPTY), ("scan_func", _EMPTY), ("name", None)],
    "sparse_batch": [("batch_size", _EMPTY), ("row_shape", _EMPTY), ("name", None)],
    "take_while": [("predicate", _EMPTY), ("name", None)],
    "unique": [("name", None)],
}
TF_STATIC = {"choose_from_datasets", "counter", "from_sparse_tensor_slices",
             "sample_from_datasets"}


@pytest.mark.parametrize("name", sorted(TF_SIGNATURES))
def test_signature_is_tfs(name):
    method = inspect.getattr_static(D, name)
    assert isinstance(method, staticmethod) == (name in TF_STATIC)
    params = list(inspect.signature(getattr(D, name)).parameters.values())
    if name not in TF_STATIC:
        assert params[0].name == "self"
        params = params[1:]
    assert [(p.name, p.default) for p in params] == TF_SIGNATURES[name]


def _values(elements):
    return [np.asarray(e).tolist() for e in elements]


def _same_as_twin(drain, by_method, by_twin, tf_values):
    """The method's elements are its twin's and TF 2.21's."""
    got = _values(drain(by_method))
    assert got == _values(drain(by_twin)) == tf_values
    assert by_method.output_types == by_twin.output_types
    assert by_method.output_shapes == by_twin.output_shapes


def test_as_numpy_iterator_is_eager_only():
    with pytest.raises(RuntimeError) as e:
        D.range(3).as_numpy_iterator()
    assert str(e.value) == ("`tf.data.Dataset.as_numpy_iterator()` is only supported in "
                            "eager mode.")


def test_cardinality(sess):
    r = D.range(6)
    counts = [r.cardinality(), r.repeat().cardinality(),
              r.filter(lambda x: x > 2).cardinality()]
    assert all(c.dtype == tf.int64 and c.shape.as_list() == [] for c in counts)
    assert sess.run(counts) == [6, -1, -2]  # TF 2.21; INFINITE, UNKNOWN
    assert sess.run([X.cardinality(r.repeat()), X.cardinality(r)]) == [
        X.INFINITE_CARDINALITY, 6]


def test_counter(drain):
    _same_as_twin(drain, D.counter(3, 2).take(4), X.Counter(3, 2).take(4), [3, 5, 7, 9])
    down = D.counter(3, -1, dtype=tf.int32).take(3)
    assert down.output_types == tf.int32
    _same_as_twin(drain, down, X.Counter(3, -1, tf.int32).take(3), [3, 2, 1])


def test_choose_from_datasets_stops_on_empty_by_default(drain):
    choices = D.from_tensor_slices(np.array([0, 1, 1, 1, 0, 0, 0], np.int64))

    def inputs():
        return [D.range(3), D.range(10, 12)]
    _same_as_twin(drain, D.choose_from_datasets(inputs(), choices),
                  X.choose_from_datasets(inputs(), choices, stop_on_empty_dataset=True),
                  [0, 10, 11])
    _same_as_twin(drain, D.choose_from_datasets(inputs(), choices,
                                                stop_on_empty_dataset=False),
                  X.choose_from_datasets(inputs(), choices), [0, 10, 11, 1, 2])


def test_sample_from_datasets(drain):
    def inputs():
        return [D.range(3), D.range(10, 13)]
    _same_as_twin(drain, D.sample_from_datasets(inputs(), weights=[0., 1.]),
                  X.sample_from_datasets(inputs(), weights=[0., 1.]), [10, 11, 12])
    seeded = D.sample_from_datasets(inputs(), seed=5)
    assert _values(drain(seeded)) == _values(drain(X.sample_from_datasets(inputs(), seed=5)))
    assert sorted(_values(drain(seeded))) == [0, 1, 2, 10, 11, 12]
    with pytest.raises(ValueError, match=r"`len\(weights\)=1` vs. `len\(datasets\)=2`"):
        D.sample_from_datasets(inputs(), weights=[1.])
    # rerandomize_each_iteration is the method's alone (its orders: test_sampling_orders)
    not_rerandomized = D.sample_from_datasets(inputs(), seed=5, rerandomize_each_iteration=False)
    assert _values(drain(not_rerandomized)) == _values(drain(seeded))
    with pytest.raises(TypeError, match="rerandomize_each_iteration"):
        X.sample_from_datasets(inputs(), seed=5, rerandomize_each_iteration=True)


def test_from_sparse_tensor_slices(drain):
    st = tf.SparseTensor([[0, 1], [2, 0], [2, 2]], [1., 2., 3.], [3, 4])
    rows = D.from_sparse_tensor_slices(st)
    assert rows.output_types == (tf.int64, tf.float32, tf.int64)
    assert [s.as_list() for s in rows.output_shapes] == [[None, 1], [None], [1]]
    got = [[np.asarray(c).tolist() for c in e] for e in drain(rows)]
    assert got == [[[[1]], [1.0], [4]], [[], [], [4]], [[[0], [2]], [2.0, 3.0], [4]]]
    as_sparse = [[v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()]
                 for v in drain(D.from_tensor_slices(st))]
    assert got == as_sparse
    with pytest.raises(TypeError, match="`sparse_tensor` must be a `tf.sparse.SparseTensor`"):
        D.from_sparse_tensor_slices(np.zeros([2, 2]))


def test_get_single_element(sess):
    one = D.from_tensors(np.int64(7))
    assert sess.run([one.get_single_element(), X.get_single_element(one)]) == [7, 7]
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        sess.run(D.range(2).get_single_element())


def _lengths():
    rows = D.from_tensor_slices([[1, 0, 0], [1, 2, 0], [1, 2, 3], [1, 0, 0], [4, 5, 0]])
    return rows.map(lambda x: x[:tf.reduce_sum(tf.cast(x > 0, tf.int32))])


def test_bucket_by_sequence_length(drain):
    def length(x):
        return tf.shape(x)[0]
    by_method = _lengths().bucket_by_sequence_length(length, [2, 3], [2, 2, 2])
    by_twin = _lengths().apply(X.bucket_by_sequence_length(length, [2, 3], [2, 2, 2]))
    _same_as_twin(drain, by_method, by_twin, [[[1], [1]], [[1, 2], [4, 5]], [[1, 2, 3]]])
    assert by_method.output_shapes.as_list() == [None, None]
    with pytest.raises(ValueError, match="bucket_batch_sizes"):
        D.range(3).bucket_by_sequence_length(length, [2], [2])


def test_group_by_window(drain):
    def key(x):
        return x % 2

    def reduce(k, window):
        return window.batch(3)
    _same_as_twin(drain, D.range(10).group_by_window(key, reduce, window_size=3),
                  D.range(10).apply(X.group_by_window(key, reduce, window_size=3)),
                  [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]])
    by_size = D.range(10).group_by_window(key, lambda k, w: w.batch(5),
                                          window_size_func=lambda k: k + 2)
    assert _values(drain(by_size)) == [[0, 2], [1, 3, 5], [4, 6], [8], [7, 9]]
    with pytest.raises(ValueError, match="Either the `window_size` argument or the "
                                         "`window_size_func` argument must be specified."):
        D.range(10).group_by_window(key, reduce)


def _inverses():
    return D.from_tensor_slices([1., 0., 2.]).map(
        lambda x: tf.debugging.check_numerics(1. / x, "bad"))


def test_ignore_errors(drain):
    _same_as_twin(drain, _inverses().ignore_errors(), _inverses().apply(X.ignore_errors()),
                  [1.0, 0.5])
    assert _values(drain(_inverses().ignore_errors(log_warning=True))) == [1.0, 0.5]


def test_rejection_resample(drain):
    def classes():
        return D.from_tensor_slices(np.array([0, 1, 1, 1], np.int64))

    def class_func(x):
        return tf.cast(x, tf.int32)
    by_method = classes().rejection_resample(class_func, [0., 1.],
                                             initial_dist=[0.25, 0.75], seed=3)
    by_twin = classes().apply(X.rejection_resample(class_func, [0., 1.],
                                                   initial_dist=[0.25, 0.75], seed=3))
    # TF 2.21: every class-1 element kept, the class-0 one dropped
    _same_as_twin(drain, by_method, by_twin, [[1, 1], [1, 1], [1, 1]])


def test_scan(drain):
    def step(state, x):
        return state + x, state * 10
    _same_as_twin(drain, D.range(5).scan(np.int64(0), step),
                  D.range(5).apply(X.scan(np.int64(0), step)), [0, 0, 10, 30, 60])
    with pytest.raises(TypeError, match="element types for the new state must match"):
        D.range(3).scan(np.int64(0), lambda s, x: (tf.cast(s, tf.int32), x))


def test_sparse_batch(drain):
    def ramps():
        return D.range(1, 4).map(lambda x: tf.fill([x], x))

    def triples(ds):
        return [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist())
                for v in drain(ds)]
    by_method = ramps().sparse_batch(2, [5])
    assert by_method.output_classes is tf.SparseTensor
    assert by_method.output_shapes.as_list() == [None, 5]
    assert triples(by_method) == triples(ramps().apply(X.dense_to_sparse_batch(2, [5]))) \
        == [([[0, 0], [1, 0], [1, 1]], [1, 2, 2], [2, 5]),
            ([[0, 0], [0, 1], [0, 2]], [3, 3, 3], [1, 5])]
    with pytest.raises(TypeError) as e:
        D.zip((D.range(2), D.range(2))).sparse_batch(2, [1])
    assert str(e.value) == ("`dense_to_sparse_batch` requires an input dataset whose "
                            "elements have a single component, but the given dataset has "
                            "the following component types: (tf.int64, tf.int64).")


def test_take_while(drain):
    _same_as_twin(drain, D.range(10).take_while(lambda x: x < 4),
                  D.range(10).apply(X.take_while(lambda x: x < 4)), [0, 1, 2, 3])
    with pytest.raises(ValueError):
        D.range(3).take_while(lambda x: x)


def test_unique(drain):
    def repeats():
        return D.from_tensor_slices(np.array([3, 1, 3, 2, 1, 5], np.int64))
    _same_as_twin(drain, repeats().unique(), repeats().apply(X.unique()), [3, 1, 2, 5])
    words = D.from_tensor_slices([b"a", b"b", b"a"]).unique()
    assert drain(words) == [b"a", b"b"]
    for dtype in (np.float32, np.uint8):
        with pytest.raises(TypeError) as e:
            D.from_tensor_slices(np.array([1], dtype)).unique()
        assert str(e.value) == (
            "`tf.data.Dataset.unique` does not support type <dtype: '%s'> -- only "
            "`tf.int32`, `tf.int64`, and `tf.string` are supported." % np.dtype(dtype).name)


def test_rebatch(drain):
    batches = D.range(7).batch(4)
    _same_as_twin(drain, batches.rebatch(3), batches.unbatch().batch(3),
                  [[0, 1, 2], [3, 4, 5], [6]])
    kept = batches.rebatch(3, drop_remainder=True)
    assert kept.output_shapes.as_list() == [3]  # TF 2.21's element_spec
    assert _values(drain(kept)) == [[0, 1, 2], [3, 4, 5]]
    pairs = D.zip((D.range(5), D.range(5).map(lambda z: tf.fill([2], z)))).batch(3)
    assert [[np.asarray(c).tolist() for c in e] for e in drain(pairs.rebatch(2))] == [
        [[0, 1], [[0, 0], [1, 1]]], [[2, 3], [[2, 2], [3, 3]]], [[4], [[4, 4]]]]
    with pytest.raises(ValueError) as e:
        D.range(7).rebatch(3)
    assert str(e.value) == (
        "Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset "
        "with scalar elements. Fix the issue by adding the `batch` transformation to the "
        "dataset.")
    # a list of sizes is used in turn (TF 2.21's docstring example)
    assert _values(drain(D.range(8).batch(4).rebatch([2, 1, 1]))) == [
        [0, 1], [2], [3], [4, 5], [6], [7]]
