"""Small TF1 names: complex casts, sparse_matmul, tables_initializer, timestamp."""
import time

import numpy as np

import tensorweave as tf


def test_to_complex_casts(graph, sess):
    x = tf.constant([1.5, -2.0])
    c64, c128 = tf.to_complex64(x), tf.to_complex128(x)
    assert c64.dtype == tf.complex64 and c128.dtype == tf.complex128
    assert c64.op.name == "ToComplex64"
    out = sess.run(c128)
    assert out.dtype == np.complex128
    np.testing.assert_array_equal(out, [1.5 + 0j, -2.0 + 0j])


def test_sparse_matmul_is_a_matmul(graph, sess):
    a = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    b = np.array([[3.0, 4.0], [5.0, 6.0]], np.float32)
    y = tf.sparse_matmul(a, b, transpose_b=True, a_is_sparse=True)
    assert y.op.type == "MatMul" and y.op.name == "SparseMatMul"
    np.testing.assert_allclose(sess.run(y), a @ b.T)


def test_tables_initializer_groups_the_collection(graph, sess):
    empty = tf.tables_initializer()
    assert empty.type == "NoOp" and empty.name == "init_all_tables"
    v = tf.Variable(0.0)
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, v.initializer)
    init = tf.initialize_all_tables(name="tables")
    assert init.name == "tables" and v.initializer in init.control_inputs
    sess.run(init)
    assert sess.run(v) == 0.0


def test_timestamp_reads_the_clock_each_run(graph, sess):
    t = tf.timestamp()
    assert t.dtype == tf.float64 and t.shape.as_list() == []
    before = time.time()
    first = sess.run(t)
    time.sleep(0.01)
    second = sess.run(t)  # stateful: never folded into a constant by the plan
    assert before - 1.0 <= first < second <= time.time() + 1.0
