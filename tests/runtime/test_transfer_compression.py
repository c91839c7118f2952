"""Lossy transfer compression (white paper §5.5): ConfigProto.experimental
.transfer_compression narrows cross-device float32 transfers to bfloat16 or float16."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import dtypes as _dt
from tensorweave.runtime import send_recv_ops as _sr
from tensorweave.runtime.partitioned_plan import PartitionedPlan

NARROW = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
# unit roundoff of round-to-nearest: 2**-precision (8 bits for bfloat16, 11 for float16)
BOUND = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}
# exactly representable in both 16-bit types
EXACT = np.array([0.0, -0.0, 1.0, -2.5, 0.375, 1024.0, 3.0 * 2 ** -10, -96.0, 0.5],
                 np.float32)


def _config(mode="", n=2, **kw):
    return tf.ConfigProto(device_count={"CPU": n},
                          experimental={"transfer_compression": mode}, **kw)


def _partition_graphs(sess, fetches, feed_dict):
    md = tf.RunMetadata()
    result = sess.run(fetches, feed_dict,
                      options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    return result, md.partition_graphs


def _transfers(graphs):
    """{node name: (op type, _transfer_dtype attr or None)} of every Send/Recv."""
    out = {}
    for gd in graphs:
        for n in gd.node:
            if n.op in ("_Send", "_Recv"):
                attr = n.attr["_transfer_dtype"].type if "_transfer_dtype" in n.attr else None
                out[n.name] = (n.op, attr)
    return out


def _cross(dtype=tf.float32, shape=(None,)):
    with tf.device("/cpu:0"):
        x = tf.placeholder(dtype, shape, name="x")
    with tf.device("/cpu:1"):
        y = tf.identity(x, name="y")
    return x, y


# --- configuration -------------------------------------------------------------------------
def test_the_field_defaults_to_off():
    assert tf.ConfigProto().experimental.transfer_compression == ""
    assert _sr.transfer_compression(None) is None
    assert _sr.transfer_compression(tf.ConfigProto()) is None
    assert _sr.transfer_compression(_config("bfloat16")) is _dt.bfloat16
    assert _sr.transfer_compression(_config("float16")) is _dt.float16
    c = tf.ConfigProto()
    c.experimental.transfer_compression = "float16"
    assert _sr.transfer_compression(c) is _dt.float16


def test_an_unknown_type_raises_invalid_argument(graph):
    x, y = _cross()
    with tf.Session(config=_config("int8")) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="transfer_compression must be one of .*'int8'"):
            sess.run(y, {x: [1.0]})


def test_off_sends_references_and_adds_no_attr(graph):
    x, y = _cross()
    with tf.Session(config=_config("")) as sess:
        v = np.array([1 / 3, 1e30], np.float32)
        out, graphs = _partition_graphs(sess, y, {x: v})
        assert out is v  # passed by reference, unchanged
        transfers = _transfers(graphs)
        assert len(transfers) == 2
        assert all(attr is None for _, attr in transfers.values())
        plan = sess._get_plan((y,), (), (x,))
        assert all(n.op.narrow is None for g in plan.step_graphs for n in g.nodes
                   if n.type == "_Send")


# --- values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bfloat16", "float16"])
def test_representable_values_arrive_exactly(graph, mode):
    x, y = _cross()
    with tf.Session(config=_config(mode)) as sess:
        out, graphs = _partition_graphs(sess, y, {x: EXACT})
    assert type(out) is np.ndarray and out.dtype == np.float32
    np.testing.assert_array_equal(out, EXACT)
    assert np.signbit(out[1])
    wire = tf.as_dtype(NARROW[mode]).as_datatype_enum
    assert sorted(_transfers(graphs).values()) == [("_Recv", wire), ("_Send", wire)]


@pytest.mark.parametrize("mode", ["bfloat16", "float16"])
def test_other_values_are_rounded_to_nearest_within_the_bound(graph, mode):
    x, y = _cross(shape=(3, 400))
    rng = np.random.RandomState(1)
    lo, hi = {"bfloat16": (-30, 30), "float16": (-4, 4)}[mode]  # normal range of each
    v = (np.sign(rng.standard_normal((3, 400))) *
         10.0 ** rng.uniform(lo, hi, (3, 400))).astype(np.float32)
    with tf.Session(config=_config(mode)) as sess:
        out = sess.run(y, {x: v})
    assert out.dtype == np.float32 and out.shape == (3, 400)
    expected = v.astype(NARROW[mode]).astype(np.float32)  # round to nearest even
    np.testing.assert_array_equal(out, expected)
    rel = np.abs(out.astype(np.float64) - v) / np.abs(v)
    assert rel.max() <= BOUND[mode]
    assert rel.max() > BOUND[mode] / 4  # lossy: not an exact transfer
    assert not np.array_equal(out, v)


def test_float16_overflows_and_bfloat16_keeps_the_range(graph):
    x, y = _cross()
    v = np.array([1e5, -7e4, 1e-30, 3e38], np.float32)
    with tf.Session(config=_config("float16")) as sess:
        half = sess.run(y, {x: v})
    with tf.Session(config=_config("bfloat16")) as sess:
        bf = sess.run(y, {x: v})
    np.testing.assert_array_equal(half, [np.inf, -np.inf, 0.0, np.inf])
    assert np.all(np.isfinite(bf)) and np.all(np.abs(bf - v) <= np.abs(v) * 2.0 ** -8)


def test_scalars_keep_their_shape_and_type(graph):
    x, y = _cross(shape=())
    with tf.Session(config=_config("bfloat16")) as sess:
        out = sess.run(y, {x: np.float32(1 / 3)})
    assert out.shape == () and out.dtype == np.float32
    assert out == np.float32(ml_dtypes.bfloat16(1 / 3))


@pytest.mark.parametrize("dtype", [tf.float64, tf.int32, tf.float16, tf.bfloat16,
                                   tf.string])
def test_other_dtypes_are_untouched(graph, dtype):
    x, y = _cross(dtype)
    v = {tf.float64: np.array([1 / 3, 1e300]), tf.int32: np.array([7, -2**31], np.int32),
         tf.float16: np.array([0.1], np.float16),
         tf.bfloat16: np.array([0.1], ml_dtypes.bfloat16),
         tf.string: np.array([b"ab", b""], object)}[dtype]
    with tf.Session(config=_config("bfloat16")) as sess:
        out, graphs = _partition_graphs(sess, y, {x: v})
    assert out is v
    assert all(attr is None for _, attr in _transfers(graphs).values())


def test_only_the_float32_transfers_of_a_step_are_compressed(graph):
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [2], name="a")
        i = tf.placeholder(tf.int64, [2], name="i")
        before = tf.square(a, name="before")
    with tf.device("/cpu:1"):
        with tf.control_dependencies([before]):
            s = tf.add(a, tf.cast(i, tf.float32), name="s")
    with tf.device("/cpu:0"):
        back = tf.multiply(s, 1.0, name="back")
    with tf.Session(config=_config("float16")) as sess:
        out, graphs = _partition_graphs(sess, back, {a: [0.1, 2.0], i: [1, 2]})
    np.testing.assert_array_equal(out, np.array([1.1, 4.0], np.float16).astype(np.float32))
    half = tf.float16.as_datatype_enum
    t = _transfers(graphs)
    assert t["a_0/_send_to_CPU_1"] == ("_Send", half)  # a feed: named by its tensor
    assert t["a_0/_recv_from_CPU_0"] == ("_Recv", half)
    assert t["s_0/_send_to_CPU_0"] == ("_Send", half)  # and back again
    assert t["i_0/_send_to_CPU_1"] == ("_Send", None)  # int64
    control = [k for k in t if "_control_to_" in k]
    assert control and all(t[k][1] is None for k in control)  # control edges: empty values


def test_variables_read_across_devices_travel_compressed_and_stay_exact(graph):
    value = np.array([1 / 3, 2.0, -1e-3], np.float32)
    with tf.device("/cpu:1"):
        v = tf.Variable(value, name="v")
    with tf.device("/cpu:0"):
        y = tf.multiply(v, 1.0, name="y")
    with tf.Session(config=_config("bfloat16")) as sess:
        sess.run(v.initializer)
        out, graphs = _partition_graphs(sess, y, None)
        stored = sess.run(v)
    np.testing.assert_array_equal(out, value.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(stored, value)  # fetched on its own device: exact
    bf = tf.bfloat16.as_datatype_enum
    assert sorted(_transfers(graphs).values()) == [("_Recv", bf), ("_Send", bf)]


def test_the_pass_marks_the_pair_and_the_attr_names_the_wire_type(graph):
    x, y = _cross()
    with tf.Session(config=_config("bfloat16")) as sess:
        plan = sess._get_plan((y,), (), (x,))
    assert isinstance(plan, PartitionedPlan)
    nodes = [n for g in plan.step_graphs for n in g.nodes if n.type in ("_Send", "_Recv")]
    assert {n.attrs["_transfer_dtype"] for n in nodes} == {_dt.bfloat16}
    send = [n for n in nodes if n.type == "_Send"][0]
    recv = [n for n in nodes if n.type == "_Recv"][0]
    assert send.attrs["T"] == _dt.float32 and recv.attrs["tensor_type"] == _dt.float32
    assert send.op.narrow is not None and recv.op.narrow is None
    assert recv.op.copy is not None


# --- the simulated accelerator: the 16-bit value is what crosses memory spaces -----------
def test_compressed_copies_to_the_simulated_accelerator_carry_half_the_bytes(graph):
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1},
                            experimental={"transfer_compression": "float16"})
    with tf.Session(graph=tf.Graph(), config=config) as probe:
        assert any(d.device_type == "SIM" for d in probe.list_devices())
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [250], name="x")
    with tf.device("/device:SIM:0"):
        y = x * 2.0
    with tf.device("/cpu:0"):
        z = y + 1.0
    with tf.Session(config=config) as sess:
        v = np.arange(250, dtype=np.float32) / 7
        out = sess.run(z, {x: v})
        sim = [d for d in sess._device_manager.devices if d.device_type == "SIM"][0]
        # the constant 2.0 is copied in once, uncompressed, when the step is lowered
        assert sim.copy_stats == {"to_host": 1, "from_host": 2, "bytes_to_host": 500,
                                  "bytes_from_host": 504}
    h = v.astype(np.float16).astype(np.float32)
    expected = ((h * 2.0).astype(np.float16).astype(np.float32) + 1.0).astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32


# --- training: variables on CPU:1, compute on CPU:0 --------------------------------------
def _train(mode, steps=60):
    rng = np.random.RandomState(0)
    data = rng.standard_normal((256, 8)).astype(np.float32)
    w_true = rng.standard_normal((8, 1)).astype(np.float32)
    target = data @ w_true + 0.01 * rng.standard_normal((256, 1)).astype(np.float32)
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            w = tf.Variable(tf.zeros([8, 1]), name="w")
            b = tf.Variable(0.0, name="b")
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None, 8])
            t = tf.placeholder(tf.float32, [None, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - t))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(config=_config(mode)) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(train, {x: data, t: target},
                     options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
            for _ in range(steps - 1):
                sess.run(train, {x: data, t: target})
            final = sess.run(loss, {x: data, t: target})
    return final, _transfers(md.partition_graphs)


def test_training_with_compression_converges_like_without():
    exact, t_off = _train("")
    bf, t_bf = _train("bfloat16")
    half, _ = _train("float16")
    assert exact < 1.2e-4  # converged to the noise floor (noise variance 1e-4)
    assert all(a is None for _, a in t_off.values())
    bf_enum = tf.bfloat16.as_datatype_enum
    compressed = [k for k, (_, a) in t_bf.items() if a == bf_enum]
    assert len(compressed) >= 4  # w, b to CPU:0 and their gradients back
    assert bf != exact and half != exact  # the transfers were lossy
    assert bf < 2e-4 and half < 1.2e-4  # near the floor too: float16 closer than bfloat16
