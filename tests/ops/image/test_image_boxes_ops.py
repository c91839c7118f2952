"""Non-max suppression (ops/image/nms_ops.py), drawing boxes and sampling crops (ops/image/image_boxes_ops.py)
against plain-Python references of the documented algorithms (the outputs for the
random cases were also checked against reference TF when written)."""
import numpy as np
import pytest

import tensorweave as tf

_RNG = np.random.RandomState(0)
_N = 40
_Y, _X = _RNG.uniform(0, 1, _N), _RNG.uniform(0, 1, _N)
_BOXES = np.stack([_Y, _X, _Y + _RNG.uniform(-0.3, 0.3, _N),
                   _X + _RNG.uniform(-0.3, 0.3, _N)], 1).astype(np.float32)
_SCORES = _RNG.uniform(0, 1, _N).astype(np.float32)
_SCORES[5] = _SCORES[7]  # a tie: the lower index goes first


def _iou(a, b):
    ay0, ay1 = sorted([a[0], a[2]])
    ax0, ax1 = sorted([a[1], a[3]])
    by0, by1 = sorted([b[0], b[2]])
    bx0, bx1 = sorted([b[1], b[3]])
    area_a, area_b = (ay1 - ay0) * (ax1 - ax0), (by1 - by0) * (bx1 - bx0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ay1, by1) - max(ay0, by0), 0) * max(min(ax1, bx1) - max(ax0, bx0), 0)
    return inter / (area_a + area_b - inter)


def _reference_nms(boxes, scores, n, thr, score_thr=-np.inf, sim=None):
    sim = sim or (lambda i, j: _iou(boxes[i], boxes[j]))
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    selected = []
    for i in order:
        if len(selected) == n or scores[i] <= score_thr:
            break
        if all(sim(i, j) <= thr for j in selected):
            selected.append(i)
    return selected


def _reference_soft_nms(boxes, scores, n, score_thr, sigma):
    scores = [float(s) for s in scores]
    live = {i: s for i, s in enumerate(scores) if s > score_thr}
    selected, sel_scores = [], []
    while live and len(selected) < n:
        i = min(live, key=lambda k: (-live[k], k))
        s = live.pop(i)
        selected.append(i)
        sel_scores.append(s)
        for k in list(live):
            live[k] *= np.exp(-0.5 * _iou(boxes[i], boxes[k]) ** 2 / sigma)
            if live[k] <= score_thr:
                del live[k]
    return selected, sel_scores


def test_non_max_suppression(sess):
    out = tf.image.non_max_suppression(_BOXES, _SCORES, 15, 0.4)
    thr = tf.image.non_max_suppression(_BOXES, _SCORES, 15, 0.4, score_threshold=0.3)
    assert out.shape.as_list() == [None] and out.dtype == tf.int32
    o, t = sess.run([out, thr])
    assert o.tolist() == _reference_nms(_BOXES, _SCORES, 15, 0.4)
    assert t.tolist() == _reference_nms(_BOXES, _SCORES, 15, 0.4, 0.3)
    assert all(_SCORES[i] > 0.3 for i in t)


@pytest.mark.parametrize("thr", [0.0, 0.3, 0.7])
def test_non_max_suppression_over_many_blocks_of_candidates(sess, thr):
    # 300 boxes in clusters: suppressions within a block of candidates, chains of them (a
    # suppressed box suppresses nothing), and across blocks; tied scores
    rs = np.random.RandomState(3)
    centers = rs.uniform(0, 10, (40, 2))[rs.randint(0, 40, 300)]
    corners = centers + rs.uniform(-0.4, 0.4, (300, 2))
    boxes = np.concatenate([corners, corners + rs.uniform(0.3, 1.0, (300, 2))],
                           1).astype(np.float32)
    scores = rs.randint(0, 50, 300).astype(np.float32)
    got = sess.run(tf.image.non_max_suppression(boxes, scores, 250, thr))
    assert got.tolist() == _reference_nms(boxes, scores, 250, thr)


def test_documented_example(sess):
    boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
             [0, 10.1, 1, 11.1], [0, 100, 1, 101]]
    scores = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]
    assert sess.run(tf.image.non_max_suppression(boxes, scores, 3, 0.5)).tolist() == [3, 0, 5]


def test_with_scores_hard_and_soft(sess):
    hard_i, hard_s = tf.image.non_max_suppression_with_scores(_BOXES, _SCORES, 15, 0.4)
    soft_i, soft_s = tf.image.non_max_suppression_with_scores(
        _BOXES, _SCORES, 15, 0.4, score_threshold=0.2, soft_nms_sigma=0.3)
    assert soft_s.dtype == tf.float32 and soft_s.shape.as_list() == [None]
    hi, hs, si, ss = sess.run([hard_i, hard_s, soft_i, soft_s])
    assert hi.tolist() == _reference_nms(_BOXES, _SCORES, 15, 0.4)
    np.testing.assert_array_equal(hs, _SCORES[hi])
    ref_i, ref_s = _reference_soft_nms(_BOXES, _SCORES, 15, 0.2, 0.3)
    assert si.tolist() == ref_i
    np.testing.assert_allclose(ss, ref_s, rtol=1e-5)


def test_overlaps_and_padded(sess):
    ov = _RNG.uniform(0, 1, (_N, _N)).astype(np.float32)
    o = sess.run(tf.image.non_max_suppression_overlaps(ov, _SCORES, 10, 0.6))
    assert o.tolist() == _reference_nms(None, _SCORES, 10, 0.6, sim=lambda i, j: ov[i, j])
    # padded NMS follows TF's batched algorithm, which does not reorder the corners of
    # each box: it agrees with the reference on boxes given as [y_min, x_min, y_max, x_max]
    canonical = np.concatenate([np.minimum(_BOXES[:, :2], _BOXES[:, 2:]),
                                np.maximum(_BOXES[:, :2], _BOXES[:, 2:])], axis=1)
    idx, valid = tf.image.non_max_suppression_padded(canonical, _SCORES, 30, 0.3,
                                                     pad_to_max_output_size=True)
    assert idx.shape.as_list() == [30] and valid.shape.as_list() == []
    few, nfew = tf.image.non_max_suppression_padded(canonical, _SCORES, 30, 0.3,
                                                    score_threshold=0.8,
                                                    pad_to_max_output_size=True)
    iv, vv, fv, nv = sess.run([idx, valid, few, nfew])
    assert iv.tolist() == _reference_nms(_BOXES, _SCORES, 30, 0.3) and vv == 30
    ref = _reference_nms(_BOXES, _SCORES, 30, 0.3, 0.8)
    assert nv == len(ref) and fv[:nv].tolist() == ref and not fv[nv:].any()
    with pytest.raises(ValueError, match="batched"):
        tf.image.non_max_suppression_padded(tf.zeros([2, 3, 4]), tf.zeros([2, 3]), 2)


def test_padded_nms_batched(sess):
    boxes = [[[0, 0, 1, 1.], [0, 0, 1, 1.1], [0, 5, 1, 6]]]
    idx, valid = tf.image.non_max_suppression_padded(boxes, [[0.9, 0.8, 0.7]], 3,
                                                     pad_to_max_output_size=True)
    assert idx.shape.as_list() == [1, 3] and valid.shape.as_list() == [1]
    iv, vv = sess.run([idx, valid])
    assert iv.tolist() == [[0, 2, 0]] and vv.tolist() == [2]
    # two batch dimensions, a different number of valid boxes in each image
    boxes = np.array([[[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3]],
                       [[0, 0, 1, 1], [5, 5, 6, 6], [2, 2, 3, 3]]]], np.float32)
    scores = np.array([[[0.6, 0.9, 0.1], [0.2, 0.9, 0.5]]], np.float32)
    idx, valid = tf.image.non_max_suppression_padded(boxes, scores, 4, 0.5, 0.3,
                                                     pad_to_max_output_size=True)
    assert idx.shape.as_list() == [1, 2, 4] and valid.shape.as_list() == [1, 2]
    iv, vv = sess.run([idx, valid])
    # image 0: box 1 suppresses its copy 0, box 2 scores under the threshold
    assert iv.tolist() == [[[1, 0, 0, 0], [1, 2, 0, 0]]] and vv.tolist() == [[1, 2]]
    # sorted_input keeps the given order: box 0 is taken first and suppresses box 1
    idx, valid = tf.image.non_max_suppression_padded(boxes[0], scores[0], 4, 0.5,
                                                     pad_to_max_output_size=True,
                                                     sorted_input=True)
    iv, vv = sess.run([idx, valid])
    assert iv.tolist() == [[0, 2, 0, 0], [0, 1, 2, 0]] and vv.tolist() == [2, 3]
    # an IoU equal to the threshold suppresses; boxes at or below zero are not output
    boxes = [[[0, 0, 1, 1.], [0, 0, 1, 2.], [-2, -2, 0, 0], [1, 1, 0, 0]]]
    idx, valid = tf.image.non_max_suppression_padded(boxes, [[0.9, 0.8, 0.7, 0.6]], 4, 0.5,
                                                     pad_to_max_output_size=True)
    iv, vv = sess.run([idx, valid])
    assert iv.tolist() == [[0, 3, 0, 0]] and vv.tolist() == [2]


def test_nms_errors(sess):
    with pytest.raises(ValueError):
        tf.image.non_max_suppression(tf.zeros([3, 5]), tf.zeros([3]), 2)
    with pytest.raises(ValueError):
        tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([4]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"iou_threshold must be in"):
        sess.run(tf.image.non_max_suppression(_BOXES, _SCORES, 2, 1.5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="soft_nms_sigma"):
        sess.run(tf.image.non_max_suppression_with_scores(_BOXES, _SCORES, 2,
                                                          soft_nms_sigma=-1.0))
    i = tf.image.non_max_suppression(_BOXES, _SCORES, 3)
    assert tf.gradients(tf.cast(i, tf.float32), tf.constant(1.0)) == [None]


def test_combined_non_max_suppression(sess):
    boxes = _RNG.uniform(0, 1, (2, 30, 3, 4)).astype(np.float32)
    boxes[..., 2:] = boxes[..., :2] + 0.3
    scores = _RNG.uniform(0, 1, (2, 30, 3)).astype(np.float32)
    out = tf.image.combined_non_max_suppression(boxes, scores, 4, 7, 0.5, 0.1)
    assert [t.shape.as_list() for t in out] == [[2, 7, 4], [2, 7], [2, 7], [2]]
    assert out.nmsed_boxes is out[0] and out.valid_detections is out[3]  # TF's namedtuple
    padded = tf.image.combined_non_max_suppression(boxes, scores, 2, 20, 0.5, 0.1,
                                                   pad_per_class=True, clip_boxes=False)
    assert padded[0].shape.as_list() == [2, 6, 4]
    nb, ns, nc, nv = sess.run(out)
    for b in range(2):
        found = []
        for c in range(3):
            for i in _reference_nms(boxes[b, :, c], scores[b, :, c], 4, 0.5, 0.1):
                found.append((scores[b, i, c], c, boxes[b, i, c]))
        found.sort(key=lambda r: -r[0])
        found = found[:7]
        assert nv[b] == len(found)
        np.testing.assert_array_equal(ns[b, :len(found)], [f[0] for f in found])
        np.testing.assert_array_equal(nc[b, :len(found)], [f[1] for f in found])
        np.testing.assert_array_equal(nb[b, :len(found)],
                                      np.clip([f[2] for f in found], 0, 1))
    pb = sess.run(padded[0])
    assert pb.max() > 1.0  # not clipped


def test_draw_bounding_boxes(sess):
    img = np.zeros([1, 5, 6, 3], np.float32)
    boxes = np.array([[[0.0, 0.0, 0.5, 0.4], [0.5, 0.5, 1.0, 1.0]]], np.float32)
    out = tf.image.draw_bounding_boxes(img, boxes)
    assert out.shape.as_list() == [1, 5, 6, 3]
    v = sess.run(out)[0]
    # box 0: rows 0..2, cols 0..2, TF's first palette color (yellow)
    yellow, blue = [1, 1, 0], [0, 0, 1]
    for r, c in [(0, 0), (0, 2), (2, 0), (1, 0), (1, 2), (0, 1), (2, 1)]:
        np.testing.assert_array_equal(v[r, c], yellow)
    np.testing.assert_array_equal(v[2, 2], blue)  # box 1 (rows 2..4, cols 2..5) is drawn last
    np.testing.assert_array_equal(v[1, 1], [0, 0, 0])  # inside is untouched
    np.testing.assert_array_equal(v[4, 5], blue)
    np.testing.assert_array_equal(v[2, 5], blue)
    grey = sess.run(tf.image.draw_bounding_boxes(img[..., :1], boxes,
                                                 colors=[[0.25, 0, 0, 1]]))
    assert grey[0, 0, 0, 0] == 0.25 and grey[0, 4, 5, 0] == 0.25
    # a depth known at build time is checked there
    with pytest.raises(ValueError, match=r"Channel depth should be either 1 \(GRY\)"):
        tf.image.draw_bounding_boxes(np.zeros([1, 2, 2, 2], np.float32), boxes)
    ph = tf.placeholder(tf.float32, [1, 2, 2, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Channel depth"):
        sess.run(tf.image.draw_bounding_boxes(ph, boxes), {ph: np.zeros([1, 2, 2, 2])})


def test_draw_bounding_boxes_default_colors_on_gray_images(sess):
    # On a 1-channel image every default colour has channel 0 set to 1, so the second
    # box (default colour blue, channel 0 = 0) is drawn as 1 as well.
    boxes = [[[0.0, 0.0, 1.0, 1.0], [0.25, 0.25, 0.75, 0.75]]]
    out = sess.run(tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), boxes))[0, ..., 0]
    want = np.ones([4, 4], np.float32)
    want[1, 1] = 0
    np.testing.assert_array_equal(out, want)
    given = sess.run(tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), boxes,
                                                  colors=[[0.5, 0, 0, 1], [0, 1, 0, 1]]))
    want = np.zeros([4, 4], np.float32)
    want[:, 3] = want[3, :] = 0.5
    np.testing.assert_array_equal(given[0, ..., 0], want)


def test_sample_distorted_bounding_box_is_a_namedtuple():
    result = tf.image.sample_distorted_bounding_box([60, 80, 3], [[[0.1, 0.2, 0.5, 0.6]]])
    assert type(result).__name__ == "SampleDistortedBoundingBoxV2"
    assert result._fields == ("begin", "size", "bboxes")
    assert result.begin is result[0] and result.bboxes is result[2]


def test_sample_distorted_bounding_box(graph, sess):
    graph.seed = 7
    box = [[[0.1, 0.2, 0.5, 0.6]]]
    begin, size, bbox = tf.image.sample_distorted_bounding_box(
        [60, 80, 3], box, min_object_covered=0.5, area_range=[0.1, 1.0])
    assert begin.dtype == tf.int32 and begin.shape.as_list() == [3]
    assert bbox.shape.as_list() == [1, 1, 4]
    for _ in range(20):
        b, s, bb = sess.run([begin, size, bbox])
        assert b[2] == 0 and s[2] == -1
        assert 0 <= b[0] and b[0] + s[0] <= 60 and 0 <= b[1] and b[1] + s[1] <= 80
        assert s[0] * s[1] >= 0.1 * 60 * 80 * 0.99
        np.testing.assert_allclose(bb[0, 0], [b[0] / 60, b[1] / 80, (b[0] + s[0]) / 60,
                                              (b[1] + s[1]) / 80], rtol=1e-6)
        ih = max(min(b[0] + s[0], 30) - max(b[0], 6), 0)
        iw = max(min(b[1] + s[1], 48) - max(b[1], 16), 0)
        assert ih * iw / (24 * 32) >= 0.5 or (s[0], s[1]) == (60, 80)
    whole = tf.image.sample_distorted_bounding_box(
        [10, 10, 1], np.zeros([1, 0, 4], np.float32), use_image_if_no_bounding_boxes=True,
        min_object_covered=2.0)  # impossible: the whole image
    assert sess.run(whole[1]).tolist() == [10, 10, -1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes"):
        sess.run(tf.image.sample_distorted_bounding_box([10, 10, 1],
                                                        np.zeros([1, 0, 4], np.float32)))


def test_sample_distorted_bounding_box_is_seeded():
    def run():
        with tf.Graph().as_default() as g:
            g.seed = 11
            out = tf.image.sample_distorted_bounding_box([50, 50, 3], [[[0, 0, 1, 1]]],
                                                         seed=4)
            with tf.Session() as s:
                return [s.run(out[1]).tolist() for _ in range(3)]
    assert run() == run()


def test_non_max_suppression_v1_and_v2(sess):
    # the ops of older graphs: no score threshold; V1 has the IoU threshold as an attr
    v1 = tf.raw_ops.NonMaxSuppression(boxes=_BOXES, scores=_SCORES, max_output_size=12,
                                      iou_threshold=0.4)
    v2 = tf.raw_ops.NonMaxSuppressionV2(boxes=_BOXES, scores=_SCORES, max_output_size=12,
                                        iou_threshold=np.float32(0.4))
    half = tf.raw_ops.NonMaxSuppressionV2(boxes=_BOXES.astype(np.float16),
                                          scores=_SCORES.astype(np.float16),
                                          max_output_size=40, iou_threshold=np.float16(1.0))
    assert v1.dtype == tf.int32 and v1.shape.as_list() == [None]
    got1, got2, all_half = sess.run([v1, v2, half])
    want = _reference_nms(_BOXES, _SCORES, 12, 0.4)
    assert got1.tolist() == want and got2.tolist() == want
    assert sorted(all_half.tolist()) == list(range(_N))
    with pytest.raises(tf.errors.InvalidArgumentError, match="iou_threshold must be in"):
        sess.run(tf.raw_ops.NonMaxSuppression(boxes=_BOXES, scores=_SCORES,
                                              max_output_size=3, iou_threshold=1.5))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.raw_ops.NonMaxSuppressionV2(boxes=_BOXES, scores=_SCORES[:3], max_output_size=3,
                                       iou_threshold=0.5)


def test_sample_distorted_bounding_box_shape_checks():
    # TF's shape function: image_size [3], bounding_boxes [batch, N, 4], a scalar coverage
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.image.sample_distorted_bounding_box([50, 60], [[[0.0, 0.0, 1.0, 1.0]]], seed=1)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.image.sample_distorted_bounding_box([50, 60, 3], [[0.0, 0.0, 1.0, 1.0]], seed=1)
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        tf.image.sample_distorted_bounding_box([50, 60, 3], [[[0.0, 0.0, 1.0]]], seed=1)
    size = tf.placeholder(tf.int32, [None])
    out = tf.image.sample_distorted_bounding_box(size, tf.zeros([1, 1, 4]), seed=1)
    assert out.begin.shape.as_list() == [3]


def test_sample_distorted_bounding_box_ranges(sess):
    box = [[[0.0, 0.0, 1.0, 1.0]]]
    # a decreasing aspect ratio range is a range all the same (TF draws low + (high -
    # low) * u); an area range no crop can meet gives the whole image
    out = tf.image.sample_distorted_bounding_box([200, 200, 3], box, seed=3,
                                                 aspect_ratio_range=(2.0, 1.5),
                                                 area_range=(0.2, 0.6))
    for _ in range(20):
        size = sess.run(out.size)
        assert size[2] == -1
        if size[0] != 200:
            assert 1.5 - 0.02 <= size[1] / size[0] <= 2.0 + 0.02
    whole = tf.image.sample_distorted_bounding_box([50, 60, 3], box, seed=3,
                                                   area_range=(0.5, 0.2))
    assert sess.run(whole.size).tolist() == [50, 60, -1]
    for kwargs, message in [({"aspect_ratio_range": (0.0, 1.0)}, "Aspect ratio range must"),
                            ({"aspect_ratio_range": (-1.0, 2.0)}, "Aspect ratio range must"),
                            ({"area_range": (0.0, 1.0)}, "Area range must be positive"),
                            ({"area_range": (0.5, 1.5)}, "less than or equal to 1")]:
        bad = tf.image.sample_distorted_bounding_box([50, 60, 3], box, seed=3, **kwargs)
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(bad.begin)


def test_sample_distorted_bounding_box_ignores_the_graph_seed():
    # TF1's wrapper passes seed and seed2 to the op as they are: the graph seed alone
    # leaves the op nondeterministic, an op seed alone makes it deterministic
    def draws(**seeds):
        with tf.Graph().as_default() as g:
            g.seed = 5
            out = tf.image.sample_distorted_bounding_box(
                [400, 400, 3], [[[0.0, 0.0, 1.0, 1.0]]], min_object_covered=0.0,
                area_range=(0.01, 1.0), **seeds)
            assert out.begin.op.get_attr("seed") == seeds.get("seed", 0)
            assert out.begin.op.get_attr("seed2") == seeds.get("seed2", 0)
            with tf.Session() as s:
                return [s.run(out.begin).tolist() for _ in range(5)]
    assert draws(seed=2) == draws(seed=2)
    assert draws(seed2=9) == draws(seed2=9)
    assert draws() != draws()


def _greedy_one_by_one(sim, scores, max_output, threshold, score_threshold):
    """The reference: candidates visited one at a time by decreasing score (lower index
    first on ties), each selected one suppressing the remaining ones above the
    threshold."""
    order = np.argsort(-scores, kind="stable")
    remaining = [int(i) for i in order if scores[i] > score_threshold]
    selected = []
    while remaining and len(selected) < max_output:
        best = remaining.pop(0)
        selected.append(best)
        if remaining:
            over = sim(best, np.array(remaining)) > threshold
            remaining = [j for j, drop in zip(remaining, over) if not drop]
    return selected


def test_greedy_selection_in_blocks_is_the_candidate_by_candidate_one():
    """_greedy_nms settles candidates a block at a time; the selection is the one of
    visiting every candidate in score order (ties, corners either way round, zero and
    full thresholds, an overlaps matrix, max_output_size 0)."""
    from tensorweave.ops.image import nms_ops
    rs = np.random.RandomState(0)
    for t in range(120):
        n = rs.randint(0, 300)
        corner = rs.rand(n, 2).astype(np.float32) * rs.choice([10, 100])
        boxes = np.concatenate([corner, corner + rs.rand(n, 2).astype(np.float32) * 20], 1)
        if t % 3 == 0:
            boxes = boxes[:, [2, 3, 0, 1]]
        scores = rs.rand(n).astype(np.float32)
        if t % 4 == 0:
            scores = np.round(scores * 5) / 5   # ties: the lower index first
        args = (scores, rs.randint(0, 150), float(rs.choice([0.0, 0.3, 0.5, 1.0])),
                float(rs.choice([-np.inf, 0.2])))
        overlaps = rs.rand(n, n).astype(np.float32)
        for sim in (nms_ops.iou_similarity(boxes), nms_ops.overlaps_similarity(overlaps)):
            got = nms_ops._greedy_nms(sim, *args)[0]
            assert got.tolist() == _greedy_one_by_one(sim, *args)
