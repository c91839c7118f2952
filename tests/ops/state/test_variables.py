"""tf.Variable, the resource-variable ops, collections and initializer functions."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors


def _resource(sess, name):
    """The VariableResource of variable `name` in `sess` (white-box)."""
    return sess._device_manager.default.resources.lookup("", name)


# --- graph structure and naming --------------------------------------------------------
def test_graph_structure_and_names(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    ops = [(op.name, op.type) for op in graph.get_operations()]
    # TF1's names for a reference variable: "v/initial_value", "v/read"
    assert ops == [("v/initial_value", "Const"), ("v", "VarHandleOp"),
                   ("v/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
                   ("v/Assign", "AssignVariableOp"), ("v/read", "ReadVariableOp")]
    r = tf.Variable(1.0, name="r", use_resource=True)
    assert r.initial_value.name == "r/Initializer/initial_value:0"
    assert r._graph_element.name == "r/Read/ReadVariableOp:0"
    assert tf.Variable(lambda: 2.0, name="f").initial_value.name == \
        "f/Initializer/initial_value:0"
    assert v.name == "v:0" and v.op.name == "v" and v.initializer.name == "v/Assign"
    assert v.handle.dtype == tf.resource and v.dtype == tf.float32
    assert v.shape.as_list() == [2] and v.get_shape().as_list() == [2]
    assert v.graph is graph and v.initial_value.op.name == "v/initial_value"
    assert v.op.get_attr("shared_name") == b"v"
    assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32>"
    assert v.value().op.type == "ReadVariableOp" and v.value() is not v.value()
    assert v.value().shape.as_list() == [2]


def test_unique_names_and_scopes(graph):
    a = tf.Variable(1.0, name="v")
    b = tf.Variable(1.0, name="v")
    c = tf.Variable(1.0)
    with tf.name_scope("outer"):
        d = tf.Variable(1.0, name="v")
    assert [x.name for x in (a, b, c, d)] == ["v:0", "v_1:0", "Variable:0", "outer/v:0"]
    assert b.op.get_attr("shared_name") == b"v_1"


def test_callable_initial_value_and_dtype(graph, sess):
    v = tf.Variable(lambda: tf.constant([1, 2], dtype=tf.int64), name="w")
    assert v.initial_value.op.name.startswith("w/Initializer/")
    assert v.dtype == tf.int64
    f = tf.Variable(3, dtype=tf.float64)
    sess.run(tf.global_variables_initializer())
    out = sess.run(v)
    assert out.dtype == np.int64 and out.tolist() == [1, 2]
    assert sess.run(f).dtype == np.float64
    with pytest.raises(ValueError):
        tf.Variable(tf.constant(1), dtype=tf.float32)
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()


def test_shape_argument_and_validate_shape(graph):
    with pytest.raises(ValueError, match="not compatible"):
        tf.Variable([1.0, 2.0], shape=[3])
    p = tf.placeholder(tf.float32, [None])
    v = tf.Variable(p, validate_shape=False)
    assert v.shape.ndims is None
    w = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])
    assert w.shape.as_list() == [None, 3]


# --- reads, initialization -------------------------------------------------------------
def test_uninitialized_read_names_the_variable(graph, sess):
    v = tf.Variable([1.0], name="my_var")
    with pytest.raises(errors.FailedPreconditionError) as e:
        sess.run(v)
    msg = str(e.value)
    assert "uninitialized value my_var" in msg
    assert "Error while reading resource variable my_var" in msg
    with pytest.raises(errors.FailedPreconditionError, match="my_var"):
        sess.run(v.assign_add([1.0]))


def test_initialize_and_read(graph, sess):
    v = tf.Variable([[1, 2], [3, 4]], name="v")
    init = tf.global_variables_initializer()
    assert init.name == "init" and init.type == "NoOp"
    sess.run(init)
    out = sess.run(v)
    assert out.dtype == np.int32 and out.tolist() == [[1, 2], [3, 4]]
    assert v.eval(session=sess).tolist() == [[1, 2], [3, 4]]
    with sess.as_default():
        assert v.eval().tolist() == [[1, 2], [3, 4]]


def test_is_variable_initialized_and_report(graph, sess):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    init_a = tf.is_variable_initialized(a)
    report = tf.report_uninitialized_variables()
    assert report.shape.as_list() == [None] and report.dtype == tf.string
    assert not sess.run(init_a)
    assert sess.run(report).tolist() == [b"a", b"b"]
    sess.run(a.initializer)
    assert sess.run(init_a)
    assert sess.run(report).tolist() == [b"b"]
    sess.run(b.initializer)
    assert sess.run(report).tolist() == []
    assert sess.run(tf.report_uninitialized_variables([a])).tolist() == []


def test_report_with_no_variables(graph, sess):
    out = sess.run(tf.report_uninitialized_variables())
    assert out.shape == (0,)


def test_assert_variables_initialized(graph, sess):
    a = tf.Variable([1.0, 2.0])
    check = tf.assert_variables_initialized()
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(check)
    sess.run(a.initializer)
    assert sess.run(check) == 1


def test_session_close_drops_variables(graph):
    v = tf.Variable(1.0)
    with tf.Session(graph=graph) as s1:
        s1.run(v.initializer)
        assert s1.run(v) == 1.0
    with tf.Session(graph=graph) as s2:
        with pytest.raises(errors.FailedPreconditionError):
            s2.run(v)


def test_variables_are_per_session(graph):
    v = tf.Variable(1.0)
    inc = v.assign_add(1.0)
    with tf.Session(graph=graph) as s1, tf.Session(graph=graph) as s2:
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        assert s1.run(v) == 2.0 and s2.run(v) == 1.0


# --- assignments -----------------------------------------------------------------------
def test_assign_read_value_semantics(graph, sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    t = v.assign([3.0, 4.0])
    assert isinstance(t, tf.Tensor) and t.shape.as_list() == [2]
    assert sess.run(t).tolist() == [3.0, 4.0]
    op = v.assign([5.0, 6.0], read_value=False)
    assert isinstance(op, tf.Operation) and op.type == "AssignVariableOp"
    assert sess.run(op) is None
    assert sess.run(v).tolist() == [5.0, 6.0]
    add = v.assign_add([1.0, 1.0])
    assert sess.run(add).tolist() == [6.0, 7.0]
    sub = v.assign_sub([0.5, 0.5], read_value=False)
    assert isinstance(sub, tf.Operation)
    sess.run(sub)
    assert sess.run(v).tolist() == [5.5, 6.5]


def test_assign_add_keeps_dtype(graph, sess):
    for dt, np_dt in ((tf.int32, np.int32), (tf.float64, np.float64),
                      (tf.float16, np.float16), (tf.int64, np.int64)):
        v = tf.Variable(np.array([1, 2], dtype=np_dt))
        sess.run(v.initializer)
        out = sess.run(v.assign_add(np.array([10, 20], dtype=np_dt)))
        assert out.dtype == np_dt and out.tolist() == [11, 22]
        out = sess.run(v.assign_sub(np.array([1, 1], dtype=np_dt)))
        assert out.dtype == np_dt and out.tolist() == [10, 21]


def test_scalar_assign_add(graph, sess):
    v = tf.Variable(0.0)
    sess.run(v.initializer)
    out = sess.run(v.assign_add(2.5))
    assert out == 2.5 and type(out) is np.float32  # a 0-d fetch is a NumPy scalar, as in TF


def test_assign_shape_validation(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    with pytest.raises(ValueError, match="Shape mismatch"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        v.assign_add([1.0, 2.0, 3.0])
    p = tf.placeholder(tf.float32, [None])
    a = v.assign(p)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"wrong shape. Expected \[2\] got \[3\]"):
        sess.run(a, {p: [1.0, 2.0, 3.0]})
    add = v.assign_add(p)
    with pytest.raises(errors.InvalidArgumentError, match="shapes must be equal"):
        sess.run(add, {p: [1.0, 2.0, 3.0]})
    # failed steps leave the variable as it was
    assert sess.run(v).tolist() == [1.0, 2.0]
    assert sess.run(a, {p: [7.0, 8.0]}).tolist() == [7.0, 8.0]


def test_assign_dtype_is_checked(graph):
    v = tf.Variable([1.0, 2.0])
    with pytest.raises((TypeError, ValueError)):
        v.assign(tf.constant([1, 2]))


def test_assign_without_validate_shape_changes_shape(graph, sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    p = tf.placeholder(tf.float32)
    sess.run(tf.assign(v, p, validate_shape=False), {p: [[1.0, 2.0, 3.0]]})
    assert sess.run(v).tolist() == [[1.0, 2.0, 3.0]]


def test_assign_does_not_alias_the_fed_array(graph, sess):
    v = tf.Variable([0.0, 0.0])
    p = tf.placeholder(tf.float32, [2])
    sess.run(v.initializer)
    fed = np.array([1.0, 2.0], dtype=np.float32)
    sess.run(v.assign(p, read_value=False), {p: fed})
    fed[0] = 100.0
    assert sess.run(v).tolist() == [1.0, 2.0]


def test_load(graph, sess):
    v = tf.Variable([1.0, 2.0])
    n_ops = len(graph.get_operations())
    v.load([5.0, 6.0], session=sess)
    assert sess.run(v).tolist() == [5.0, 6.0]
    assert len(graph.get_operations()) == n_ops


# --- snapshot semantics and concurrency ------------------------------------------------
def test_fetched_value_is_a_snapshot(graph, sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    before = sess.run(v)
    sess.run(v.assign_add([10.0, 10.0]))
    sess.run(tf.scatter_add(v, [0], [5.0]))
    sess.run(v.assign([0.0, 0.0]))
    assert before.tolist() == [1.0, 2.0]
    assert sess.run(v).tolist() == [0.0, 0.0]


def test_read_before_update_in_one_step_is_a_snapshot(graph, sess):
    # a resource variable's read copies the value when it runs (TF's resource semantics;
    # a TF1 reference variable's fetched read shows the run's updates, see below)
    v = tf.Variable([1.0, 2.0], use_resource=True)
    sess.run(v.initializer)
    r = v.read_value()
    with tf.control_dependencies([r]):
        up = v.assign_add([1.0, 1.0], read_value=False)
    with tf.control_dependencies([up]):
        sc = tf.scatter_add(v, [1], [100.0])
    old, _, new = sess.run([r, up, sc])
    assert old.tolist() == [1.0, 2.0]
    assert new.tolist() == [2.0, 103.0]


def test_fetched_reads_of_reference_variables_show_the_runs_updates(graph, sess):
    # TF1's reference variables: reads alias the variable's buffer and fetches are copied
    # when the run is over, so a fetched read (through identities too) shows every update
    # of the run; other ops' results keep what they computed (TF 2.21's values)
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    r = v.read_value()
    with tf.control_dependencies([r]):
        up = v.assign_add([1.0, 1.0])
    with tf.control_dependencies([up]):
        sc = tf.scatter_add(v, [1], [100.0])
    assert [x.tolist() for x in sess.run([r, up, sc])] == [[2.0, 103.0]] * 3
    assert [x.tolist() for x in sess.run([v.value(), up])] == [[3.0, 104.0]] * 2
    assert [x.tolist() for x in sess.run([tf.identity(v), up])] == [[4.0, 105.0]] * 2
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=gs)
    sess.run(tf.global_variables_initializer())
    # the logging pattern of TF1 programs: the step after this run's increment
    assert [sess.run([train, gs])[1] for _ in range(3)] == [1, 2, 3]
    assert sess.run([gs, train, gs.value()]) == [4, None, 4]
    # a read the run does not update is a plain read
    assert sess.run(gs) == 4


def test_a_fetched_variable_shows_updates_made_while_its_run_waits(graph, sess):
    # TF 2.21 gives [1, 5]: the run waits on the queue while another thread's run sets
    # v, and the fetch of v is copied when the run is over (SyncReplicasOptimizer's
    # workers fetch the global step the chief advances so)
    import threading
    import time
    v = tf.Variable(0)
    q = tf.FIFOQueue(1, tf.int32)
    dequeued = q.dequeue()
    with tf.control_dependencies([tf.assign(v, 5)]):
        enqueue = q.enqueue(1)
    sess.run(v.initializer)

    def other_thread():
        time.sleep(0.2)
        sess.run(enqueue)
    thread = threading.Thread(target=other_thread)
    thread.start()
    try:
        assert sess.run([dequeued, v], options=tf.RunOptions(timeout_in_ms=20000)) == [1, 5]
    finally:
        thread.join(20)


def test_mutating_a_fetched_value_does_not_change_the_variable(graph, sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    out = sess.run(v)
    assert out.flags.writeable  # a fetched value is the caller's own array, as in TF
    out[0] = 5.0
    assert sess.run(v).tolist() == [1.0, 2.0]
    assert out.tolist() == [5.0, 2.0]


def test_updates_are_in_place_when_no_reader_holds_the_value(graph, sess):
    v = tf.Variable(np.zeros([4, 3], np.float32), name="big")
    sess.run(v.initializer)
    res = _resource(sess, "big")
    assert res.value is v.initial_value.op.get_attr("value")  # shared with the constant
    sess.run(v.assign_add(np.ones([4, 3], np.float32), read_value=False))  # so: copied
    assert res.value is not v.initial_value.op.get_attr("value")
    arr_id = id(res.value)
    sess.run(tf.scatter_add(v, [1], [[1.0, 1.0, 1.0]]).op)  # the read is not fetched
    assert id(res.value) == arr_id  # no copy was made
    held = sess.run(v)  # now a reader holds the array: the next update copies
    sess.run(v.assign_add(np.ones([4, 3], np.float32), read_value=False))
    assert id(res.value) != id(held)
    assert held[1].tolist() == [2.0, 2.0, 2.0] and held[0].tolist() == [1.0, 1.0, 1.0]
    assert sess.run(v)[1].tolist() == [3.0, 3.0, 3.0]


def test_threaded_assign_add_is_atomic(graph, sess):
    v = tf.Variable(0, dtype=tf.int64)
    inc = v.assign_add(tf.constant(1, tf.int64), use_locking=True, read_value=False)
    sess.run(v.initializer)
    errors_seen = []

    def work():
        try:
            for _ in range(1000):
                sess.run(inc)
        except Exception as e:  # noqa: BLE001 - reported below
            errors_seen.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen
    assert sess.run(v) == 4000


# --- collections -----------------------------------------------------------------------
def test_collections_and_trainable(graph):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(1.0, name="b", trainable=False)
    c = tf.Variable(1.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    with tf.name_scope("s"):
        d = tf.Variable(1.0, name="d")
    assert tf.global_variables() == [a, b, d]
    assert tf.all_variables() == [a, b, d]
    assert tf.trainable_variables() == [a, c, d]
    assert tf.local_variables() == [c]
    assert tf.global_variables(scope="s") == [d]
    assert tf.trainable_variables("s/") == [d]
    assert a.trainable and not b.trainable
    assert tf.model_variables() == [] and tf.moving_average_variables() == []
    e = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ)
    assert not e.trainable
    # TF1 accepts an explicitly trainable ON_READ variable (TF2's tf.Variable does not)
    f = tf.Variable(1.0, trainable=True, synchronization=tf.VariableSynchronization.ON_READ)
    assert f.trainable and f in tf.trainable_variables()
    with pytest.raises(ValueError):
        tf.Variable(1.0, collections="variables")


def test_initializer_functions(graph, sess):
    a = tf.Variable(1.0, name="a")
    c = tf.Variable(3.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    init = tf.variables_initializer([a])
    assert init.name == "init"
    empty = tf.variables_initializer([])
    assert empty.type == "NoOp"
    sess.run(tf.local_variables_initializer())
    assert sess.run(c) == 3.0
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(a)
    sess.run(tf.initialize_all_variables())
    assert sess.run(a) == 1.0
    assert tf.initializers.global_variables is tf.global_variables_initializer
    assert tf.initializers.variables is tf.variables_initializer
    assert tf.initialize_variables([a]).type == "NoOp"
    assert tf.initialize_local_variables().type == "NoOp"


def test_variable_creation_ignores_control_dependencies(graph):
    c = tf.constant(1.0)
    with tf.control_dependencies([c]):
        v = tf.Variable(2.0)
        r = v.value()
    assert v.initializer.control_inputs == []
    assert c.op in r.op.control_inputs


def test_initialized_value_orders_dependent_initializers(graph, sess):
    w = tf.Variable([1.0, 2.0], name="w")
    w2 = tf.Variable(w.initialized_value(), name="w2")
    w3 = tf.Variable(w2, name="w3")  # a Variable as initial value
    sess.run(tf.global_variables_initializer())
    assert sess.run(w2).tolist() == [1.0, 2.0]
    assert sess.run(w3).tolist() == [1.0, 2.0]
    sess.run(w.assign([5.0, 5.0]))
    assert sess.run(w.initialized_value()).tolist() == [5.0, 5.0]


def test_initializers_reading_other_variables_run_in_any_order(graph, sess):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(a * 2.0 + 1.0, name="b")  # reads `a` directly
    c = tf.Variable(b.value() - a, name="c")
    assert b.initial_value.op.type == "AddV2"  # the user's tensor is kept
    for _ in range(3):
        with tf.Session(graph=graph) as s:
            s.run(tf.variables_initializer([c, b, a]))
            assert s.run(b).tolist() == [3.0, 5.0] and s.run(c).tolist() == [2.0, 3.0]
    sess.run(a.initializer)
    sess.run(a.assign([10.0, 10.0]))
    sess.run(b.initializer)  # an initialized `a` is read, not its initial value
    assert sess.run(b).tolist() == [21.0, 21.0]


# --- conversions and operators ---------------------------------------------------------
def test_conversion_and_fetch(graph, sess):
    v = tf.Variable([1.0, 2.0])
    t = tf.convert_to_tensor(v)
    assert t.op.type == "ReadVariableOp"
    with pytest.raises(ValueError):
        tf.convert_to_tensor(v, dtype=tf.int32)
    sess.run(v.initializer)
    assert sess.run({"x": [v]})["x"][0].tolist() == [1.0, 2.0]
    assert sess.run(tf.identity(v)).tolist() == [1.0, 2.0]


def test_operators(graph, sess):
    v = tf.Variable([1.0, 4.0])
    m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    sess.run(tf.global_variables_initializer())
    assert sess.run(v + 1).tolist() == [2.0, 5.0]
    assert sess.run(1 + v).tolist() == [2.0, 5.0]
    assert sess.run(v - v).tolist() == [0.0, 0.0]
    assert sess.run(10 - v).tolist() == [9.0, 6.0]
    assert sess.run(v * 2).tolist() == [2.0, 8.0]
    assert sess.run(v / 2).tolist() == [0.5, 2.0]
    assert sess.run(8 / v).tolist() == [8.0, 2.0]
    assert sess.run(v ** 2).tolist() == [1.0, 16.0]
    assert sess.run(-v).tolist() == [-1.0, -4.0]
    assert sess.run(v > 2).tolist() == [False, True]
    assert sess.run(v <= 1).tolist() == [True, False]
    assert sess.run(v[1]) == 4.0
    assert sess.run(m @ m).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert sess.run(np.array([1.0, 1.0], np.float32) + v).tolist() == [2.0, 5.0]
    assert (v == v) is True and (v != m) is True
    with pytest.raises(TypeError):
        iter(v)
    assert bool(v) is True  # a TF1 (reference) variable is truthy
    with pytest.raises(TypeError):
        bool(tf.Variable(1.0, use_resource=True))  # a resource variable refuses


# --- gradients ---------------------------------------------------------------------------
def test_gradient_of_loss_wrt_variable(graph, sess):
    v = tf.Variable([1.0, -2.0, 3.0], dtype=tf.float64)
    loss = tf.reduce_sum(v * v) + tf.reduce_sum(3.0 * v)
    (g,) = tf.gradients(loss, [v])
    assert isinstance(g, tf.Tensor)
    sess.run(v.initializer)
    assert sess.run(g).tolist() == [5.0, -1.0, 9.0]  # 2v + 3


def test_gradient_through_two_reads_is_summed(graph, sess):
    v = tf.Variable(2.0)
    y = v.value() * v.read_value()
    (g,) = tf.gradients(y, v)
    sess.run(v.initializer)
    assert sess.run(g) == 4.0


def test_sparse_read_and_gradient(graph, sess):
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    rows = v.sparse_read([2, 0, 2])
    assert rows.op.type == "ResourceGather" and rows.shape.as_list() == [3, 2]
    (g,) = tf.gradients(tf.reduce_sum(rows * 3.0), v)
    assert isinstance(g, tf.IndexedSlices)
    sess.run(v.initializer)
    assert sess.run(rows).tolist() == [[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]
    val = sess.run(g)
    assert val.indices.tolist() == [2, 0, 2]
    assert val.dense_shape.tolist() == [3, 2]
    assert val.to_dense().tolist() == [[3.0, 3.0], [0.0, 0.0], [6.0, 6.0]]


def test_sparse_read_out_of_range(graph, sess):
    v = tf.Variable(np.zeros([3, 2], np.float32))
    sess.run(v.initializer)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
        sess.run(v.sparse_read([0, 3]))


# --- misc ------------------------------------------------------------------------------
def test_count_up_to(graph, sess):
    v = tf.Variable(0, dtype=tf.int32)
    c = v.count_up_to(2)
    sess.run(v.initializer)
    assert sess.run(c) == 0 and sess.run(c) == 1
    with pytest.raises(errors.OutOfRangeError, match="Reached limit of 2"):
        sess.run(c)
    assert sess.run(v) == 2


def test_destroy_resource(graph, sess):
    from tensorweave.ops.state import resource_variable_ops as rv
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    sess.run(rv.destroy_resource_op(v.handle))
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(v)
    assert not sess.run(tf.is_variable_initialized(v))


def test_read_with_wrong_dtype(graph, sess):
    from tensorweave.ops.state import resource_variable_ops as rv
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    # TF's DataTypeString spellings: "float" for float32
    with pytest.raises(errors.InvalidArgumentError,
                       match="wrong dtype. Expected float got int32"):
        sess.run(rv.read_variable_op(v.handle, tf.int32))


def test_to_proto_round_trip(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v", trainable=False)
    d = v.to_proto()
    assert d.variable_name == "v:0" and d.initializer_name == "v/Assign"
    w = tf.Variable.from_proto(d)
    assert w.name == v.name and w.initializer is v.initializer and not w.trainable
    sess.run(w.initializer)
    assert sess.run(w).tolist() == [1.0, 2.0]


def test_variable_ref_is_hashable(graph):
    v = tf.Variable(1.0)
    assert {v.ref(): 1}[v.ref()] == 1 and v.ref().deref() is v
    assert {v: 1}[v] == 1


def test_variable_creator_scope(graph):
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"]))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(("inner", kwargs["name"]))
        kwargs["trainable"] = False
        return next_creator(**kwargs)
    with tf.variable_creator_scope(outer), tf.variable_creator_scope(inner):
        v = tf.Variable(1.0, name="c")
        w = tf.get_variable("gv", [1])
    assert calls == [("inner", "c"), ("outer", "c"), ("inner", "gv"), ("outer", "gv")]
    assert not v.trainable and not w.trainable and isinstance(v, tf.Variable)
    assert tf.Variable(1.0).trainable  # scope closed


def test_resource_variable_toggles():
    tf.enable_resource_variables()
    assert tf.resource_variables_enabled()
    tf.disable_resource_variables()  # TF1's default, restored for the other tests
    assert not tf.resource_variables_enabled()


def test_feeding_the_ref_tensor_name_feeds_every_read_as_tf1(graph, sess):
    # TF 2.21 (compat.v1, reference variables): both give [20.0, 20.0]
    v = tf.Variable(3.0, name="v")
    y, z = v.read_value() * 2, v * 2
    sess.run(v.initializer)
    assert sess.run([y, z], {"v:0": 10.0}) == [20.0, 20.0]
    assert sess.run([y, z], {v.op.outputs[0]: 10.0}) == [20.0, 20.0]
    assert sess.run(y) == 6.0  # the variable itself is unchanged

