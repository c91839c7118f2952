"""SampleDistortedBoundingBox (V1, V2 and stateless) gives TF's crops. The begin/size
literals were recorded from TF 2.21 (compat.v1 graph mode, CPU) by the same programs as
below: `tf.image.sample_distorted_bounding_box` of `tensorflow.compat.v1` after
`tf.disable_v2_behavior()`, `tf.raw_ops.SampleDistortedBoundingBox` and
`tf.raw_ops.StatelessSampleDistortedBoundingBox`, each op run three times in one session
(the stateful ops move on by one Philox block per attempt and run)."""
import numpy as np
import pytest

import tensorweave as tf

_CASES = [
    ([60, 80, 3], [[[0.1, 0.2, 0.5, 0.6]]],
     dict(seed=1, seed2=2, min_object_covered=0.5, area_range=[0.1, 1.0])),
    ([480, 640, 3], [[[0.05, 0.1, 0.9, 0.7], [0.3, 0.3, 0.4, 0.45]]],
     dict(seed=7, seed2=0, min_object_covered=0.1)),
    ([333, 500, 3], [[[0.0, 0.0, 1.0, 1.0]]],
     dict(seed=0, seed2=99, min_object_covered=0.0, aspect_ratio_range=[0.5, 2.0],
          area_range=[0.01, 1.0])),
    ([224, 224, 3], np.zeros([1, 0, 4], np.float32),
     dict(seed=3, seed2=4, use_image_if_no_bounding_boxes=True,
          aspect_ratio_range=[3 / 4, 4 / 3], area_range=[0.08, 1.0], max_attempts=10)),
    ([50, 60, 3], [[[0.2, 0.2, 0.3, 0.25]]],
     dict(seed=12, seed2=34, min_object_covered=0.9, max_attempts=5)),
    # a decreasing ratio range no crop of this image fits: the whole image
    ([1000, 17, 1], [[[0.1, 0.1, 0.9, 0.9]]],
     dict(seed=5, seed2=6, min_object_covered=0.3, aspect_ratio_range=[2.0, 1.5],
          area_range=[0.2, 0.6])),
    ([7, 9, 3], [[[0.0, 0.0, 0.5, 0.5]]],
     dict(seed=123456789, seed2=987654321, min_object_covered=0.2)),
]

# (begin[:2], size[:2]) of each op (the cases above, then the V1 op) in runs 1, 2, 3
TF_CROPS = [
    [([3, 5], [47, 46]), ([34, 70], [320, 380]), ([40, 51], [264, 371]),
     ([83, 26], [87, 112]), ([7, 4], [30, 36]), ([0, 0], [1000, 17]), ([0, 1], [3, 3]),
     ([1, 9], [92, 109])],
    [([7, 12], [50, 64]), ([95, 158], [235, 198]), ([93, 57], [116, 214]),
     ([6, 5], [113, 115]), ([0, 5], [22, 28]), ([0, 0], [1000, 17]), ([0, 0], [4, 4]),
     ([31, 15], [68, 70])],
    [([0, 10], [60, 62]), ([62, 34], [364, 401]), ([104, 238], [97, 84]),
     ([93, 32], [78, 90]), ([1, 6], [46, 53]), ([0, 0], [1000, 17]), ([0, 3], [6, 5]),
     ([14, 0], [84, 104])],
]

# StatelessSampleDistortedBoundingBox: (image_size dtype, seed) -> (begin[:2], size[:2])
TF_STATELESS = [
    (tf.int32, [1, 2], tf.int32, ([9, 30], [281, 217])),
    (tf.int64, [3, 4], tf.int64, ([33, 87], [223, 166])),
    (tf.int16, [-5, 2 ** 40], tf.int64, ([115, 135], [180, 259])),
]


def _check(out, image_size, want):
    begin, size, bbox = out
    assert begin.tolist() == want[0] + [0] and size.tolist() == want[1] + [-1]
    corners = np.array([begin[0], begin[1], begin[0] + size[0], begin[1] + size[1]],
                       np.float32)
    dims = np.array([image_size[0], image_size[1]] * 2, np.float32)
    np.testing.assert_array_equal(bbox, (corners / dims).reshape(1, 1, 4))


def test_stateful_crops_match_tf_run_after_run(sess):
    ops = [tf.image.sample_distorted_bounding_box(tf.constant(size), boxes, **kw)
           for size, boxes, kw in _CASES]
    ops.append(tf.raw_ops.SampleDistortedBoundingBox(
        image_size=tf.constant([100, 120, 3], tf.int64),
        bounding_boxes=[[[0.2, 0.3, 0.7, 0.9]]], seed=8, seed2=9, min_object_covered=0.4))
    sizes = [size for size, _, _ in _CASES] + [[100, 120, 3]]
    assert ops[-1].begin.op.type == "SampleDistortedBoundingBox"
    for want_run in TF_CROPS:
        for out, size, want in zip(sess.run([tuple(o) for o in ops]), sizes, want_run):
            _check(out, size, want)
    assert ops[-1].begin.dtype == tf.int64


def test_stateless_crops_match_tf(sess):
    for dtype, seed, seed_dtype, want in TF_STATELESS:
        out = tf.raw_ops.StatelessSampleDistortedBoundingBox(
            image_size=tf.constant([300, 400, 3], dtype),
            bounding_boxes=[[[0.1, 0.1, 0.6, 0.8], [0.5, 0.5, 0.55, 0.52]]],
            min_object_covered=0.3, seed=tf.constant(seed, seed_dtype),
            aspect_ratio_range=[0.5, 1.5], area_range=[0.05, 0.9])
        assert out[0].dtype == dtype
        for _ in range(2):   # stateless: the same crop every run
            _check(sess.run(tuple(out)), [300, 400], want)


def test_stateless_seed_shape():
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.raw_ops.StatelessSampleDistortedBoundingBox(
            image_size=[30, 40, 3], bounding_boxes=[[[0.0, 0.0, 1.0, 1.0]]],
            min_object_covered=0.1, seed=[1, 2, 3])


def test_run_errors(sess):
    image = tf.placeholder(tf.int32)
    out = tf.image.sample_distorted_bounding_box(image, [[[0.0, 0.0, 1.0, 1.0]]], seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="image_size must contain 3"):
        sess.run(out.begin, {image: [30, 40]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be >= int32 max"):
        sess.run(out.begin, {image: [-3, 40, 3]})
    boxes = tf.placeholder(tf.float32, [None, None, 4])
    out = tf.image.sample_distorted_bounding_box([30, 40, 3], boxes, seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be in \[0.0, 1.0\]"):
        sess.run(out.begin, {boxes: [[[0.0, 0.0, 1.5, 1.0]]]})
    few = tf.image.sample_distorted_bounding_box([30, 40, 3], [[[0.0, 0.0, 1.0, 1.0]]],
                                                 seed=1, max_attempts=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Max attempts"):
        sess.run(few.begin)
