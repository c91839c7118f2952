"""Array ops at the edges TF handles: tf.shape/size/rank of a SparseTensor (its dense
shape), image patches of an empty batch or output and of complex images, diagonals of
bool tensors, and band_part refusing strings as TF's kernel does."""
import numpy as np
import pytest

import tensorweave as tf


def test_shape_size_and_rank_of_a_sparse_tensor(sess):
    sp = tf.SparseTensor([[0, 0]], [1.0], [3, 4])
    shape, size, rank, shape64 = sess.run([tf.shape(sp), tf.size(sp), tf.rank(sp),
                                           tf.shape(sp, out_type=tf.int64)])
    assert shape.tolist() == [3, 4] and size == 12 and rank == 2
    assert shape64.dtype == np.int64 and tf.shape(sp).dtype == tf.int32


def test_patches_of_empty_batches_and_outputs_and_complex_images(sess):
    empty_out = tf.extract_image_patches(tf.zeros([1, 5, 5, 2]), [1, 6, 6, 1], [1, 1, 1, 1],
                                         [1, 1, 1, 1], "VALID")
    empty_batch = tf.extract_image_patches(tf.zeros([0, 4, 4, 1]), [1, 2, 2, 1],
                                           [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    assert sess.run(empty_out).shape == (1, 0, 0, 72)
    assert sess.run(empty_batch).shape == (0, 3, 3, 4)
    images = np.arange(4).reshape(1, 2, 2, 1) * (1 + 1j)
    got = sess.run(tf.image.extract_patches(tf.constant(images, tf.complex64),
                                            [1, 1, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                            "VALID"))
    np.testing.assert_array_equal(got, images.reshape(1, 2, 1, 2))


def test_diagonals_of_bool_tensors(sess):
    v = tf.constant([[True, False, True], [False, False, True]])
    diag, part = sess.run([tf.linalg.diag(v[0]), tf.linalg.diag_part(v)])
    np.testing.assert_array_equal(diag, np.diag([True, False, True]))
    np.testing.assert_array_equal(part, [True, False])


def test_band_part_of_strings_fails_as_tfs(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="DT_STRING"):
        sess.run(tf.matrix_band_part(tf.constant([["a", "b"], ["c", "d"]]), 0, 0))


def test_where_of_a_scalar_fails_at_run_time(sess):
    w = tf.where(tf.constant(True))
    assert w.shape.as_list() == [None, 0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unhandled input dimensions"):
        sess.run(w)
