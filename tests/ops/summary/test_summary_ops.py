"""ScalarSummary, HistogramSummary, TensorSummaryV2, MergeSummary and their builders,
checked against hand-computed values, TF's histogram rules written out independently,
and the summaries real TensorFlow wrote into tests/summary/data/tf_events."""
import bisect
import os
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.summary import summary_ops

summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
from tensorboard.util import tensor_util as tb_tensor_util  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "summary", "data")
DBL_MAX = sys.float_info.max


def parse(data) -> "summary_pb2.Summary":
    assert isinstance(data, bytes)
    return summary_pb2.Summary.FromString(data)


# --- scalar ---------------------------------------------------------------------------------
def test_scalar_summary_value_type_and_static_shape(graph, sess):
    s = tf.summary.scalar("loss", tf.constant(1.5))
    assert s.op.type == "ScalarSummary" and s.op.name == "loss"
    assert s.dtype == tf.string and s.shape.as_list() == []
    out = parse(sess.run(s))
    assert len(out.value) == 1
    assert out.value[0].tag == "loss" and out.value[0].simple_value == 1.5
    assert graph.get_collection(tf.GraphKeys.SUMMARIES) == [s]


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint8, tf.float16, tf.float64])
def test_scalar_summary_dtypes(sess, dtype):
    s = tf.summary.scalar("v", tf.constant(7, dtype))
    assert parse(sess.run(s)).value[0].simple_value == 7.0


def test_scalar_summary_rejects_bool(graph):
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
        tf.summary.scalar("b", tf.constant(True))


def test_scalar_summary_shape_mismatch(sess):
    s = tf.summary.scalar("v", tf.placeholder_with_default([1.0, 2.0], None))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tags and values are not the same shape: \[\] != \[2\] "
                             r"\(tag 'v'\)"):
        sess.run(s)


def test_scalar_summary_op_with_tag_vector(sess):
    from tensorweave.framework.op_builder import apply_op  # the builder takes one scalar
    s = apply_op("ScalarSummary", [["a", "b"], [1.0, 2.5]]).outputs[0]
    out = parse(sess.run(s))
    assert [(v.tag, v.simple_value) for v in out.value] == [("a", 1.0), ("b", 2.5)]


def test_tags_follow_name_scope_family_and_cleaning(graph):
    with tf.name_scope("train"):
        a = tf.summary.scalar("loss", 1.0)
        b = tf.summary.scalar("loss", 2.0)
    c = tf.summary.scalar("loss", 3.0, family="fam")
    d = tf.summary.scalar("/bad name!", 4.0)
    names = ["train/loss", "train/loss_1", "fam/loss", "bad_name_"]
    assert [t.op.name for t in (a, b, c, d)] == names
    with tf.Session() as sess:
        tags = [parse(v).value[0].tag for v in sess.run([a, b, c, d])]
    assert tags == ["train/loss", "train/loss_1", "fam/fam/loss", "bad_name_"]


def test_collections_argument(graph):
    s = tf.summary.scalar("x", 1.0, collections=["mine", "other"])
    assert graph.get_collection("mine") == [s] and graph.get_collection("other") == [s]
    assert graph.get_collection(tf.GraphKeys.SUMMARIES) == []
    t = tf.summary.scalar("y", 1.0, collections=[])
    assert t not in graph.get_collection(tf.GraphKeys.SUMMARIES)


# --- histogram ------------------------------------------------------------------------------
def reference_limits():
    """TF's default bucket limits, written out from their definition."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v = v * 1.1
    pos.append(DBL_MAX)
    return [-x for x in reversed(pos)] + [0.0] + pos


def reference_histogram(values):
    """(bucket_limit, bucket) by TF's rule, one value at a time with bisect."""
    limits = reference_limits()
    counts = [0.0] * len(limits)
    for x in values:
        counts[bisect.bisect_right(limits, x)] += 1
    out_limits, out_counts = [], []
    i = 0
    while i < len(counts):
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(end)
        out_counts.append(count)
    return out_limits, out_counts


def test_default_bucket_limits():
    limits = summary_ops.default_bucket_limits()
    assert limits.dtype == np.float64
    assert limits.tolist() == reference_limits()
    assert len(limits) == 1551 and limits[775] == 0.0 and limits[776] == 1e-12
    np.testing.assert_allclose(limits[777:-1] / limits[776:-2], 1.1, rtol=1e-12)


def test_histogram_summary_against_reference(sess):
    values = np.array([0.0, 1.0, -2.5, 1e-13, 3.0, 3.0, -1e30, 7e25], np.float64)
    h = tf.summary.histogram("h", tf.constant(values))
    assert h.op.type == "HistogramSummary" and h.shape.as_list() == []
    histo = parse(sess.run(h)).value[0].histo
    assert (histo.min, histo.max, histo.num) == (-1e30, 7e25, 8.0)
    total = 0.0
    squares = 0.0
    for x in values:  # TF adds the values in order
        total += x
        squares += x * x
    assert histo.sum == total and histo.sum_squares == squares
    limits, counts = reference_histogram(values)
    assert list(histo.bucket_limit) == limits and list(histo.bucket) == counts


def test_histogram_summary_random_values_and_int_input(sess):
    values = np.random.RandomState(3).standard_normal(1000).astype(np.float32) * 5
    ints = np.array([1, 2, 2, -7], np.int32)
    h = tf.summary.histogram("h", values)
    i = tf.summary.histogram("i", ints)
    hv, iv = sess.run([h, i])
    histo = parse(hv).value[0].histo
    limits, counts = reference_histogram(values.astype(np.float64))
    assert list(histo.bucket_limit) == limits and list(histo.bucket) == counts
    assert histo.num == 1000 and sum(histo.bucket) == 1000
    np.testing.assert_allclose(histo.sum, values.astype(np.float64).sum(), rtol=1e-12)
    ihisto = parse(iv).value[0].histo
    assert (ihisto.min, ihisto.max, ihisto.sum, ihisto.sum_squares) == (-7, 2, -2, 58)
    assert list(ihisto.bucket) == reference_histogram([1.0, 2.0, 2.0, -7.0])[1]


def test_histogram_summary_empty(sess):
    histo = parse(sess.run(tf.summary.histogram("e", tf.zeros([0])))).value[0].histo
    assert (histo.min, histo.max, histo.num, histo.sum) == (DBL_MAX, -DBL_MAX, 0, 0)
    assert list(histo.bucket_limit) == [DBL_MAX] and list(histo.bucket) == [0.0]


@pytest.mark.parametrize("values,message", [
    # TF 2.21's messages: the first value that is not finite picks the wording
    ([1.0, np.nan], "Nan in summary histogram for: nanh"),
    ([1.0, np.inf], "Infinity in Histogram for: nanh"),
    ([1.0, -np.inf], "Infinity in Histogram for: nanh"),
    ([np.inf, np.nan], "Infinity in Histogram for: nanh"),
    ([np.nan, np.inf], "Nan in summary histogram for: nanh")])
def test_histogram_summary_non_finite(sess, values, message):
    h = tf.summary.histogram("nanh", tf.constant(values))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(h)
    assert info.value.message.split("\n")[0] == message


@pytest.mark.parametrize("build,message", [
    (lambda: tf.raw_ops.HistogramSummary(tag=["a", "b"], values=[1.0, 2.0]),
     "tags must be scalar"),
    (lambda: tf.raw_ops.TensorSummaryV2(tag=["a"], tensor=[1.0],
                                        serialized_summary_metadata=""),
     "tag must be scalar")])
def test_tag_must_be_scalar(sess, build, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(build())
    assert info.value.message.split("\n")[0] == message


# --- tensor and text ------------------------------------------------------------------------
def test_tensor_summary(sess):
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = tf.summary.tensor_summary("ts", tf.constant(x), summary_description="desc",
                                  display_name="shown")
    assert t.op.type == "TensorSummaryV2" and t.op.name == "ts"
    value = parse(sess.run(t)).value[0]
    assert value.tag == "ts"
    assert value.metadata.summary_description == "desc"
    assert value.metadata.display_name == "shown"
    got = tb_tensor_util.make_ndarray(value.tensor)
    assert got.dtype == np.int64 and got.tolist() == x.tolist()


def test_tensor_summary_keeps_given_metadata(sess):
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="custom",
                                                           content=b"\x01\x02"))
    t = tf.summary.tensor_summary("t", tf.constant(2.5), summary_metadata=meta)
    value = parse(sess.run(t)).value[0]
    assert value.metadata.plugin_data.plugin_name == "custom"
    assert value.metadata.plugin_data.content == b"\x01\x02"
    assert tb_tensor_util.make_ndarray(value.tensor).dtype == np.float32


def test_old_tensor_summary_op_and_its_description(sess):
    from tensorweave.framework import graph_def_proto
    from tensorweave.framework.op_builder import apply_op
    t = apply_op("TensorSummary", [np.array([1.0, 2.0], np.float32)],
                 {"description": '{"typeHint": "scalar"}', "labels": ["a"],
                  "display_name": "dn"}, name="ts").outputs[0]
    assert t.shape.as_list() == [] and t.dtype == tf.string
    value = parse(sess.run(t)).value[0]
    assert value.node_name == "ts" and value.tag == ""
    assert tb_tensor_util.make_ndarray(value.tensor).tolist() == [1.0, 2.0]
    for node_def in (t.op.node_def, graph_def_proto.graph_to_proto(t.graph).node[-1]):
        description = tf.summary.get_summary_description(node_def)
        assert isinstance(description, tf.summary.SummaryDescription)
        assert description.type_hint == "scalar"
    with pytest.raises(ValueError, match="Can't get_summary_description on ScalarSummary"):
        tf.summary.get_summary_description(tf.summary.scalar("x", 1.0).op.node_def)


def test_text_summary(sess):
    t = tf.summary.text("note", tf.constant([["a", "b"], ["c", "ü"]]))
    value = parse(sess.run(t)).value[0]
    assert value.tag == "note" and value.metadata.plugin_data.plugin_name == "text"
    assert value.tensor.dtype == tf.string.as_datatype_enum
    got = tb_tensor_util.make_ndarray(value.tensor)
    assert got.shape == (2, 2) and got[1, 1] == "ü".encode()


def test_text_summary_needs_strings(graph):
    with pytest.raises(ValueError, match="to have dtype string, got"):
        tf.summary.text("n", tf.constant(1.0))


# --- merge ----------------------------------------------------------------------------------
def test_merge_and_merge_all(graph):
    assert tf.summary.merge_all() is None
    a = tf.summary.scalar("a", 1.0)
    b = tf.summary.histogram("b", [1.0, 2.0])
    with tf.name_scope("inner"):
        c = tf.summary.scalar("c", 3.0)
    m = tf.summary.merge_all()
    assert m.op.name == "Merge/MergeSummary" and m.op.type == "MergeSummary"
    assert list(m.op.inputs) == [a, b, c] and m.shape.as_list() == []
    named = tf.summary.merge([a], name="mm", collections=["merged"])
    assert named.op.name == "mm/mm" and graph.get_collection("merged") == [named]
    only_inner = tf.summary.merge_all(scope="inner")
    with tf.Session() as sess:
        out, one, inner = sess.run([m, named, only_inner])
    assert [v.tag for v in parse(out).value] == ["a", "b", "inner/c"]
    assert parse(out).value[1].histo.num == 2
    assert [v.tag for v in parse(one).value] == ["a"]
    assert [v.tag for v in parse(inner).value] == ["inner/c"]


def test_merge_duplicate_tag(sess):
    s = tf.summary.scalar("loss", 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(tf.summary.merge([s, s]))
    # TF's message ends in a space
    assert info.value.message.split("\n")[0] == "Duplicate tag loss found in summary inputs "


def test_all_v2_summary_ops_leaves_out_the_tf1_ops(graph):
    tf.summary.scalar("a", 1.0)
    assert tf.summary.all_v2_summary_ops() == []
    marker = tf.constant(1.0, name="v2_style")     # what a V2 summary op joins
    graph.add_to_collection("_SUMMARY_V2", marker)
    assert tf.summary.all_v2_summary_ops() == [marker]


def test_merge_name_is_cleaned_as_a_tag(graph):
    # TF cleans the name as a summary tag: "my merge" names the scope and op "my_merge"
    m = tf.summary.merge([tf.summary.scalar("a", 1.0)], name="my merge")
    assert m.op.name == "my_merge/my_merge"


def test_merge_unparsable_input(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Could not parse one of the summary inputs"):
        sess.run(tf.summary.merge([tf.constant(b"\xff\xff\xff")]))


@pytest.mark.parametrize("op_type", ["ScalarSummary", "HistogramSummary", "TensorSummaryV2",
                                     "TensorSummary", "MergeSummary"])
def test_summary_ops_are_not_differentiable(op_type):
    from tensorweave.framework import registry
    assert registry.get_gradient(op_type) == (True, None)


# --- against real TensorFlow ----------------------------------------------------------------
def _tf_summaries():
    path = os.path.join(DATA, "tf_events", "events.out.tfevents.fixture")
    return {e.step: e.summary for e in tf.train.summary_iterator(path)
            if e.HasField("summary")}


def _fixture_graph():
    sys.path.insert(0, DATA)
    try:
        from summary_inputs import build_summaries, inputs
    finally:
        sys.path.remove(DATA)
    ph, merged = build_summaries(tf)
    return ph, inputs, merged


def test_same_summaries_as_tensorflow(graph, sess):
    from PIL import Image
    import io
    expected = _tf_summaries()
    assert sorted(expected) == [0, 1, 2]
    ph, inputs, merged = _fixture_graph()
    for step, want in expected.items():
        got = parse(sess.run(merged, {ph[k]: v for k, v in inputs(step).items()}))
        assert [v.tag for v in got.value] == [v.tag for v in want.value]
        assert [v.tag for v in got.value] == [  # the placeholders took the plain names
            "loss_1", "params/params/weights", "images_1/image/0", "images_1/image/1",
            "gray_1/image", "audio_1/audio", "note"]
        for g, w in zip(got.value, want.value):
            if w.HasField("image"):
                assert (g.image.height, g.image.width, g.image.colorspace) == (
                    w.image.height, w.image.width, w.image.colorspace)
                pixels = [np.asarray(Image.open(io.BytesIO(v.image.encoded_image_string)))
                          for v in (g, w)]
                np.testing.assert_array_equal(pixels[0], pixels[1])
            else:
                if step > 0:  # TF's FileWriter keeps a tag's metadata only the first time
                    g.ClearField("metadata")
                assert g == w, "step %d, tag %s" % (step, w.tag)


def test_merge_of_nothing_and_a_summary_without_a_name_raise(graph):
    with pytest.raises(ValueError, match="shorter than minimum length 1"):
        tf.summary.merge([])
    with pytest.raises(ValueError, match=r"At least one of name \(None\) and default_name"):
        tf.summary.scalar(None, 1.0)


def test_histogram_buckets_are_a_binary_search_of_tfs_limits():
    """summary_ops.bucket_of (a table over the top bits of |v|, one comparison) is the
    binary search of TF's default limits, on limits themselves, their neighbours, zeros,
    subnormals and random values of every magnitude."""
    from tensorweave.ops.summary import summary_ops
    limits = summary_ops.default_bucket_limits()
    rs = np.random.RandomState(0)
    with np.errstate(all="ignore"):
        values = np.concatenate([
            rs.randn(50000) * 10.0 ** rs.uniform(-320, 300, 50000),
            limits, np.nextafter(limits, np.inf), np.nextafter(limits, -np.inf),
            [0.0, -0.0, 5e-324, -5e-324, 1e-12, -1e-12, 1e20, -1e20]])
    values = values[np.isfinite(values)]
    np.testing.assert_array_equal(summary_ops.bucket_of(values),
                                  np.searchsorted(limits, values, side="right"))
