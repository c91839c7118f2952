"""Dataset.from_generator with an `output_signature` holding tf.SparseTensorSpec and
tf.RaggedTensorSpec (data/generator_specs.py), alone or nested with tf.TensorSpecs; and
signatures of no component. The values, element specs, error classes and messages are
TensorFlow 2.21's (compat.v1, graph mode) for the same programs."""
import collections

import numpy as np
import pytest

import tensorweave as tf

SV = tf.SparseTensorValue
RV = tf.ragged.RaggedTensorValue
SPARSE = tf.SparseTensorSpec([None], tf.float32)
RAGGED = tf.RaggedTensorSpec([None, None], tf.int64)


def _rv(values, splits, splits_dtype=np.int64):
    return RV(np.array(values), np.array(splits, splits_dtype))


def _dataset(elements, signature):
    return tf.data.Dataset.from_generator(lambda: iter(elements),
                                          output_signature=signature)


def _read(sess, dataset, limit=10):
    """The values of `dataset` (an error's class and message in its place)."""
    nxt = tf.data.make_one_shot_iterator(dataset).get_next()
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.OpError as e:
            out.append((type(e), e.message))
    raise AssertionError("more than %d elements" % limit)


def _sparse_equal(value, indices, values, dense_shape, dtype=np.float32):
    assert isinstance(value, tf.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, indices)
    np.testing.assert_array_equal(value.values, values)
    np.testing.assert_array_equal(value.dense_shape, dense_shape)
    assert value.values.dtype == dtype


def test_sparse_elements(sess):
    ds = _dataset([SV([[0, 1], [1, 0]], [1., 2.], [2, 3]),
                   SV(np.array([[0, 0]]), np.array([5.], np.float32), np.array([1, 4]))],
                  tf.SparseTensorSpec([None, None], tf.float32))
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None, None]), tf.float32)"
    assert ds.output_classes is tf.SparseTensor
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert isinstance(nxt, tf.SparseTensor)
    assert nxt.indices.shape.as_list() == [None, 2]
    assert nxt.dense_shape.shape.as_list() == [2]
    first, second = sess.run(nxt), sess.run(nxt)
    _sparse_equal(first, [[0, 1], [1, 0]], [1., 2.], [2, 3])
    _sparse_equal(second, [[0, 0]], [5.], [1, 4])
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(nxt)


def test_sparse_strings_and_scalars(sess):
    strings = _read(sess, _dataset([SV([[0]], ["ab"], [3]), SV([[0]], [b"c"], [3])],
                                   tf.SparseTensorSpec([None], tf.string)))
    _sparse_equal(strings[0], [[0]], [b"ab"], [3], object)
    _sparse_equal(strings[1], [[0]], [b"c"], [3], object)
    scalar, = _read(sess, _dataset([SV(np.zeros((0, 0), np.int64), [], [])],
                                   tf.SparseTensorSpec([], tf.float32)))
    assert scalar.indices.shape == (0, 0)
    _sparse_equal(scalar, np.zeros((0, 0)), [], np.zeros(0))
    # indices given as int32 are int64 indices
    fed, = _read(sess, _dataset([SV(np.array([[0]], np.int32), [1.], np.array([3], np.int32))],
                                SPARSE))
    _sparse_equal(fed, [[0]], [1.], [3])


def test_ragged_elements(sess):
    ds = _dataset([_rv([1, 2, 3], [0, 2, 3]), _rv([4], [0, 0, 1])], RAGGED)
    assert repr(ds.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)"
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert isinstance(nxt, tf.RaggedTensor) and nxt.dtype == tf.int64
    assert sess.run(nxt).to_list() == [[1, 2], [3]]
    assert sess.run(nxt).to_list() == [[], [4]]


def test_ragged_rank_two_inner_dims_and_int32_splits(sess):
    rank2 = _read(sess, _dataset([RV(_rv([1., 2, 3], [0, 1, 3]), np.array([0, 2, 2]))],
                                 tf.RaggedTensorSpec([None, None, None], tf.float64)))
    assert rank2[0].to_list() == [[[1.0], [2.0, 3.0]], []]
    inner = _read(sess, _dataset([_rv([[1, 2], [3, 4], [5, 6]], [0, 2, 3])],
                                 tf.RaggedTensorSpec([None, None, 2], tf.int64,
                                                     ragged_rank=1)))
    assert inner[0].to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    spec = tf.RaggedTensorSpec([None, None], tf.int64, row_splits_dtype=tf.int32)
    ds = _dataset([_rv([1, 2, 3], [0, 2, 3], np.int32)], spec)
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert nxt.row_splits.dtype == tf.int32
    value = sess.run(nxt)
    assert value.to_list() == [[1, 2], [3]] and value.row_splits.dtype == np.int32
    strings = _read(sess, _dataset([_rv(["a", "b"], [0, 1, 2])],
                                   tf.RaggedTensorSpec([None, None], tf.string)))
    assert strings[0].to_list() == [[b"a"], [b"b"]]


def test_mixed_structures(sess):
    sv, rv = SV([[1]], [2.], [3]), _rv([1, 2, 3], [0, 2, 3])
    signature = (tf.TensorSpec([], tf.int64, name="x"), SPARSE, RAGGED)
    ds = _dataset([(1, sv, rv), (np.int64(2), sv, rv)], signature)
    assert repr(ds.element_spec) == (
        "(TensorSpec(shape=(), dtype=tf.int64, name='x'), SparseTensorSpec(TensorShape("
        "[None]), tf.float32), RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, "
        "tf.int64))")
    for k, (x, sparse, ragged) in enumerate(_read(sess, ds), 1):
        assert x == k and x.dtype == np.int64
        _sparse_equal(sparse, [[1]], [2.], [3])
        assert ragged.to_list() == [[1, 2], [3]]
    keyed, = _read(sess, _dataset([{"a": sv, "b": [1., 2.]}],
                                  {"b": tf.TensorSpec([None], tf.float32), "a": SPARSE}))
    np.testing.assert_array_equal(keyed["b"], np.array([1., 2.], np.float32))
    _sparse_equal(keyed["a"], [[1]], [2.], [3])
    pair = collections.namedtuple("pair", "x y")
    named, = _read(sess, _dataset([pair(1, (sv, rv))],
                                  pair(tf.TensorSpec([], tf.int32), (SPARSE, RAGGED))))
    assert type(named) is pair and named.x == 1
    assert named.y[1].to_list() == [[1, 2], [3]]


def test_composite_elements_through_transformations(sess):
    batched, = _read(sess, _dataset([SV([[1]], [2.], [3]), SV([[0], [2]], [1., 3.], [4])],
                                    SPARSE).batch(2))
    _sparse_equal(batched, [[0, 1], [1, 0], [1, 2]], [2., 1., 3.], [2, 4])
    ragged = _dataset([_rv([1, 2, 3], [0, 2, 3]), _rv([4], [0, 0, 1])], RAGGED)
    assert repr(ragged.batch(2).element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None, None]), tf.int64, 2, tf.int64)"
    assert _read(sess, ragged.batch(2))[0].to_list() == [[[1, 2], [3]], [[], [4]]]
    lengths = _read(sess, ragged.map(lambda r: r.row_lengths()))
    assert [v.tolist() for v in lengths] == [[2, 1], [0, 1]]
    rows = _read(sess, ragged.unbatch())
    assert [v.tolist() for v in rows] == [[1, 2], [3], [], [4]]


S_INT_SPEC = "SparseTensorSpec(TensorShape([None]), tf.float32)"
MISMATCHES = [  # (yielded, signature, TF's message after "TypeError: `generator` ")
    (SV([[0]], [1], [3]), SPARSE,
     "yielded an element of SparseTensorSpec(TensorShape([3]), tf.int32) where an element "
     "of %s was expected." % S_INT_SPEC),
    (SV(np.array([[0]]), np.array([1.0]), np.array([3])), SPARSE,
     "yielded an element of SparseTensorSpec(TensorShape([3]), tf.float64) where an "
     "element of %s was expected." % S_INT_SPEC),
    (SV([[0, 0]], [1.], [3, 3]), SPARSE,
     "yielded an element of SparseTensorSpec(TensorShape([3, 3]), tf.float32) where an "
     "element of %s was expected." % S_INT_SPEC),
    (np.array([1., 2.]), SPARSE,
     "yielded an element that did not match the expected structure. The expected "
     "structure was %s, but the yielded element was [1. 2.]." % S_INT_SPEC),
    (([[0]], [1.], [3]), SPARSE,
     "yielded an element that did not match the expected structure. The expected "
     "structure was %s, but the yielded element was ([[0]], [1.0], [3])." % S_INT_SPEC),
    (SV([[0.5]], [1.], [3]), SPARSE,
     "yielded an element that did not match the expected structure. The expected "
     "structure was %s, but the yielded element was SparseTensorValue(indices=[[0.5]], "
     "values=[1.0], dense_shape=[3])." % S_INT_SPEC),
    (_rv([1, 2, 3], [0, 2, 3], np.int32), RAGGED,
     "yielded an element of RaggedTensorSpec(TensorShape([2, None]), tf.int64, 1, "
     "tf.int32) where an element of RaggedTensorSpec(TensorShape([None, None]), tf.int64, "
     "1, tf.int64) was expected."),
    ([[1, 2], [3]], tf.RaggedTensorSpec([None, None], tf.int32),
     "yielded an element that did not match the expected structure. The expected "
     "structure was RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64), "
     "but the yielded element was [[1, 2], [3]]."),
    ([[1, 2], [3, 4]], tf.RaggedTensorSpec([None, None], tf.int32),
     "yielded an element of TensorSpec(shape=(2, 2), dtype=tf.int32, name=None) where an "
     "element of RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64) was "
     "expected."),
    (_rv([1., 2, 3], [0, 1, 3]), tf.RaggedTensorSpec([None, None, None], tf.float64),
     "yielded an element of RaggedTensorSpec(TensorShape([2, None]), tf.float64, 1, "
     "tf.int64) where an element of RaggedTensorSpec(TensorShape([None, None, None]), "
     "tf.float64, 2, tf.int64) was expected."),
    (_rv([1, 2, 3], [0, 1, 2, 3]), tf.RaggedTensorSpec([2, None], tf.int64),
     "yielded an element of RaggedTensorSpec(TensorShape([3, None]), tf.int64, 1, "
     "tf.int64) where an element of RaggedTensorSpec(TensorShape([2, None]), tf.int64, 1, "
     "tf.int64) was expected."),
    ((1.5, SV([[1]], [2.], [3])), (tf.TensorSpec([], tf.int64), SPARSE),
     "yielded an element that did not match the expected structure. The expected "
     "structure was (TensorSpec(shape=(), dtype=tf.int64, name=None), %s), but the "
     "yielded element was (1.5, SparseTensorValue(indices=[[1]], values=[2.0], "
     "dense_shape=[3]))." % S_INT_SPEC),
    ((5, SV([[1]], [2.], [3])), (tf.TensorSpec([], tf.string), SPARSE),
     "yielded an element that did not match the expected structure. The expected "
     "structure was (TensorSpec(shape=(), dtype=tf.string, name=None), %s), but the "
     "yielded element was (5, SparseTensorValue(indices=[[1]], values=[2.0], "
     "dense_shape=[3]))." % S_INT_SPEC),
    (([1, 2], SV([[1]], [2.], [3])), (tf.TensorSpec([3], tf.int32), SPARSE),
     "yielded an element of (TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
     "SparseTensorSpec(TensorShape([3]), tf.float32)) where an element of (TensorSpec("
     "shape=(3,), dtype=tf.int32, name=None), %s) was expected." % S_INT_SPEC),
    ([1, SV([[1]], [2.], [3])], (tf.TensorSpec([], tf.int32), SPARSE),
     "yielded an element that did not match the expected structure. The expected "
     "structure was (TensorSpec(shape=(), dtype=tf.int32, name=None), %s), but the "
     "yielded element was [1, SparseTensorValue(indices=[[1]], values=[2.0], "
     "dense_shape=[3])]." % S_INT_SPEC),
    ({"b": [1., 2.], "a": SV([[0, 0]], [1.], [1, 1])},
     {"b": tf.TensorSpec([None], tf.float32), "a": SPARSE},
     "yielded an element of {'b': TensorSpec(shape=(2,), dtype=tf.float32, name=None), "
     "'a': SparseTensorSpec(TensorShape([1, 1]), tf.float32)} where an element of {'b': "
     "TensorSpec(shape=(None,), dtype=tf.float32, name=None), 'a': %s} was expected."
     % S_INT_SPEC),
]


@pytest.mark.parametrize("yielded,signature,message", MISMATCHES)
def test_mismatched_elements_fail_alone(sess, yielded, signature, message):
    # the element fails its get_next with TF's InvalidArgumentError; the generator goes on
    values = _read(sess, _dataset([yielded], signature))
    assert values == [(tf.errors.InvalidArgumentError, "TypeError: `generator` " + message)]


def test_generator_goes_on_after_a_mismatch(sess):
    values = _read(sess, _dataset([SV([[0]], [1], [3]), SV([[0]], [1.5], [3])], SPARSE))
    assert values[0][0] is tf.errors.InvalidArgumentError
    _sparse_equal(values[1], [[0]], [1.5], [3])
    assert len(values) == 2


def test_dense_components_convert_without_casts(sess):
    # convert_to_tensor's rules (TF's eager conversion): NumPy values cast, Python
    # floats do not become ints
    sv = SV([[1]], [2.], [3])
    values = _read(sess, _dataset([(np.array(7), sv), (np.float64(2.0), sv), (True, sv)],
                                  (tf.TensorSpec([], tf.int32), SPARSE)))
    assert [v[0] for v in values] == [7, 2, 1]
    assert all(v[0].dtype == np.int32 for v in values)


def test_invalid_ragged_splits_are_unknown_errors(sess):
    (cls, message), = _read(sess, _dataset([_rv([1, 2, 3], [0, 5, 3])], RAGGED))
    assert cls is tf.errors.UnknownError
    assert message == ("InvalidArgumentError: Invalid ragged splits: ragged splits must be "
                       "monotonically increasing, but ragged_splits[2]=3 is smaller than "
                       "row_splits[1]=5")


@pytest.mark.parametrize("kwargs", [{"output_signature": ()}, {"output_signature": {}},
                                    {"output_types": ()}, {"output_types": {}},
                                    {"output_types": (), "output_shapes": ()}])
def test_signatures_of_no_component_are_type_errors(graph, kwargs):
    with pytest.raises(TypeError, match=r"^Unsupported return value from function passed "
                                        r"to Dataset\.from_generator\(\): "):
        tf.data.Dataset.from_generator(lambda: iter([()]), **kwargs)


@pytest.mark.parametrize("kwargs,structure", [({"output_signature": ((), {})}, "((), {})"),
                                              ({"output_types": ((),)}, "((),)")])
def test_nested_empty_signatures_are_value_errors(graph, kwargs, structure):
    with pytest.raises(ValueError) as info:
        tf.data.Dataset.from_generator(lambda: iter([()]), **kwargs)
    assert str(info.value).startswith(
        "Could not pack sequence. Argument `structure` had 0 elements, but argument "
        "`flat_sequence` had 1 elements. Received structure: %s, flat_sequence: [" % structure)


def test_an_empty_member_next_to_a_component_is_fine(sess):
    values = _read(sess, _dataset([(1, ())], (tf.TensorSpec([], tf.int32), ())))
    assert values == [(1, ())]


def test_other_spec_kinds_are_refused(graph):
    dataset_spec = tf.data.Dataset.range(3).window(2).element_spec
    with pytest.raises(NotImplementedError, match="DatasetSpec.*not supported"):
        tf.data.Dataset.from_generator(lambda: iter([]), output_signature=dataset_spec)
