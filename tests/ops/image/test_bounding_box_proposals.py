"""GenerateBoundingBoxProposals (ops/image/bounding_box_proposals.py) against hand-computed
boxes and a plain-Python reference of TF's GPU kernel (TF has no CPU kernel for the op,
so there are no values recorded from TF; the build-time errors were checked against
TF 2.21)."""
import math

import numpy as np
import pytest

import tensorweave as tf

_IMAGE = [[100.0, 120.0, 1.0, 0.0, 0.0]]  # height 100, width 120, scale 1


def _run(sess, scores, deltas, anchors, image_info=_IMAGE, **kwargs):
    out = tf.image.generate_bounding_box_proposals(
        np.asarray(scores, np.float32), np.asarray(deltas, np.float32),
        np.asarray(image_info, np.float32), np.asarray(anchors, np.float32), **kwargs)
    return sess.run(out)


# --- a plain-Python reference of TF's algorithm ----------------------------------------------
def _decode(anchor, delta):
    y1, x1, y2, x2 = anchor
    dy, dx, dh, dw = delta
    clip = math.log(1000.0 / 16.0)
    h, w = y2 - y1, x2 - x1
    cy, cx = y1 + h / 2 + h * dy, x1 + w / 2 + w * dx
    h, w = h * math.exp(min(dh, clip)), w * math.exp(min(dw, clip))
    return [cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2]


def _iou(a, b):
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])  # noqa: E731
    if area(a) <= 0 or area(b) <= 0:
        return 0.0
    ih = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iw = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ih * iw / (area(a) + area(b) - ih * iw)


def _reference(scores, deltas, info, anchors, nms_threshold, pre_nms_topn, min_size,
               post_nms_topn):
    height, width, num_anchors = scores.shape
    positions = [(h, w, a) for h in range(height) for w in range(width)
                 for a in range(num_anchors)]
    positions.sort(key=lambda p: -scores[p])  # sort is stable: ties keep position order
    candidates = []
    for h, w, a in positions[:pre_nms_topn]:
        box = _decode(anchors[h, w, 4 * a:4 * a + 4], deltas[h, w, 4 * a:4 * a + 4])
        limits = [info[0], info[1]] * 2
        box = [max(min(v, lim), 0.0) for v, lim in zip(box, limits)]
        if min(box[2] - box[0], box[3] - box[1]) >= min_size * info[2]:
            candidates.append((box, scores[h, w, a]))
    kept = []
    for box, score in candidates:
        if len(kept) < post_nms_topn and all(_iou(box, k) <= nms_threshold
                                             for k, _ in kept):
            kept.append((box, score))
    rois = np.zeros([post_nms_topn, 4], np.float32)
    probabilities = np.zeros([post_nms_topn], np.float32)
    for i, (box, score) in enumerate(kept):
        rois[i], probabilities[i] = box, score
    return rois, probabilities


# --- values -----------------------------------------------------------------------------------
def test_decodes_clips_and_pads_by_hand(sess):
    # one position, one anchor [0, 0, 20, 20]; dy = 0.1 moves the center from 10 to 12,
    # dh = log 2 doubles the height to 40 (y: -8 -> 0, 32); dx = -0.1 moves the x center
    # to 8 with width 20 (x: -2 -> 0, 18)
    rois, probabilities = _run(sess, [[[[0.9]]]], [[[[0.1, -0.1, math.log(2.0), 0.0]]]],
                               [[[0.0, 0.0, 20.0, 20.0]]], post_nms_topn=3)
    np.testing.assert_allclose(rois, [[[0, 0, 32, 18], [0, 0, 0, 0], [0, 0, 0, 0]]],
                               atol=1e-5)
    np.testing.assert_allclose(probabilities, [[0.9, 0, 0]], rtol=1e-6)


def test_clips_to_the_image_and_caps_the_scale(sess):
    # dh = dw = 10 is capped at log(1000 / 16): a 2x2 anchor becomes 125x125 around
    # (50, 60), clipped to the 100x120 image
    rois, _ = _run(sess, [[[[1.0]]]], [[[[0.0, 0.0, 10.0, 10.0]]]],
                   [[[49.0, 59.0, 51.0, 61.0]]], post_nms_topn=1)
    np.testing.assert_allclose(rois, [[[0, 0, 100, 120]]], atol=1e-4)


def test_min_size_applies_after_pre_nms_topn_and_is_scaled(sess):
    # position 0 (score 0.9) is a 10x10 box, position 1 (score 0.5) a 30x30 box
    scores = [[[[0.9], [0.5]]]]
    anchors = [[[0.0, 0.0, 10.0, 10.0], [50.0, 50.0, 80.0, 80.0]]]
    deltas = np.zeros([1, 1, 2, 4])
    rois, probabilities = _run(sess, scores, deltas, anchors, pre_nms_topn=1,
                               post_nms_topn=2)
    assert not rois.any() and not probabilities.any()  # the top box is too small
    rois, probabilities = _run(sess, scores, deltas, anchors, pre_nms_topn=2,
                               post_nms_topn=2)
    np.testing.assert_allclose(rois[0, 0], [50, 50, 80, 80])
    np.testing.assert_allclose(probabilities, [[0.5, 0]])
    # min_size is scaled by image_info[:, 2]: 16 * 0.5 = 8 keeps the 10x10 box
    _, probabilities = _run(sess, scores, deltas, anchors, image_info=[[100, 120, 0.5, 0,
                                                                        0]])
    np.testing.assert_allclose(probabilities[0, :3], [0.9, 0.5, 0])


def test_nms_suppresses_above_the_threshold(sess):
    # three anchors at one position: B overlaps A with IoU 0.6 (A: 0..50, B: 0..30 in y,
    # both 0..50 in x: 1500 / 2500), C is apart
    anchors = [[[0, 0, 50, 50, 0, 0, 30, 50, 60, 60, 90, 90]]]
    scores = [[[[0.8, 0.7, 0.6]]]]
    deltas = np.zeros([1, 1, 1, 12])
    _, probabilities = _run(sess, scores, deltas, anchors, nms_threshold=0.5,
                            post_nms_topn=3)
    np.testing.assert_allclose(probabilities, [[0.8, 0.6, 0]])
    _, probabilities = _run(sess, scores, deltas, anchors, nms_threshold=0.6,
                            post_nms_topn=3)  # IoU 0.6 is not above 0.6
    np.testing.assert_allclose(probabilities, [[0.8, 0.7, 0.6]])
    _, probabilities = _run(sess, scores, deltas, anchors, nms_threshold=0.5,
                            post_nms_topn=1)
    np.testing.assert_allclose(probabilities, [[0.8]])


@pytest.mark.parametrize("pre_nms_topn,post_nms_topn,nms_threshold", [
    (6000, 20, 0.7), (7, 5, 0.3), (30, 40, 0.0), (1000, 10, 1.0)])
def test_matches_reference_on_random_inputs(sess, pre_nms_topn, post_nms_topn,
                                            nms_threshold):
    rng = np.random.RandomState(1)
    batch, height, width, num_anchors = 2, 3, 4, 3
    scores = rng.uniform(0, 1, [batch, height, width, num_anchors]).astype(np.float32)
    scores[1, 0, 0, :2] = scores[1, 2, 3, 1]  # ties keep position order
    deltas = rng.normal(0, 0.4, [batch, height, width, 4 * num_anchors]).astype(np.float32)
    centers = rng.uniform(0, 100, [height, width, num_anchors, 2])
    sizes = rng.uniform(5, 60, [height, width, num_anchors, 2])
    anchors = np.concatenate([centers - sizes / 2, centers + sizes / 2], -1)
    anchors = anchors.reshape(height, width, 4 * num_anchors).astype(np.float32)
    info = np.array([[100, 110, 1.0, 0, 0], [90, 80, 1.5, 0, 0]], np.float32)
    rois, probabilities = _run(sess, scores, deltas, anchors, image_info=info,
                               nms_threshold=nms_threshold, pre_nms_topn=pre_nms_topn,
                               min_size=12, post_nms_topn=post_nms_topn)
    assert rois.shape == (batch, post_nms_topn, 4)
    for b in range(batch):
        want_rois, want_probabilities = _reference(
            scores[b].astype(float), deltas[b].astype(float), info[b].astype(float),
            anchors.astype(float), nms_threshold, pre_nms_topn, 12.0, post_nms_topn)
        np.testing.assert_allclose(rois[b], want_rois, rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(probabilities[b], want_probabilities)
    assert (probabilities[:, 0] > 0).all()  # the case is not vacuous


# --- graph building -------------------------------------------------------------------------
def test_static_shapes_and_names(graph):
    scores = tf.placeholder(tf.float32, [2, None, None, 3])
    deltas = tf.placeholder(tf.float32, [2, None, None, 12])
    anchors = tf.placeholder(tf.float32, [None, None, 12])
    out = tf.image.generate_bounding_box_proposals(scores, deltas, tf.zeros([2, 5]), anchors,
                                                   post_nms_topn=7)
    assert out._fields == ("rois", "roi_probabilities")
    assert out.rois.shape.as_list() == [2, 7, 4]
    assert out.roi_probabilities.shape.as_list() == [2, 7]
    op = out.rois.op
    assert op.type == "GenerateBoundingBoxProposals" and op.name == "GenerateBoundingBoxProposals"
    assert [t.op.name for t in op.inputs[4:]] == [
        "GenerateBoundingBoxProposals/nms_threshold", "GenerateBoundingBoxProposals/pre_nms_topn",
        "GenerateBoundingBoxProposals/min_size"]
    assert op.get_attr("post_nms_topn") == 7
    assert tf.gradients(out.roi_probabilities, scores) == [None]


def test_build_time_errors(graph):
    scores = tf.zeros([1, 2, 2, 1])
    deltas = tf.zeros([1, 2, 2, 4])
    anchors = tf.zeros([2, 2, 4])
    with pytest.raises(ValueError, match="Dimension must be 5 but is 4"):
        tf.image.generate_bounding_box_proposals(scores, deltas, tf.zeros([1, 4]), anchors)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.image.generate_bounding_box_proposals(scores, deltas, tf.zeros([1, 5]),
                                                 tf.zeros([1, 4]))
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.image.generate_bounding_box_proposals(scores, deltas, tf.zeros([1, 5]), anchors,
                                                 nms_threshold=[0.5])
    with pytest.raises(TypeError, match="Expected int for argument 'post_nms_topn' not 'a'"):
        tf.image.generate_bounding_box_proposals(scores, deltas, tf.zeros([1, 5]), anchors,
                                                 post_nms_topn="a")


@pytest.mark.parametrize("kwargs,anchors,error,message", [
    (dict(nms_threshold=1.5), None, tf.errors.InvalidArgumentError,
     "nms_threshold should be between 0 and 1"),
    (dict(pre_nms_topn=0), None, tf.errors.InvalidArgumentError,
     "pre_nms_topn should be greater than 0"),
    (dict(post_nms_topn=0), None, tf.errors.InvalidArgumentError,
     "post_nms_topn can't be 0 or less"),
    ({}, np.zeros([2, 2, 8]), tf.errors.OutOfRangeError, "Box dimensions need to be 4"),
    ({}, np.zeros([1, 2, 4]), tf.errors.InvalidArgumentError, "anchors must have shape"),
])
def test_run_time_errors(graph, kwargs, anchors, error, message):
    anchors_in = tf.placeholder(tf.float32, [None, None, None])
    out = tf.image.generate_bounding_box_proposals(
        tf.zeros([1, 2, 2, 1]), tf.zeros([1, 2, 2, 4]), tf.zeros([1, 5]), anchors_in,
        **kwargs)
    feed = np.zeros([2, 2, 4]) if anchors is None else anchors
    with tf.Session() as sess, pytest.raises(error, match=message):
        sess.run(out, {anchors_in: feed})
