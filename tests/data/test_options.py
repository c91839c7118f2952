"""tf.data.Options and Dataset.with_options / options() (data/options.py): the option
tree, type checks, merging and propagation are TensorFlow 2.21's."""
import pytest

import tensorweave as tf

X = tf.data.experimental


def test_defaults_aliases_and_nested_sets():
    o = tf.data.Options()
    assert o.deterministic is None and o.experimental_slack is None
    assert isinstance(o.experimental_optimization, X.OptimizationOptions)
    assert o.experimental_optimization.map_parallelization is None
    assert o.experimental_distribute.auto_shard_policy == X.AutoShardPolicy.AUTO
    o.experimental_deterministic = False  # TF's older name
    assert o.deterministic is False
    o.threading.private_threadpool_size = 3
    assert o.experimental_threading is o.threading
    assert o.experimental_threading.private_threadpool_size == 3
    assert X.ThreadingOptions is tf.data.ThreadingOptions
    o.autotune.autotune_algorithm = X.AutotuneAlgorithm.HILL_CLIMB
    o.experimental_external_state_policy = X.ExternalStatePolicy.FAIL
    assert [m.value for m in X.AutoShardPolicy] == [-1, 0, 1, 2, 3]


@pytest.mark.parametrize("target,name,value,kind", [
    (lambda o: o, "autotune", 1, "AutotuneOptions"),
    (lambda o: o, "framework_type", "x", "list"),
    (lambda o: o, "dataset_name", 1, "str"),
    (lambda o: o, "experimental_slack", 1, "bool"),
    (lambda o: o.autotune, "cpu_budget", 2.0, "int"),
    (lambda o: o.autotune, "enabled", 0, "bool"),
    (lambda o: o.threading, "private_threadpool_size", 2.0, "int"),
    (lambda o: o.experimental_distribute, "auto_shard_policy", 1, "AutoShardPolicy"),
])
def test_values_are_type_checked(target, name, value, kind):
    with pytest.raises(TypeError, match='Property "%s" must be of type .*%s' % (name, kind)):
        setattr(target(tf.data.Options()), name, value)


def test_unknown_options_are_refused():
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options."):
        tf.data.Options().foo = 1
    with pytest.raises(AttributeError, match="no attribute 'foo'"):
        tf.data.Options().foo


def test_merge_later_wins_and_nested_sets_merge():
    a = tf.data.Options()
    a.threading.private_threadpool_size, a.deterministic = 2, False
    b = tf.data.Options()
    b.threading.max_intra_op_parallelism, b.deterministic = 1, True
    m = a.merge(b)
    assert m.deterministic is True
    assert (m.threading.private_threadpool_size, m.threading.max_intra_op_parallelism) == \
        (2, 1)
    assert a.deterministic is False  # merge makes a new set
    assert tf.data.Options() == tf.data.Options() and a == a.merge(tf.data.Options())
    assert a != b
    with pytest.raises(TypeError, match="must be a tf.data.Options"):
        a.merge({"deterministic": True})


def test_datasets_carry_their_options(drain):
    a = tf.data.Options()
    a.deterministic, a.threading.private_threadpool_size = False, 2
    b = tf.data.Options()
    b.deterministic = True
    d = tf.data.Dataset.range(3).with_options(a)
    assert tf.data.Dataset.range(3).options() == tf.data.Options()
    assert d.options() == a and d.map(lambda x: x).batch(2).options() == a
    # a dataset made of others merges theirs, in order
    z = tf.data.Dataset.zip((d, tf.data.Dataset.range(2).with_options(b)))
    assert z.options().deterministic is True
    assert z.options().threading.private_threadpool_size == 2
    assert d.concatenate(tf.data.Dataset.range(2).with_options(b)).options().deterministic
    assert d.with_options(b).options().deterministic is True
    # no option changes the elements (the module docstring says why)
    assert drain(d.map(lambda x: x * 2)) == [0, 2, 4]
