"""Variables and initializers as TF 2.21's tf.compat.v1 has them (a probe of TF1 programs):
the orthogonal initializer, batch_scatter_update, get_variable's shape and partition_info
rules, assignments' shape checks, truthiness and error classes of reference-style
variables (made without use_resource=True) and resource variables."""
import numpy as np
import pytest

import tensorweave as tf


# --- tf.orthogonal_initializer ------------------------------------------------------------
def _as_matrix(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, x.shape[-1])


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (3, 3, 4, 5), (2, 3, 8), (1, 7)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal_rows_or_columns_are_orthonormal_times_gain(graph, sess, shape, gain):
    x = sess.run(tf.orthogonal_initializer(gain=gain, seed=3)(list(shape)))
    assert x.shape == shape and x.dtype == np.float32
    m = _as_matrix(x).astype(np.float64)
    rows, cols = m.shape
    gram = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 2, 3)])
def test_orthogonal_is_the_sign_corrected_q_of_a_seeded_normal_matrix(shape):
    # NumPy reference of TF's algorithm, from the normal matrix the same seeds draw
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    flat = (cols, rows) if rows < cols else (rows, cols)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        out = tf.orthogonal_initializer(gain=1.5, seed=11, dtype=tf.float64)(list(shape))
        with tf.Session() as s:
            got = s.run(out)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        a = tf.random_normal(list(flat), dtype=tf.float64, seed=11)
        with tf.Session() as s:
            a = s.run(a)
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    np.testing.assert_allclose(got, 1.5 * q.reshape(shape), atol=1e-12)


def test_orthogonal_is_deterministic_with_seeds_and_a_graph_computation():
    def draw(op_seed):
        with tf.Graph().as_default() as g:
            tf.set_random_seed(1)
            out = tf.orthogonal_initializer(seed=op_seed)([4, 4])
            types = {op.type for op in g.get_operations()}
            with tf.Session() as s:
                return s.run(out), types
    first, types = draw(5)
    assert {"RandomStandardNormal", "Qr", "DiagPart", "Sign", "Reshape"} <= types
    np.testing.assert_array_equal(first, draw(5)[0])
    assert not np.allclose(first, draw(6)[0])


def test_orthogonal_in_get_variable_keras_and_partitioned(graph, sess):
    w = tf.get_variable("w", [5, 3], initializer=tf.orthogonal_initializer())
    k = tf.get_variable("k", [3, 3, 2, 4], initializer=tf.keras.initializers.Orthogonal())
    parts = tf.get_variable("p", [6, 3], initializer=tf.initializers.orthogonal(),
                            partitioner=tf.fixed_size_partitioner(2))
    sess.run(tf.global_variables_initializer())
    for value in [sess.run(w), sess.run(k)] + [sess.run(p) for p in parts]:
        m = _as_matrix(value)
        np.testing.assert_allclose(m.T @ m, np.eye(m.shape[1]), atol=1e-5)
    assert [p.shape.as_list() for p in parts] == [[3, 3], [3, 3]]
    assert tf.orthogonal_initializer(gain=2.0, seed=3).get_config() == {
        "gain": 2.0, "seed": 3, "dtype": "float32"}


def test_orthogonal_dtypes_and_shapes(graph, sess):
    x = sess.run(tf.orthogonal_initializer()([3, 3], dtype=tf.float64))
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.T @ x, np.eye(3), atol=1e-12)
    assert tf.orthogonal_initializer()([4, 2], dtype=tf.float16).dtype == tf.float16
    with pytest.raises(ValueError):  # TF's constructor: floating types only
        tf.orthogonal_initializer(dtype=tf.int32)
    for dtype in (tf.int32, tf.bool, tf.complex64):  # the random op refuses them
        with pytest.raises(TypeError):
            tf.orthogonal_initializer()([3, 3], dtype=dtype)
    for shape in ([3], []):
        with pytest.raises(ValueError, match="at least two-dimensional"):
            tf.orthogonal_initializer()(shape)


# --- tf.batch_scatter_update --------------------------------------------------------------
def _batch_scatter_reference(var, indices, updates):
    """var[i_1, ..., i_n, indices[i_1, ..., i_n, j]] = updates[i_1, ..., i_n, j]."""
    out = var.copy()
    for pos in np.ndindex(*indices.shape):
        out[pos[:-1] + (indices[pos],)] = updates[pos]
    return out


_BATCH_CASES = [
    # var shape, indices, updates' trailing shape
    ((5,), np.array([3, 0]), ()),                                # = scatter_update
    ((4, 3), np.array([2, 0]), (3,)),                            # = scatter_update, rows
    ((3, 5), np.array([[4], [0], [2]]), ()),
    ((2, 3, 4), np.array([[[0, 2], [1, 3], [3, 3]], [[1, 1], [0, 0], [2, 1]]]), ()),
    ((2, 3, 4, 2), np.array([[[0], [3], [1]], [[2], [2], [0]]]), (2,)),
]


@pytest.mark.parametrize("use_resource", [False, True])
@pytest.mark.parametrize("case", range(len(_BATCH_CASES)))
def test_batch_scatter_update_matches_numpy(graph, sess, use_resource, case):
    var_shape, indices, tail = _BATCH_CASES[case]
    start = np.arange(np.prod(var_shape), dtype=np.float32).reshape(var_shape)
    updates = -1.0 - np.arange(indices.size * int(np.prod(tail)),
                               dtype=np.float32).reshape(indices.shape + tail)
    v = tf.Variable(start, use_resource=use_resource)
    out = tf.batch_scatter_update(v, indices, updates)
    assert out.shape == var_shape
    sess.run(v.initializer)
    # a repeated index in one row keeps one of its updates, as scatter_nd_update does
    want = _batch_scatter_reference(start, indices, updates)
    np.testing.assert_array_equal(sess.run(out), want)
    np.testing.assert_array_equal(sess.run(v), want)


@pytest.mark.parametrize("use_resource", [False, True])
def test_batch_scatter_update_method_int64_indices_and_names(graph, sess, use_resource):
    w = tf.Variable(np.zeros([3, 5], np.float32), name="w", use_resource=use_resource)
    by_fn = tf.batch_scatter_update(w, tf.constant([[4], [0], [2]], tf.int64),
                                    [[1.], [2.], [3.]], name="bsu")
    by_method = w.batch_scatter_update(tf.IndexedSlices(tf.constant([[7.], [8.], [9.]]),
                                                        tf.constant([[1], [1], [1]])))
    if not use_resource:  # TF1's names of the new value of a reference variable
        assert by_fn.name == "bsu/ScatterNdUpdate:0"
        assert by_method.name == "ScatterNdUpdate:0"
    sess.run(w.initializer)
    sess.run(by_fn)
    np.testing.assert_array_equal(sess.run(by_method), [[0, 7, 0, 0, 1], [2, 8, 0, 0, 0],
                                                        [0, 9, 3, 0, 0]])


@pytest.mark.parametrize("use_resource", [False, True])
def test_batch_scatter_update_errors(graph, sess, use_resource):
    w = tf.Variable(np.zeros([3, 5], np.float32), use_resource=use_resource)
    with pytest.raises(ValueError, match="unknown shape"):
        tf.batch_scatter_update(w, tf.placeholder(tf.int32), [1.])
    with pytest.raises(ValueError):  # updates must be indices.shape + var.shape[n + 1:]
        tf.batch_scatter_update(w, [[1], [0], [2]], [[1., 2.], [1., 2.], [1., 2.]])
    with pytest.raises(TypeError):  # float indices
        tf.batch_scatter_update(w, [[1.], [0.], [2.]], [[1.], [1.], [1.]])
    # updates of another dtype: TF1's reference op TypeError, a resource ValueError
    with pytest.raises(TypeError if not use_resource else ValueError):
        tf.batch_scatter_update(w, [[1], [0], [2]], tf.constant([[1], [1], [1]]))
    with pytest.raises(AttributeError if not use_resource else TypeError):
        w.batch_scatter_update([[1.]])
    sess.run(w.initializer)
    for bad in ([[5], [0], [0]], [[-1], [0], [0]]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.batch_scatter_update(w, bad, [[1.], [1.], [1.]]))
    ph = tf.placeholder(tf.int32, [None, 1])
    with pytest.raises(tf.errors.InvalidArgumentError):  # batch sizes differ at run time
        sess.run(tf.batch_scatter_update(w, ph, [[1.], [1.], [1.]]), {ph: [[0], [0]]})
    assert not sess.run(w).any()


# --- get_variable: shape and partition_info -----------------------------------------------
def _ones_of_3(shape, dtype=None, partition_info=None):
    return tf.ones([3], dtype)


@pytest.mark.parametrize("use_resource", [False, True])
def test_get_variable_checks_the_initializer_result_against_shape(graph, use_resource):
    with pytest.raises(ValueError):
        tf.get_variable("a", [2], initializer=_ones_of_3, use_resource=use_resource)
    with pytest.raises(ValueError):
        tf.get_variable("b", [3, 1], initializer=_ones_of_3, use_resource=use_resource)
    assert tf.get_variable("c", [3], initializer=_ones_of_3,
                           use_resource=use_resource).shape == (3,)
    # validate_shape=False: TF1's reference variable keeps the given shape, a resource
    # variable still needs a compatible initial value
    if use_resource:
        with pytest.raises(ValueError):
            tf.get_variable("d", [2], initializer=_ones_of_3, validate_shape=False,
                            use_resource=True)
    else:
        assert tf.get_variable("d", [2], initializer=_ones_of_3,
                               validate_shape=False).shape == (2,)


def _no_info(shape, dtype=None):
    return tf.ones(shape, dtype)


def _needs_info(shape, dtype, partition_info):
    # 0 without a partitioner (partition_info None), else 1 + the shard's offset
    if partition_info is None:
        return tf.zeros(shape, dtype)
    return tf.ones(shape, dtype) * (1.0 + partition_info.single_offset(shape))


class _CallNoInfo:
    def __call__(self, shape, dtype=None):
        return tf.ones(shape, dtype)


class _CallWithInfo:
    def __call__(self, shape, dtype=None, partition_info=None):
        return _needs_info(shape, dtype, partition_info)


@pytest.mark.parametrize("use_resource", [False, True])
def test_partition_info_goes_only_to_initializers_that_name_it(graph, sess, use_resource):
    want = {  # the values TF 2.21 gives, flattened
        "no_info": ([1.0] * 8, [1.0] * 8), "needs_info": ([0.0] * 8, [1.0] * 4 + [3.0] * 4),
        "call_no_info": ([1.0] * 8, [1.0] * 8),
        "call_with_info": ([0.0] * 8, [1.0] * 4 + [3.0] * 4)}
    inits = {"no_info": _no_info, "needs_info": _needs_info, "call_no_info": _CallNoInfo(),
             "call_with_info": _CallWithInfo()}
    made = {}
    for key, init in inits.items():
        made[key] = (
            tf.get_variable(key, [4, 2], initializer=init, use_resource=use_resource),
            tf.get_variable(key + "_p", [4, 2], initializer=init, use_resource=use_resource,
                            partitioner=tf.fixed_size_partitioner(2)))
    sess.run(tf.global_variables_initializer())
    for key, (whole, parts) in made.items():
        got = (sess.run(whole).ravel().tolist(),
               sess.run(tf.convert_to_tensor(parts)).ravel().tolist())
        assert got == want[key], key


# --- assignments' shape rules -------------------------------------------------------------
def test_resource_variable_with_a_partial_shape_takes_a_new_leading_dimension(graph, sess):
    w = tf.Variable(tf.zeros([3, 2]), shape=tf.TensorShape([None, 2]), use_resource=True)
    assert w.shape.as_list() == [None, 2]
    assigned = w.assign(tf.ones([5, 2]))
    sess.run(w.initializer)
    assert sess.run(assigned).shape == (5, 2)
    np.testing.assert_array_equal(sess.run(w), np.ones([5, 2]))
    with pytest.raises(ValueError):  # still two columns
        w.assign(tf.ones([5, 3]))


def test_resource_variable_shape_checks_follow_tf(graph, sess):
    ph = tf.placeholder(tf.float32, [None, 2])
    value = tf.placeholder(tf.float32, None)
    full = tf.Variable(tf.zeros([2]), use_resource=True)
    # a fully defined shape is checked at run time, whatever tf.assign's validate_shape
    for op in (full.assign(value), tf.assign(full, value, validate_shape=False)):
        sess.run(full.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(op, {value: np.ones(3)})
        assert sess.run(full).shape == (2,)
    # validate_shape=False keeps the initial value's static shape, and no run-time check
    loose = tf.Variable(tf.zeros([2]), validate_shape=False, use_resource=True)
    assert loose.shape == (2,)
    sess.run(loose.initializer)
    assert sess.run(loose.assign(value), {value: np.ones(4)}).shape == (4,)
    partial = tf.Variable(tf.zeros(tf.shape(ph)), validate_shape=False, use_resource=True)
    assert partial.shape.as_list() == [None, 2]
    with pytest.raises(ValueError):
        tf.assign(partial, tf.ones([5, 7]), validate_shape=False)
    assert partial.assign(tf.ones([5, 2])).shape.as_list() == [None, 2]


def test_reference_style_assign_shapes_follow_tf1(graph, sess):
    ph = tf.placeholder(tf.float32, [None, 2])
    dv = tf.Variable(tf.zeros(tf.shape(ph)), validate_shape=False)
    assert dv.shape.ndims is None
    # TF1's Assign output has the value's shape
    assert tf.assign(dv, tf.ones([5, 7]), validate_shape=False).shape == (5, 7)
    assert dv.assign(tf.ones([5, 2])).shape == (5, 2)
    value = tf.placeholder(tf.float32, None)
    checked = dv.assign(value)
    sess.run(dv.initializer, {ph: np.zeros([3, 2])})
    # a validated assignment keeps a reference variable's current shape (TF1's Assign)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(checked, {value: np.ones([4, 2])})
    assert sess.run(dv).shape == (3, 2)


# --- truthiness, initial values, error classes --------------------------------------------
def test_reference_style_variables_are_truthy(graph):
    v = tf.Variable(1.0)
    step = tf.train.get_or_create_global_step()
    assert bool(v) is True
    assert (1 if step else 0) == 1
    with pytest.raises(TypeError):
        bool(tf.Variable(1.0, use_resource=True))


def test_reference_style_initial_value_needs_a_fully_defined_shape(graph):
    ph = tf.placeholder(tf.float32, [None, 2])
    unknown_rank = tf.placeholder_with_default(tf.zeros([2]), None)
    for make in (lambda: tf.Variable(tf.zeros(tf.shape(ph))),
                 lambda: tf.Variable(unknown_rank),
                 lambda: tf.Variable(ph),
                 lambda: tf.Variable(lambda: tf.zeros(tf.shape(ph))),
                 lambda: tf.Variable(tf.zeros(tf.shape(ph)), shape=[None, 2]),
                 lambda: tf.get_variable("g", initializer=tf.zeros(tf.shape(ph)))):
        with pytest.raises(ValueError, match="shape specified"):
            make()
    assert tf.Variable(tf.zeros(tf.shape(ph)), use_resource=True).shape.as_list() == [None, 2]
    assert tf.get_variable("r", initializer=tf.zeros(tf.shape(ph)),
                           use_resource=True).shape.as_list() == [None, 2]
    assert tf.Variable(ph, validate_shape=False).shape.ndims is None


def test_assigning_another_dtype_is_a_type_error_for_reference_style(graph):
    ints = tf.constant([1, 2])
    ref = tf.Variable([1.0, 2.0])
    res = tf.Variable([1.0, 2.0], use_resource=True)
    for update in (lambda v: v.assign(ints), lambda v: tf.assign(v, ints),
                   lambda v: v.assign_add(ints), lambda v: tf.assign_sub(v, ints),
                   lambda v: tf.scatter_update(v, [0], tf.constant([1])),
                   lambda v: tf.scatter_nd_update(v, [[0]], tf.constant([1]))):
        with pytest.raises(TypeError):
            update(ref)
        with pytest.raises(ValueError):
            update(res)
    assert ref.assign(np.array([1, 2])).dtype == tf.float32  # values still convert


# --- synchronization / aggregation arguments -----------------------------------------------
@pytest.mark.parametrize("kwargs, what", [({"aggregation": "sum"}, "aggregation"),
                                          ({"synchronization": 9}, "synchronization")])
def test_bad_sync_or_aggregation_names_the_variable(graph, kwargs, what):
    with pytest.raises(ValueError, match="Invalid variable %s mode: .* for variable: v$" % what):
        tf.get_variable("v", [1], **kwargs)


def test_sync_and_aggregation_accept_members_and_values(graph):
    v = tf.get_variable("v", [1], synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.SUM.value)
    assert v.aggregation is tf.VariableAggregation.SUM and not v.trainable


def test_initializer_and_explicit_dtype_mismatch_message(graph):
    # TF 2.21's message, dtypes as str() shows them
    with pytest.raises(ValueError, match="Initializer type '<dtype: 'float32'>' and explicit "
                                         "dtype '<dtype: 'int32'>' don't match."):
        tf.get_variable("v", initializer=tf.constant([1.0, 2.0]), dtype=tf.int32)
