"""SavedModels written by TF 2.x (tf.saved_model.save in TF 2.21, Keras 2's model.save in
TF 2.15), served by a TF1 program through tf.saved_model.loader.load, through
tf.train.import_meta_graph with Saver.restore, and frozen by
tf.graph_util.convert_variables_to_constants. The expected values are the ones TF 2.21's
compat.v1 loader served (tests/fixtures/tf2_saved_models, see its README)."""
import os

import numpy as np
import pytest

import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf2_saved_models")
MODELS = ["tf2_21/" + m for m in ("dense", "control_flow", "multi", "table", "strings",
                                  "counter", "math", "functions", "image", "types",
                                  "mutable_tables", "linalg", "vocabulary",
                                  "keras3_export_cnn", "keras3_export_lstm")] + \
         ["tf2_15/" + m for m in ("mlp", "cnn", "rnn", "string_lookup", "attention",
                                  "convolutions", "text_vectorization", "preprocessing",
                                  "two_inputs")]
# outputs of random ops: TF's distribution, not TF's bits (see ops/random)
RANDOM_OUTPUTS = {"out/serving_default/random"}
# freezing keeps what only reads variables; TF 2.21 itself writes a graph it cannot import
# for strings and attention (ResourceGather in a function), tensorweave freezes them
FREEZABLE = [m for m in MODELS if not m.endswith((
    "table", "counter", "vocabulary", "string_lookup", "text_vectorization", "preprocessing",
    "mutable_tables"))]


def _path(model):
    return os.path.join(FIXTURES, model)


def _expected(model):
    with np.load(os.path.join(_path(model), "expected.npz")) as data:
        return {k: data[k] for k in data.files}


def _as_fed(value):
    return value.astype(object) if value.dtype.kind == "S" else value


def _feeds(signature, expected, key):
    return {info.name: _as_fed(expected["in/%s/%s" % (key, name)])
            for name, info in signature.inputs.items()}


def _fetches(signature):
    return {k: v.name for k, v in signature.outputs.items()}


def _check(got, expected, key):
    for name, value in got.items():
        want = expected["out/%s/%s" % (key, name)]
        value = np.asarray(value)
        assert value.shape == want.shape, name
        if "out/%s/%s" % (key, name) in RANDOM_OUTPUTS:
            assert value.dtype == want.dtype and ((0 <= value) & (value < 1)).all()
        elif want.dtype.kind == "S":
            assert value.dtype == object and value.astype(bytes).tolist() == want.tolist()
        else:
            assert value.dtype == want.dtype, name
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=name)


def _serving_keys(meta_graph):
    return sorted(k for k in meta_graph.signature_def if not k.startswith("__"))


@pytest.mark.parametrize("model", MODELS)
def test_loader_serves_every_signature_as_tensorflow_does(model):
    expected = _expected(model)
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], _path(model))
        keys = _serving_keys(meta_graph)
        assert {k.split("/")[1] for k in expected if k.startswith("out/")} == set(keys)
        for key in keys:
            signature = meta_graph.signature_def[key]
            got = sess.run(_fetches(signature), _feeds(signature, expected, key))
            _check(got, expected, key)


def _meta_graph(model):
    from tensorweave.saved_model import saved_model_file
    return saved_model_file.read(_path(model)).meta_graphs[0]


def _restore_by_hand(sess, model):
    """What a TF1 program does without the loader: import the MetaGraphDef, restore the
    variables through its saver_def, run the init op with the assets' paths fed."""
    meta_graph = _meta_graph(model)
    saver = tf.train.import_meta_graph(meta_graph)
    saver.restore(sess, os.path.join(_path(model), "variables", "variables"))
    init = meta_graph.signature_def["__saved_model_init_op"].outputs["__saved_model_init_op"]
    assets = {a.tensor_info.name: os.path.join(_path(model), "assets", a.filename)
              for a in meta_graph.asset_file_def}
    sess.run(init.name, assets)
    return meta_graph.signature_def["serving_default"]


@pytest.mark.parametrize("model", MODELS)
def test_import_meta_graph_and_saver_restore_serve_the_same(model):
    expected = _expected(model)
    with tf.Session(graph=tf.Graph()) as sess:
        signature = _restore_by_hand(sess, model)
        got = sess.run(_fetches(signature), _feeds(signature, expected, "serving_default"))
    _check(got, expected, "serving_default")


@pytest.mark.parametrize("model", FREEZABLE)
def test_frozen_graph_serves_the_same(model):
    expected = _expected(model)
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], _path(model))
        signature = meta_graph.signature_def["serving_default"]
        outputs = [v.name.split(":")[0] for v in signature.outputs.values()]
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), outputs)
    assert not any(n.op in ("VarHandleOp", "RestoreV2") for n in frozen.node)
    with tf.Session(graph=tf.Graph()) as sess:
        tf.import_graph_def(frozen, name="")
        got = sess.run(_fetches(signature), _feeds(signature, expected, "serving_default"))
    _check(got, expected, "serving_default")


def test_stateful_signature_updates_restored_variables():
    expected = _expected("tf2_21/counter")
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], _path("tf2_21/counter"))
        signature = meta_graph.signature_def["serving_default"]
        feeds = _feeds(signature, expected, "serving_default")
        sess.run(_fetches(signature), feeds)
        got = sess.run(_fetches(signature), feeds)
        assert got["count"] == 2
        x = feeds[signature.inputs["x"].name]
        np.testing.assert_allclose(got["mean"], x.sum(), rtol=1e-6)  # 2 sums over 2 calls
        outputs = [v.name.split(":")[0] for v in signature.outputs.values()]
        with pytest.raises(ValueError, match="AssignAddVariableOp"):
            # TF 2.21 writes a graph that fails to import (ValueError); this fails sooner
            tf.graph_util.convert_variables_to_constants(
                sess, sess.graph.as_graph_def(), outputs)


def test_keras3_model_fails_as_in_tensorflow():
    # TF 2.21's own compat.v1 loader raises FailedPreconditionError here too: Keras 3
    # names each variable apart from the resource its functions read
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="dense"):
            meta_graph = tf.saved_model.loader.load(sess, ["serve"],
                                                    _path("tf2_21/keras3_mlp"))
            signature = meta_graph.signature_def["serving_default"]
            feed = {v.name: np.zeros([1, 6], np.float32) for v in signature.inputs.values()}
            sess.run(_fetches(signature), feed)


def test_feeding_a_wrong_shape_is_a_value_error():
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], _path("tf2_21/dense"))
        signature = meta_graph.signature_def["serving_default"]
        with pytest.raises(ValueError, match="shape"):
            sess.run(_fetches(signature),
                     {signature.inputs["x"].name: np.zeros([2, 5], np.float32)})


def test_type_attrs_tf_leaves_at_their_default_are_filled_in():
    # TF 2's savers strip attrs at their OpDef default from function bodies: MaxPool's T
    # (float32) and the stateless random ops' shape type T (int32) arrive unset
    from tensorboard.compat.proto import graph_pb2
    graph_def = graph_pb2.GraphDef()
    x = graph_def.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = tf.float32.as_datatype_enum
    pool = graph_def.node.add(name="pool", op="MaxPool", input=["x"])
    pool.attr["ksize"].list.i.extend([1, 2, 2, 1])
    pool.attr["strides"].list.i.extend([1, 2, 2, 1])
    pool.attr["padding"].s = b"VALID"
    for name, value, dtype in (("shape", [2], tf.int32), ("seed", [1, 2], tf.int64)):
        const = graph_def.node.add(name=name, op="Const")
        const.attr["dtype"].type = dtype.as_datatype_enum
        const.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value, dtype))
    graph_def.node.add(name="noise", op="StatelessRandomNormal", input=["shape", "seed"])
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        assert graph.get_operation_by_name("pool").get_attr("T") == tf.float32
        noise = graph.get_operation_by_name("noise")
        assert noise.get_attr("T") == tf.int32 and noise.get_attr("dtype") == tf.float32
        with tf.Session() as sess:
            got = sess.run("pool:0", {"x:0": np.arange(16.0).reshape(1, 4, 4, 1)})
            assert sess.run("noise:0").shape == (2,)
    np.testing.assert_array_equal(got.reshape(2, 2), [[5, 7], [13, 15]])


def test_every_type_attr_tf_defaults_has_the_same_default_here():
    # what TF 2.21's OpDefs default (tf_type_attr_defaults.json); attrs newer than ours
    # (absent here) are accepted at their default by name elsewhere (raw_ops)
    import json
    import tensorweave.data  # noqa: F401  (registers the tf.data ops)
    from tensorweave.framework import registry
    with open(os.path.join(FIXTURES, "tf_type_attr_defaults.json")) as f:
        tf_defaults = json.load(f)
    ops = registry.registered_ops()
    checked, wrong = 0, []
    for op_type, attrs in sorted(tf_defaults.items()):
        for name, dtype in attrs.items():
            attr = ops[op_type].attrs.get(name) if op_type in ops else None
            if not isinstance(attr, registry.TypeAttr):
                continue
            checked += 1
            if attr.default is registry.REQUIRED or attr.default != tf.as_dtype(dtype):
                wrong.append((op_type, name, dtype, attr.default))
    assert not wrong
    assert checked > 150


def test_two_models_load_into_one_session_under_import_scopes():
    # as TF 2.21 serves them: each model's names under its scope, its own values
    with tf.Session(graph=tf.Graph()) as sess:
        for scope, model in (("first", "tf2_21/dense"), ("second", "tf2_21/table")):
            expected = _expected(model)
            meta_graph = tf.saved_model.loader.load(sess, ["serve"], _path(model),
                                                    import_scope=scope)
            signature = meta_graph.signature_def["serving_default"]
            feeds = {"%s/%s" % (scope, k): v for k, v in
                     _feeds(signature, expected, "serving_default").items()}
            got = sess.run({k: "%s/%s" % (scope, v) for k, v in _fetches(signature).items()},
                           feeds)
            _check(got, expected, "serving_default")
