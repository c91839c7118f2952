"""tf.image.extract_glimpse and the ExtractGlimpse/ExtractGlimpseV2 ops
(ops/image/glimpse_ops.py): placements against TensorFlow 2.21's glimpses (noise="zero",
so every pixel is determined) and a loop-by-loop reference, the noise by its statistics,
static shapes and TF's errors."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_builder import apply_op

IMAGE = (np.arange(2 * 5 * 6, dtype=np.float32) + 1).reshape(2, 5, 6, 1)

# TensorFlow 2.21: tf.raw_ops.ExtractGlimpse / ExtractGlimpseV2(IMAGE[:batch], size,
# offsets, centered, normalized, uniform_noise=False, noise="zero"); 0 is outside the image
GLIMPSES = [  # (version, centered, normalized, size, offsets, TF's glimpse)
    (1, True, True, (3, 4), [[-0.5, 0.3], [0.7, -1.0]],
     [2, 3, 4, 5, 8, 9, 10, 11, 14, 15, 16, 17, 0, 0, 43, 44, 0, 0, 49, 50, 0, 0, 55, 56]),
    (1, True, False, (3, 4), [[1.5, -0.4], [3.7, 2.5]],
     [7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22, 45, 46, 47, 48, 51, 52, 53, 54, 57, 58,
      59, 60]),
    (1, False, True, (3, 4), [[-0.5, 0.3], [0.7, -1.0]], [0] * 24),
    (1, False, False, (3, 4), [[1.5, -0.4], [3.7, 2.5]],
     [0, 0, 1, 2, 0, 0, 7, 8, 0, 0, 13, 14, 43, 44, 45, 46, 49, 50, 51, 52, 55, 56, 57, 58]),
    (2, True, True, (3, 4), [[-0.5, 0.3], [0.7, -1.0]],
     [2, 3, 4, 5, 8, 9, 10, 11, 14, 15, 16, 17, 0, 0, 43, 44, 0, 0, 49, 50, 0, 0, 55, 56]),
    (2, True, False, (3, 4), [[1.5, -0.4], [3.7, 2.5]], [27, 28, 29, 30] + [0] * 20),
    (2, False, True, (3, 4), [[-0.5, 0.3], [0.7, -1.0]],
     [0] * 8 + [2, 3, 4, 5] + [0] * 12),
    (2, False, False, (3, 4), [[1.5, -0.4], [3.7, 2.5]],
     [7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22, 51, 52, 53, 54, 57, 58, 59, 60, 0, 0, 0,
      0]),
    (1, True, True, (7, 8), [[0.1, -0.2]],
     [0, 1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0, 13, 14, 15, 16, 17, 18, 0, 0,
      19, 20, 21, 22, 23, 24, 0, 0, 25, 26, 27, 28, 29, 30, 0] + [0] * 16),
    (2, False, False, (7, 8), [[-1.0, 2.0]],
     [0] * 8 + [3, 4, 5, 6, 0, 0, 0, 0, 9, 10, 11, 12, 0, 0, 0, 0, 15, 16, 17, 18, 0, 0, 0,
                0, 21, 22, 23, 24, 0, 0, 0, 0, 27, 28, 29, 30, 0, 0, 0, 0] + [0] * 8),
]
# tf.compat.v1.image.extract_glimpse(IMAGE, [2, 3], [[0.2, -0.3], [-0.6, 0.5]]): inside
TF_INSIDE = [13, 14, 15, 19, 20, 21, 34, 35, 36, 40, 41, 42]


def _raw(images, size, offsets, version=1, **attrs):
    return apply_op("ExtractGlimpse" if version == 1 else "ExtractGlimpseV2",
                    [images, size, offsets], attrs).outputs[0]


def _reference(images, size, offsets, centered, normalized, version):
    """Zero-noise glimpses one pixel at a time, from the documented placement rules
    (float32 arithmetic, corner truncated toward zero)."""
    f32 = np.float32
    n, height, width, c = images.shape
    gh, gw = size
    out = np.zeros((n, gh, gw, c), np.float32)
    for b in range(n):
        y, x = f32(offsets[b][0]), f32(offsets[b][1])
        if normalized:
            y, x = f32(y * f32(height)), f32(x * f32(width))
        if centered and (normalized or version == 1):
            y, x = f32(f32(y / f32(2)) + f32(height / 2)), f32(f32(x / f32(2)) + f32(width / 2))
        elif centered:
            y, x = f32(y + f32(height / 2)), f32(x + f32(width / 2))
        if version == 1 or (normalized and centered):
            y, x = f32(y - f32(gh / 2)), f32(x - f32(gw / 2))
        top, left = int(y), int(x)
        for i in range(gh):
            for j in range(gw):
                if 0 <= top + i < height and 0 <= left + j < width:
                    out[b, i, j] = images[b, top + i, left + j]
    return out


@pytest.mark.parametrize("version,centered,normalized,size,offsets,want", GLIMPSES)
def test_zero_noise_matches_tensorflow(sess, version, centered, normalized, size, offsets,
                                       want):
    images = IMAGE[:len(offsets)]
    glimpse = _raw(images, list(size), np.float32(offsets), version, centered=centered,
                   normalized=normalized, uniform_noise=False, noise="zero")
    assert glimpse.shape.as_list() == [len(offsets), size[0], size[1], 1]
    assert sess.run(glimpse).reshape(-1).tolist() == want


def test_documented_examples(sess):
    # TF 2.21's docstrings: V1 reads pixel offsets as the center, V2 as the corner
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    v1 = tf.image.extract_glimpse(x, size=(2, 2), offsets=[[1, 1]], centered=False,
                                  normalized=False)
    v2 = _raw(x, [2, 2], [[1.0, 1.0]], 2, centered=False, normalized=False)
    assert sess.run(v1)[0, :, :, 0].tolist() == [[0, 1], [3, 4]]
    assert sess.run(v2)[0, :, :, 0].tolist() == [[4, 5], [7, 8]]


def test_public_function_inside_the_image_matches_tensorflow(sess):
    offsets = np.float32([[0.2, -0.3], [-0.6, 0.5]])
    glimpse = tf.image.extract_glimpse(IMAGE, [2, 3], offsets, name="glimpse")
    assert glimpse.name == "glimpse:0" and glimpse.op.type == "ExtractGlimpse"
    assert glimpse.shape.as_list() == [2, 2, 3, 1]
    assert sess.run(glimpse).reshape(-1).tolist() == TF_INSIDE


@pytest.mark.parametrize("version,centered,normalized",
                         list(itertools.product([1, 2], [True, False], [True, False])))
def test_against_the_loop_reference(sess, version, centered, normalized):
    rs = np.random.RandomState(version * 4 + centered * 2 + normalized)
    images = rs.uniform(1, 2, (3, 6, 7, 2)).astype(np.float32)
    scale = 1.3 if normalized else 9.0
    offsets_in = tf.placeholder(tf.float32, [3, 2])
    size_in = tf.placeholder(tf.int32, [2])
    glimpse = _raw(images, size_in, offsets_in, version, centered=centered,
                   normalized=normalized, uniform_noise=False, noise="zero")
    for size in [(1, 1), (3, 2), (4, 5), (8, 9)]:
        for _ in range(6):
            # offsets on a grid of quarters, so that halves and truncations are exercised
            offsets = np.round(rs.uniform(-scale, scale, (3, 2)) * 4) / 4
            got = sess.run(glimpse, {offsets_in: offsets, size_in: size})
            np.testing.assert_array_equal(
                got, _reference(images, size, offsets, centered, normalized, version))


def test_uniform_noise_fills_outside_with_the_images_range(sess):
    rs = np.random.RandomState(1)
    # channel 0 in [0, 1), channel 1 in [10, 11): the range is the whole image's
    images = np.stack([rs.uniform(0, 1, (2, 8, 8)), rs.uniform(10, 11, (2, 8, 8))],
                      -1).astype(np.float32)
    offsets = np.float32([[5.0, 5.0], [6.0, 0.0]])  # centers in pixels, half outside
    for uniform_noise in (True, False):  # TF: noise="uniform" wins over uniform_noise
        glimpse = tf.image.extract_glimpse(images, [40, 40], offsets, centered=False,
                                           normalized=False, uniform_noise=uniform_noise)
        got = sess.run(glimpse)
        want = _reference(images, (40, 40), offsets, False, False, 1)
        inside = want != 0
        np.testing.assert_array_equal(got[inside], want[inside])
        for b in range(2):
            noise = got[b][~inside[b]]
            lo, hi = images[b].min(), images[b].max()
            assert noise.min() >= lo and noise.max() <= hi
            assert abs(noise.mean() - (lo + hi) / 2) < 0.3
            assert abs(noise.std() - (hi - lo) / np.sqrt(12)) < 0.3
        again = sess.run(glimpse)
        assert not np.array_equal(again, got)  # new noise at every run
        np.testing.assert_array_equal(again[inside], got[inside])


def test_gaussian_noise_has_each_channels_statistics_clipped_to_its_range(sess):
    rs = np.random.RandomState(2)
    images = np.stack([rs.normal(5, 2, (1, 20, 20)), rs.uniform(-3, -1, (1, 20, 20))],
                      -1).astype(np.float32)
    for noise, uniform_noise in (("gaussian", False), ("", False)):
        glimpse = _raw(images, [60, 60], [[500.0, 500.0]], 1, centered=False,
                       normalized=False, uniform_noise=uniform_noise, noise=noise)
        got = sess.run(glimpse)[0]
        for ch in range(2):
            values, source = got[..., ch], images[0, ..., ch]
            assert values.min() >= source.min() and values.max() <= source.max()
            assert abs(values.mean() - source.mean()) < 0.1 * source.std() + 0.05
            assert abs(values.std() - source.std()) < 0.15 * source.std()
        # clipping: a uniform channel's noise piles up at its minimum and maximum
        assert (got[..., 1] == images[0, ..., 1].min()).sum() > 60


def test_noise_is_repeatable_in_the_deterministic_mode():
    def draw():
        with tf.Graph().as_default():
            glimpse = tf.image.extract_glimpse(IMAGE, [9, 9], [[0.0, 0.0], [1.0, 1.0]])
            with tf.Session(config=tf.ConfigProto(experimental={"deterministic": True})) \
                    as s:
                return s.run(glimpse)
    np.testing.assert_array_equal(draw(), draw())


def test_static_shapes(graph):
    assert tf.image.extract_glimpse(IMAGE, [3, 4], np.zeros((2, 2), np.float32)) \
        .shape.as_list() == [2, 3, 4, 1]
    size = tf.placeholder(tf.int32, [2])
    assert tf.image.extract_glimpse(IMAGE, size, np.zeros((2, 2), np.float32)) \
        .shape.as_list() == [2, None, None, 1]
    unknown = tf.placeholder(tf.float32)
    assert tf.image.extract_glimpse(unknown, [3, 4], np.zeros((5, 2), np.float32)) \
        .shape.as_list() == [5, 3, 4, None]


@pytest.mark.parametrize("images,size,offsets,attrs,match", [
    (IMAGE[0], [3, 4], np.zeros((2, 2)), {}, "Shape must be rank 4 but is rank 3"),
    (IMAGE, [3, 4, 5], np.zeros((2, 2)), {}, "Dimension must be 2 but is 3"),
    (IMAGE, [[3, 4]], np.zeros((2, 2)), {}, "Shape must be rank 1 but is rank 2"),
    (IMAGE, [3, 4], np.zeros(2), {}, "Shape must be rank 2 but is rank 1"),
    (IMAGE, [3, 4], np.zeros((1, 2)), {}, "Dimensions must be equal, but are 2 and 1"),
    (IMAGE, [3, 4], np.zeros((2, 3)), {}, "Dimension must be 2 but is 3"),
    (IMAGE, [3, 4], np.zeros((2, 2)), {"noise": "gaussian"},
     "uniform_noise should not be True when noise is not uniform"),
])
def test_build_time_errors(graph, images, size, offsets, attrs, match):
    with pytest.raises(ValueError, match=match):
        _raw(images, size, np.float32(offsets), **attrs)


@pytest.mark.parametrize("images,size,offsets,attrs,match", [
    (IMAGE[0], [3, 4], np.zeros((2, 2)), {}, "input must be 4-dimensional"),
    (IMAGE, [3, 4, 5], np.zeros((2, 2)), {}, "vector of size 2"),
    (IMAGE, [-3, 4], np.zeros((2, 2)), {}, "Expected a non-negative size, got -3"),
    (IMAGE, [3, 4], np.zeros(2), {}, "input must be a matrix"),
    (IMAGE, [3, 4], np.zeros((1, 2)), {}, "first dimension should be batch"),
    (IMAGE, [3, 4], np.zeros((2, 3)), {}, "second dimension should be of size 2"),
    (IMAGE, [3, 4], np.zeros((2, 2)), {"noise": "bogus", "uniform_noise": False},
     "The noise could only be uniform, gaussian, or zero"),
])
def test_run_time_errors(sess, images, size, offsets, attrs, match):
    # through placeholders of unknown shape, so only the kernel can check
    feeds = {tf.placeholder(tf.float32): images, tf.placeholder(tf.int32): size,
             tf.placeholder(tf.float32): np.float32(offsets)}
    glimpse = _raw(*feeds, **attrs)
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        sess.run(glimpse, feeds)


def test_empty_sizes_and_images(sess):
    assert sess.run(tf.image.extract_glimpse(IMAGE, [0, 4], np.zeros((2, 2), np.float32))) \
        .shape == (2, 0, 4, 1)
    assert sess.run(tf.image.extract_glimpse(np.zeros((0, 5, 6, 3), np.float32), [3, 4],
                                             np.zeros((0, 2), np.float32))).shape == \
        (0, 3, 4, 3)
    no_rows = np.zeros((1, 0, 6, 2), np.float32)
    zero = sess.run(_raw(no_rows, [2, 2], np.zeros((1, 2), np.float32), noise="zero",
                         uniform_noise=False))
    assert zero.shape == (1, 2, 2, 2) and not zero.any()
    # TF fills with NaN: the range of an empty image
    assert np.isnan(sess.run(tf.image.extract_glimpse(no_rows, [2, 2],
                                                      np.zeros((1, 2), np.float32)))).all()


def test_nan_and_huge_offsets_fall_outside(sess):
    offsets = np.float32([[np.nan, 0.0], [1e20, -1e20]])
    got = sess.run(_raw(IMAGE, [3, 3], offsets, noise="zero", uniform_noise=False))
    assert got.shape == (2, 3, 3, 1) and not got.any()


def test_not_differentiable(graph):
    images = tf.constant(IMAGE)
    glimpse = tf.image.extract_glimpse(images, [3, 3], np.zeros((2, 2), np.float32))
    assert tf.gradients(glimpse, images) == [None]
