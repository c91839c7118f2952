"""Names of tf.TensorSpecs in element specs: given by from_generator's `output_signature`
or Optional.empty's spec, kept by the transformations that keep their input's spec,
dropped by those that make a new one and by iterators. Each expectation below is
TensorFlow 2.21's (compat.v1, graph mode) for the same program."""
import pytest

import tensorweave as tf

X = tf.data.experimental
NAMED = ("(TensorSpec(shape=(), dtype=tf.int64, name='a'), "
         "TensorSpec(shape=<unknown>, dtype=tf.float32, name='b'))")
UNNAMED = ("(TensorSpec(shape=(), dtype=tf.int64, name=None), "
           "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None))")


def _named():
    return tf.data.Dataset.from_generator(
        lambda: iter([(1, 2.0)]),
        output_signature=(tf.TensorSpec([], tf.int64, name="a"),
                          tf.TensorSpec(None, tf.float32, name="b")))


def _one(name, shape=()):
    return tf.data.Dataset.from_generator(
        lambda: iter([1]), output_signature=tf.TensorSpec(shape, tf.int64, name=name))


KEEP = {
    "repeat": lambda d: d.repeat(),
    "take": lambda d: d.take(2),
    "skip": lambda d: d.skip(1),
    "shuffle": lambda d: d.shuffle(3),
    "prefetch": lambda d: d.prefetch(1),
    "cache": lambda d: d.cache(),
    "filter": lambda d: d.filter(lambda a, b: True),
    "shard": lambda d: d.shard(2, 0),
    "concatenate": lambda d: d.concatenate(d),
    "with_options": lambda d: d.with_options(tf.data.Options()),
    "ignore_errors": lambda d: d.apply(X.ignore_errors()),
    "take_while": lambda d: d.apply(X.take_while(lambda a, b: True)),
    "assert_cardinality": lambda d: d.apply(X.assert_cardinality(1)),
    "flat_map": lambda d: d.flat_map(lambda a, b: d),
    "group_by_window": lambda d: d.apply(X.group_by_window(lambda a, b: a,
                                                           lambda k, w: w, 2)),
    "sample_from_datasets": lambda d: X.sample_from_datasets([d, d]),
}
DROP = {
    "map": lambda d: d.map(lambda a, b: (a, b)),
    "unbatch": lambda d: d.batch(2).unbatch(),
    "interleave": lambda d: d.interleave(lambda a, b: tf.data.Dataset.from_tensors((a, b))),
    "scan": lambda d: d.apply(X.scan(0, lambda s, e: (s, e))),
}


@pytest.mark.parametrize("transform", sorted(KEEP))
def test_transformations_that_keep_the_spec_keep_its_names(graph, transform):
    assert repr(_named().element_spec) == NAMED
    assert repr(KEEP[transform](_named()).element_spec) == NAMED


@pytest.mark.parametrize("transform", sorted(DROP))
def test_transformations_that_make_a_spec_drop_the_names(graph, transform):
    assert repr(DROP[transform](_named()).element_spec) == UNNAMED


def test_batching_windows_and_nesting(graph):
    assert repr(_named().batch(2).element_spec) == (
        "(TensorSpec(shape=(None,), dtype=tf.int64, name=None), "
        "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None))")
    assert repr(_named().window(2).element_spec) == (
        "(DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([])), "
        "DatasetSpec(TensorSpec(shape=<unknown>, dtype=tf.float32, name=None), "
        "TensorShape([])))")
    assert repr(_named().enumerate().element_spec) == \
        "(TensorSpec(shape=(), dtype=tf.int64, name=None), %s)" % NAMED
    assert repr(tf.data.Dataset.zip((_named(), _one("c"))).element_spec) == \
        "(%s, TensorSpec(shape=(), dtype=tf.int64, name='c'))" % NAMED
    # a dataset returned by a map function, and the datasets flat_map / interleave read
    a = _one("a")
    assert repr(tf.data.Dataset.range(2).map(lambda x: a).element_spec) == \
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name='a'), TensorShape([]))"
    assert repr(tf.data.Dataset.range(2).interleave(lambda x: a).element_spec) == \
        "TensorSpec(shape=(), dtype=tf.int64, name='a')"
    assert repr(tf.data.Dataset.range(2).flat_map(lambda x: a).element_spec) == \
        "TensorSpec(shape=(), dtype=tf.int64, name='a')"


def test_iterators_drop_the_names(graph):
    ds = _named()
    one_shot = tf.data.make_one_shot_iterator(ds)
    assert repr(one_shot.element_spec) == UNNAMED
    assert repr(tf.data.make_initializable_iterator(ds).element_spec) == UNNAMED
    assert repr(one_shot.get_next_as_optional().element_spec) == UNNAMED
    assert repr(X.get_structure(ds)) == NAMED


def test_output_types_signature_has_no_names(graph):
    ds = tf.data.Dataset.from_generator(lambda: iter([1]), tf.int64, [])
    assert repr(ds.element_spec) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"


def test_joining_datasets_keeps_common_names_and_relaxes_shapes(graph):
    assert repr(_one("a").concatenate(_one("a", None)).element_spec) == \
        "TensorSpec(shape=<unknown>, dtype=tf.int64, name='a')"
    assert repr(X.sample_from_datasets([_one("a"), _one("a", None)]).element_spec) == \
        "TensorSpec(shape=<unknown>, dtype=tf.int64, name='a')"
    one, two = tf.data.Dataset.from_tensors([1]), tf.data.Dataset.from_tensors([1, 2])
    assert repr(X.sample_from_datasets([one, two]).element_spec) == \
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None)"
    assert repr(X.choose_from_datasets([one, two], tf.data.Dataset.range(2))
                .element_spec) == "TensorSpec(shape=(None,), dtype=tf.int32, name=None)"


@pytest.mark.parametrize("first,second", [("a", "b"), ("a", None), (None, "a")])
def test_joining_datasets_of_other_names_fails(graph, first, second):
    spec = "TensorSpec(shape=(), dtype=tf.int64, name=%r)"
    with pytest.raises(TypeError) as info:
        _one(first).concatenate(_one(second))
    assert str(info.value) == "Incompatible dataset elements:\n  %s vs.   %s" % (
        spec % first, spec % second)
    with pytest.raises(TypeError) as info:
        X.sample_from_datasets([_one(first), _one(second)])
    assert str(info.value) == (
        "Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
        "element_spec=%s.\nDataset 1 element_spec=%s." % (spec % first, spec % second))


def test_incompatible_element_messages(graph):
    with pytest.raises(TypeError) as info:
        tf.data.Dataset.from_tensors((1, 2)).concatenate(
            tf.data.Dataset.from_tensors((1, 2.0)))
    assert str(info.value) == (
        "Incompatible dataset elements:\n  (TensorSpec(shape=(), dtype=tf.int32, "
        "name=None), TensorSpec(shape=(), dtype=tf.int32, name=None)) vs.   (TensorSpec("
        "shape=(), dtype=tf.int32, name=None), TensorSpec(shape=(), dtype=tf.float32, "
        "name=None))")
    with pytest.raises(TypeError) as info:
        X.sample_from_datasets([tf.data.Dataset.range(3), tf.data.Dataset.from_tensors(1.0)])
    assert str(info.value) == (
        "Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
        "element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None).\nDataset 1 "
        "element_spec=TensorSpec(shape=(), dtype=tf.float32, name=None).")


def test_optional_empty_keeps_the_names(sess):
    spec = {"k": tf.TensorSpec([2], tf.int32, name="kk"),
            "s": tf.SparseTensorSpec([3], tf.int32)}
    empty = X.Optional.empty(spec)
    assert repr(empty.element_spec) == (
        "{'k': TensorSpec(shape=(2,), dtype=tf.int32, name='kk'), "
        "'s': SparseTensorSpec(TensorShape([3]), tf.int32)}")
    assert empty.get_value()["k"].shape.as_list() == [2]
    assert not sess.run(empty.has_value())
    assert repr(X.Optional.from_value(tf.constant(1, name="c")).element_spec) == \
        "TensorSpec(shape=(), dtype=tf.int32, name=None)"


def test_padded_batch_needs_shapes_for_a_component_of_unknown_rank(graph):
    with pytest.raises(ValueError) as info:
        _named().padded_batch(2)
    assert str(info.value) == \
        "You must provide `padded_shapes` argument because component 1 has unknown rank."
    assert repr(_named().padded_batch(2, padded_shapes=([], [None])).element_spec) == (
        "(TensorSpec(shape=(None,), dtype=tf.int64, name=None), "
        "TensorSpec(shape=(None, None), dtype=tf.float32, name=None))")
