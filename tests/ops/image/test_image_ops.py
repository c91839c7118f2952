"""Crops, pads, flips, transposes and rotations (ops/image/image_ops.py) against NumPy
slicing, with TF1's static shapes and errors."""
import numpy as np
import pytest

import tensorweave as tf

IMG = np.arange(2 * 5 * 6 * 3).reshape(2, 5, 6, 3).astype(np.float32)


def test_crop_and_pad(sess):
    x = tf.constant(IMG)
    crop = tf.image.crop_to_bounding_box(x, 1, 2, 3, 4)
    assert crop.shape.as_list() == [2, 3, 4, 3]
    np.testing.assert_array_equal(sess.run(crop), IMG[:, 1:4, 2:6])
    pad = tf.image.pad_to_bounding_box(x[0], 1, 2, 7, 9)
    assert pad.shape.as_list() == [7, 9, 3]
    want = np.zeros([7, 9, 3], np.float32)
    want[1:6, 2:8] = IMG[0]
    np.testing.assert_array_equal(sess.run(pad), want)
    with pytest.raises(ValueError, match="height must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(x, 3, 0, 3, 1)
    with pytest.raises(ValueError, match="width must be <= target - offset"):
        tf.image.pad_to_bounding_box(x, 0, 2, 5, 6)
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tf.image.crop_to_bounding_box(tf.zeros([3, 3]), 0, 0, 1, 1)


def test_dynamic_sizes_are_checked_at_run_time(sess):
    ph = tf.placeholder(tf.float32, [None, None, 3])
    crop = tf.image.crop_to_bounding_box(ph, 1, 1, 2, 2)
    assert crop.shape.as_list() == [2, 2, 3]
    np.testing.assert_array_equal(sess.run(crop, {ph: IMG[0]}), IMG[0, 1:3, 1:3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="width must be >= target"):
        sess.run(crop, {ph: np.zeros([3, 2, 3], np.float32)})


@pytest.mark.parametrize("target", [(3, 9), (7, 4), (5, 6), (2, 2)])
def test_resize_image_with_crop_or_pad(sess, target):
    h, w = target
    out = tf.image.resize_image_with_crop_or_pad(IMG[0], h, w)
    assert out.shape.as_list() == [h, w, 3]
    # reference: centered crop/pad, extra row/column of padding or cropping at the end
    want = np.zeros([h, w, 3], np.float32)
    src_r, dst_r = max((5 - h) // 2, 0), max((h - 5) // 2, 0)
    src_c, dst_c = max((6 - w) // 2, 0), max((w - 6) // 2, 0)
    n_r, n_c = min(h, 5), min(w, 6)
    want[dst_r:dst_r + n_r, dst_c:dst_c + n_c] = IMG[0, src_r:src_r + n_r, src_c:src_c + n_c]
    np.testing.assert_array_equal(sess.run(out), want)
    ph = tf.placeholder(tf.float32, [None, None, 3])
    dynamic = tf.image.resize_image_with_crop_or_pad(ph, h, w)
    np.testing.assert_array_equal(sess.run(dynamic, {ph: IMG[0]}), want)


def test_central_crop(sess):
    out = tf.image.central_crop(IMG, 0.5)
    assert out.shape.as_list() == [2, 3, 4, 3]  # start int((5 - 2.5) / 2) = 1
    np.testing.assert_array_equal(sess.run(out), IMG[:, 1:4, 1:5])
    assert tf.image.central_crop(IMG, 1.0).shape.as_list() == [2, 5, 6, 3]
    ph = tf.placeholder(tf.float32, [None, None, 3])
    np.testing.assert_array_equal(sess.run(tf.image.central_crop(ph, 0.5), {ph: IMG[0]}),
                                  IMG[0, 1:4, 1:5])
    with pytest.raises(ValueError, match="central_fraction must be within \\(0, 1\\]"):
        tf.image.central_crop(IMG, 0.0)


def test_flips_transposes_rotations(sess):
    x = tf.constant(IMG)
    checks = [(tf.image.flip_left_right(x), IMG[:, :, ::-1]),
              (tf.image.flip_up_down(x), IMG[:, ::-1]),
              (tf.image.flip_left_right(x[0]), IMG[0, :, ::-1]),
              (tf.image.transpose_image(x), IMG.transpose(0, 2, 1, 3)),
              (tf.image.transpose(x[0]), IMG[0].transpose(1, 0, 2))]
    for k in range(-1, 5):
        checks.append((tf.image.rot90(x[0], k), np.rot90(IMG[0], k)))
        checks.append((tf.image.rot90(x, k), np.rot90(IMG, k, axes=(1, 2))))
    for y, want in checks:
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(sess.run(y), want)
    k = tf.placeholder(tf.int32, [])
    rotated = tf.image.rot90(x[0], k)
    assert rotated.shape.as_list() == [None, None, 3]
    for kv in range(4):
        np.testing.assert_array_equal(sess.run(rotated, {k: kv}), np.rot90(IMG[0], kv))
    with pytest.raises(ValueError):
        tf.image.flip_left_right(tf.zeros([3, 3]))


def test_random_flips_follow_the_seed_rules(sess):
    x = tf.constant(IMG)
    tf.set_random_seed(7)
    single = tf.image.random_flip_left_right(x[0], seed=3)
    batch = tf.image.random_flip_up_down(x, seed=3)
    assert single.shape.as_list() == [5, 6, 3] and batch.shape.as_list() == [2, 5, 6, 3]
    seen = set()
    for _ in range(20):
        out = sess.run(single)
        assert np.array_equal(out, IMG[0]) or np.array_equal(out, IMG[0, :, ::-1])
        seen.add(np.array_equal(out, IMG[0]))
        outs = sess.run(batch)
        for i in range(2):
            assert np.array_equal(outs[i], IMG[i]) or np.array_equal(outs[i], IMG[i, ::-1])
    assert seen == {True, False}


def _flip_sequence(graph_seed, op_seed, n=12):
    with tf.Graph().as_default():
        tf.set_random_seed(graph_seed)
        flipped = tf.image.random_flip_left_right(tf.constant(IMG[0]), seed=op_seed)
        with tf.Session() as sess:
            return [bool(np.array_equal(sess.run(flipped), IMG[0])) for _ in range(n)]


def test_random_flip_sequences_repeat_with_the_seeds():
    first = _flip_sequence(7, 3)
    assert _flip_sequence(7, 3) == first
    assert any(_flip_sequence(7, s) != first for s in (4, 5, 6))


def test_random_crop(sess):
    crop = tf.image.random_crop(IMG, [1, 2, 3, 3], seed=1)
    assert crop.shape.as_list() == [1, 2, 3, 3]
    assert tf.random_crop is tf.image.random_crop
    for _ in range(5):
        out = sess.run(crop)
        found = any(np.array_equal(out[0], IMG[b, r:r + 2, c:c + 3])
                    for b in range(2) for r in range(4) for c in range(4))
        assert found
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        sess.run(tf.image.random_crop(IMG, [3, 1, 1, 1]))


def test_resize_image_with_pad(sess):
    img = np.ones([2, 5, 7, 3], np.float32)
    out = tf.image.resize_image_with_pad(img, 6, 6)
    assert out.shape.as_list() == [2, 6, 6, 3] and out.dtype == tf.float32
    got = sess.run(out)
    # TF's arithmetic in float32: the scale, the resized size and the top/left padding
    ratio = max(np.float32(7) / np.float32(6), np.float32(5) / np.float32(6))
    rows, cols = np.float32(5) / ratio, np.float32(7) / ratio
    top, left = int(np.floor((6 - rows) / 2)), int(np.floor((6 - cols) / 2))
    want = np.zeros([2, 6, 6, 3], np.float32)
    want[:, top:top + int(np.floor(rows)), left:left + int(np.floor(cols))] = 1.0
    np.testing.assert_allclose(got, want, atol=1e-6)
    single = tf.image.resize_image_with_pad(img[0], 4, 9, method=1)
    assert single.shape.as_list() == [4, 9, 3] and single.dtype == tf.float32
    with pytest.raises(ValueError, match="target_width must be > 0"):
        tf.image.resize_image_with_pad(img, 4, 0)


def test_total_variation_and_image_gradients(sess):
    x = tf.constant(IMG)
    tv = tf.image.total_variation(x)
    assert tv.shape.as_list() == [2]
    want = np.abs(np.diff(IMG, axis=1)).sum((1, 2, 3)) + np.abs(np.diff(IMG, axis=2)).sum(
        (1, 2, 3))
    np.testing.assert_allclose(sess.run(tv), want)
    assert tf.image.total_variation(x[0]).shape.as_list() == []
    dy, dx = tf.image.image_gradients(x)
    want_dy = np.concatenate([np.diff(IMG, axis=1), np.zeros([2, 1, 6, 3])], 1)
    want_dx = np.concatenate([np.diff(IMG, axis=2), np.zeros([2, 5, 1, 3])], 2)
    np.testing.assert_array_equal(sess.run(dy), want_dy)
    np.testing.assert_array_equal(sess.run(dx), want_dx)
    with pytest.raises(ValueError, match="expects a 4D tensor"):
        tf.image.image_gradients(x[0])
    with pytest.raises(ValueError, match="either 3 or 4-dimensional"):
        tf.image.total_variation(tf.zeros([2, 2]))


def test_unknown_rank_image_is_a_single_3d_image(sess):
    # decode_image's output has no static rank; TF takes it as one [h, w, c] image.
    img = tf.image.decode_image(tf.image.encode_png(tf.constant(IMG[0].astype(np.uint8))))
    assert img.shape.ndims is None
    want = IMG[0].astype(np.uint8)
    cases = [
        (tf.image.resize_image_with_crop_or_pad(img, 2, 2), want[1:3, 2:4], [2, 2, None]),
        (tf.image.crop_to_bounding_box(img, 1, 2, 3, 4), want[1:4, 2:6], [3, 4, None]),
        (tf.image.pad_to_bounding_box(img, 0, 0, 5, 7),
         np.pad(want, [[0, 0], [0, 1], [0, 0]]), [5, 7, None]),
        (tf.image.flip_left_right(img), want[:, ::-1], None),
        (tf.image.flip_up_down(img), want[::-1], None),
        (tf.image.random_flip_left_right(tf.ones_like(img)), np.ones_like(want), None),
        (tf.image.random_flip_up_down(tf.ones_like(img)), np.ones_like(want), None),
    ]
    for result, expected, static in cases:
        if static is not None:
            assert result.shape.as_list() == static
        np.testing.assert_array_equal(sess.run(result), expected)


def test_unknown_rank_flips_follow_the_fed_rank(sess):
    ph = tf.placeholder(tf.float32)
    flipped = tf.image.flip_left_right(ph)
    np.testing.assert_array_equal(sess.run(flipped, {ph: IMG[0]}), IMG[0, :, ::-1])
    np.testing.assert_array_equal(sess.run(flipped, {ph: IMG}), IMG[:, :, ::-1])
    # rot90 and transpose_image take an image of unknown rank as a batch, as TF does.
    rotated = tf.image.rot90(ph)
    np.testing.assert_array_equal(sess.run(rotated, {ph: IMG}), np.rot90(IMG, 1, (1, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.image.transpose_image(ph), {ph: IMG[0]})


def _central_start(size, fraction):
    """TF's start of the central crop along one dimension of unknown size: the fraction
    is a float32 tensor when the float64 arithmetic sees it."""
    f = float(np.float32(fraction))
    return int((size - size * f) / 2)


def test_central_crop_of_unknown_sizes_rounds_the_fraction_as_tf(sess):
    ph = tf.placeholder(tf.float32, [None, None, 3])
    for fraction in (0.6, 0.5, 0.33, 0.9):
        h0, w0 = _central_start(5, fraction), _central_start(6, fraction)
        out = sess.run(tf.image.central_crop(ph, fraction), {ph: IMG[0]})
        np.testing.assert_array_equal(out, IMG[0, h0:5 - h0, w0:6 - w0])
    # 0.6 is 0.6000000238 as float32: 5 - 5 * f < 2, so nothing is cut from the height,
    # while a static height is cut by int((5 - 3.0) / 2) = 1 on each side
    assert sess.run(tf.image.central_crop(ph, 0.6), {ph: IMG[0]}).shape == (5, 4, 3)
    assert tf.image.central_crop(IMG[0], 0.6).shape.as_list() == [3, 4, 3]


def test_central_crop_with_a_tensor_fraction(sess):
    fraction = tf.placeholder(tf.float32, [])
    out = tf.image.central_crop(IMG, fraction)
    assert out.shape.as_list() == [2, None, None, 3]
    got = sess.run(out, {fraction: 0.5})
    h0, w0 = _central_start(5, 0.5), _central_start(6, 0.5)
    np.testing.assert_array_equal(got, IMG[:, h0:5 - h0, w0:6 - w0])
    for bad in (0.0, 1.5):
        with pytest.raises(tf.errors.InvalidArgumentError, match="central_fraction"):
            sess.run(out, {fraction: bad})
    # a constant tensor is known at build time
    assert tf.image.central_crop(IMG, tf.constant(0.5)).shape.as_list() == [2, 3, 4, 3]
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(IMG, tf.constant(2.0))


def test_checks_of_tensor_arguments_run_with_the_graph(sess):
    # as TF's _assert: a Python value is checked now, a Tensor (even a constant) when
    # the op runs
    with pytest.raises(ValueError, match="offset_height must be >= 0"):
        tf.image.crop_to_bounding_box(IMG, -1, 0, 2, 2)
    crop = tf.image.crop_to_bounding_box(IMG, tf.constant(-1), 0, 2, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="offset_height must be >= 0"):
        sess.run(crop)
    crop = tf.image.crop_to_bounding_box(IMG, tf.constant(4), 0, 2, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="height must be >= target"):
        sess.run(crop)
    np.testing.assert_array_equal(
        sess.run(tf.image.crop_to_bounding_box(IMG, tf.constant(1), 2, 3, 2)),
        IMG[:, 1:4, 2:4])
