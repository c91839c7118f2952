"""tf.saved_model: SavedModels written here load here and in TensorFlow (checked by hand
with tests/fixtures/tf1/check_ours_in_tf.py), and TensorFlow's load here
(tests/fixtures/tf1/saved_model, made by make_saved_model_fixture.py with TF 2.21)."""
import os
import shutil

import numpy as np
import pytest

import tensorweave as tf

HERE = os.path.dirname(os.path.abspath(__file__))
TF_MODEL = os.path.join(os.path.dirname(HERE), "fixtures", "tf1", "saved_model")
FEED_X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], np.float32)
FEED_WORDS = np.array([b"cat", b"dog", b"emu", b"fish"], dtype=object)
W0 = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
B0 = np.array([0.5, -1.0], np.float32)


# --- TensorFlow's SavedModel ---------------------------------------------------------------
def test_a_saved_model_written_by_tensorflow_loads_and_serves(tmp_path):
    moved = str(tmp_path / "moved")
    shutil.copytree(TF_MODEL, moved)  # asset paths are found wherever the model is
    expected = np.load(os.path.join(TF_MODEL, "expected.npz"))
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], moved)
        assert list(mg.meta_info_def.tags) == ["serve"]
        sig = mg.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == tf.saved_model.PREDICT_METHOD_NAME
        assert tf.saved_model.is_valid_signature(sig)
        assert tf.saved_model.is_valid_signature(mg.signature_def["classify"])
        x = tf.saved_model.utils.get_tensor_from_tensor_info(sig.inputs["x"])
        assert x.shape.as_list() == [None, 3] and x.dtype == tf.float32
        y = tf.saved_model.get_tensor_from_tensor_info(sig.outputs["y"], sess.graph)
        got, greeting, ids, sizes = sess.run(
            [y] + [sig.outputs[k].name for k in ("greeting", "ids", "sizes")],
            {x: FEED_X, sig.inputs["words"].name: FEED_WORDS})
    np.testing.assert_array_equal(got, expected["y"])
    np.testing.assert_allclose(got, FEED_X @ W0 + B0, rtol=1e-6)
    assert greeting == b"hello from the assets\n"  # the main op read the moved asset
    # TF's tables: one read from the vocabulary asset, one from constants
    np.testing.assert_array_equal(ids, expected["ids"])
    assert ids.tolist() == [0, 1, -1, 2]
    np.testing.assert_array_equal(sizes, expected["sizes"])


def test_a_tf2_written_model_parsing_examples_loads_and_serves():
    # TF 2 writes ParseExampleV2, Bucketize and its own save graph for a TF1 program
    path = os.path.join(os.path.dirname(TF_MODEL), "parsing_saved_model")
    expected = np.load(os.path.join(path, "expected.npz"))
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        signature = meta.signature_def["serving_default"]
        feed = {signature.inputs["serialized"].name: [expected["example"].tobytes(), b""]}
        got = sess.run({k: v.name for k, v in signature.outputs.items()}, feed)
    for key in ("x", "buckets", "y"):
        np.testing.assert_array_equal(got[key], expected[key])
        assert got[key].dtype == expected[key].dtype


def test_the_other_tag_set_under_an_import_scope(graph, tmp_path):
    with tf.Session() as sess:
        mg = tf.saved_model.load(sess, ["train"], TF_MODEL, import_scope="m")
        assert list(mg.meta_info_def.tags) == ["train"] and not mg.signature_def
        assert sess.run("m/greeting:0") == b"hello from the assets\n"
        w = graph.get_tensor_by_name("m/w:0")
        np.testing.assert_array_equal(sess.run(w), W0)
        sess.run("m/train", {"m/x:0": FEED_X})  # the saved train op trains
        assert not np.array_equal(sess.run(w), W0)


# --- our SavedModels ------------------------------------------------------------------------
def _model(asset_dir):
    """A linear layer with a variable the main op fills from an asset."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(W0, name="w")
    b = tf.get_variable("b", initializer=B0)
    y = tf.add(tf.matmul(x, w), b, name="y")
    paths = []
    for sub, text in (("a", b"first"), ("b", b"second")):  # same base name, other bytes
        os.makedirs(os.path.join(asset_dir, sub), exist_ok=True)
        path = os.path.join(asset_dir, sub, "motd.txt")
        with open(path, "wb") as f:
            f.write(text)
        paths.append(tf.constant(path, name="motd_" + sub))
    motd = tf.Variable(b"", name="motd", trainable=False)
    main_op = tf.group(motd.assign(tf.strings.join([tf.read_file(p) for p in paths],
                                                    separator="+")), name="main_op")
    loss = tf.reduce_sum(tf.square(y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, y, w, motd, paths, main_op, train


def test_builder_round_trip_with_two_tag_sets_and_assets(tmp_path):
    export = str(tmp_path / "model")
    with tf.Graph().as_default():
        x, y, w, motd, paths, main_op, train = _model(str(tmp_path / "src"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: FEED_X})  # saved values differ from the initial ones
            w_saved = sess.run(w)
            builder = tf.saved_model.builder.SavedModelBuilder(export)
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.SERVING, tf.saved_model.GPU],
                signature_def_map={"serving_default": tf.saved_model.predict_signature_def(
                    {"x": x}, {"y": y, "motd": motd.value()})},
                assets_collection=paths, main_op=main_op)
            builder.add_meta_graph([tf.saved_model.TRAINING])
            assert builder.save() == os.fsencode(os.path.join(export, "saved_model.pb"))
    assert sorted(os.listdir(os.path.join(export, "assets"))) == ["motd.txt", "motd.txt_1"]
    assert sorted(os.listdir(os.path.join(export, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    shutil.rmtree(str(tmp_path / "src"))  # the copies are what the loader reads
    assert tf.saved_model.maybe_saved_model_directory(export)
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, {"gpu", "serve"}, export)
        sig = mg.signature_def["serving_default"]
        got, text = sess.run([sig.outputs["y"].name, sig.outputs["motd"].name],
                             {sig.inputs["x"].name: FEED_X})
        np.testing.assert_allclose(got, FEED_X @ w_saved + sess.run("b:0"), rtol=1e-6)
        assert text == b"first+second"
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["train"], export)
        np.testing.assert_array_equal(sess.run("w:0"), w_saved)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError, match=r"MetaGraphDef associated with tags 'serve' "
                           r"could not be found in SavedModel, with available tags "):
            tf.saved_model.loader.load(sess, ["serve"], export)


def test_simple_save_as_text_and_the_signature_it_writes(tmp_path):
    export = str(tmp_path / "simple")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        sp = tf.sparse_placeholder(tf.int64, name="ids")
        w = tf.Variable(W0, name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(w.initializer)
            tf.saved_model.simple_save(sess, export, {"x": x, "ids": sp}, {"y": y})
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.load(sess, [tf.saved_model.SERVING], export)
        sig = mg.signature_def["serving_default"]
        assert sig.method_name == "tensorflow/serving/predict"
        assert sig.inputs["x"].dtype == tf.float32.as_datatype_enum
        assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]
        assert sig.inputs["ids"].WhichOneof("encoding") == "coo_sparse"
        ids = tf.saved_model.get_tensor_from_tensor_info(sig.inputs["ids"])
        assert isinstance(ids, tf.SparseTensor) and ids.dtype == tf.int64
        assert all(not n.device for n in mg.graph_def.node)  # simple_save clears devices
        np.testing.assert_allclose(sess.run("y:0", {"x:0": FEED_X}), FEED_X @ W0, rtol=1e-6)
    # the text form
    text_dir = str(tmp_path / "text")
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            b = tf.saved_model.Builder(text_dir)
            b.add_meta_graph_and_variables(sess, ["t"])
            assert b.save(as_text=True).endswith(b"saved_model.pbtxt")
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.load(sess, ["t"], text_dir)
        assert sess.run("v:0") == 3.0


def test_a_model_without_variables_saves_and_loads(tmp_path):
    export = str(tmp_path / "novars")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.multiply(x, 2.0, name="y")
        with tf.Session() as sess:
            b = tf.saved_model.Builder(export)
            b.add_meta_graph_and_variables(sess, ["serve"])
            b.save()
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.load(sess, ["serve"], export)
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": [1.0, 2.0]}), [2.0, 4.0])


# --- errors, as TF1 raises them -------------------------------------------------------------
def test_builder_errors(graph, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(AssertionError, match=r"already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "full"))
    v = tf.Variable(1.0, name="v")
    x = tf.placeholder(tf.float32, name="x")
    with tf.Session() as sess:
        sess.run(v.initializer)
        b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "m"))
        with pytest.raises(AssertionError, match=r"has not been saved yet. Please invoke "
                           r"`add_meta_graph_and_variables\(\)` first."):
            b.add_meta_graph(["x"])
        reserved = {"__saved_model_init_op": tf.saved_model.predict_signature_def(
            {"x": x}, {"v": v.value()})}
        with pytest.raises(KeyError, match="is reserved for initialization"):
            b.add_meta_graph_and_variables(sess, ["a"], signature_def_map=reserved)
        bad = tf.saved_model.build_signature_def(
            {"x": tf.saved_model.utils.build_tensor_info(x)}, {"none": type(
                tf.saved_model.utils.build_tensor_info(x))()})
        with pytest.raises(AssertionError, match="must have one of the 'encoding' fields"):
            b.add_meta_graph_and_variables(sess, ["a"], signature_def_map={"k": bad})
        with pytest.raises(TypeError, match="to be an Operation"):
            b.add_meta_graph_and_variables(sess, ["a"], main_op=v.value())
        with pytest.raises(TypeError, match="must be of type constant"):
            b.add_meta_graph_and_variables(sess, ["a"], assets_collection=[x])
        b.add_meta_graph_and_variables(sess, ["a"], main_op=tf.no_op(name="first"))
        with pytest.raises(AssertionError, match=r"already been saved. Please invoke "
                           r"`add_meta_graph\(\)` instead."):
            b.add_meta_graph_and_variables(sess, ["b"])
        with pytest.raises(ValueError, match="already contains one or more main ops"):
            b.add_meta_graph(["b"], main_op=tf.no_op())


def test_loader_errors(tmp_path):
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(IOError, match=r"SavedModel file does not exist at: .*"
                           r"\{saved_model.pbtxt\|saved_model.pb\}"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
        (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff\xff")
        with pytest.raises(IOError, match="Cannot parse file"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))


# --- signatures -----------------------------------------------------------------------------
def test_signature_builders_check_what_serving_accepts(graph):
    examples = tf.placeholder(tf.string, [None], name="examples")
    scores = tf.placeholder(tf.float32, [None, 3], name="scores")
    classes = tf.placeholder(tf.string, [None, 3], name="classes")
    ints = tf.placeholder(tf.int32, [None], name="ints")
    c = tf.saved_model.classification_signature_def(examples, classes, scores)
    assert c.method_name == "tensorflow/serving/classify"
    assert sorted(c.outputs) == ["classes", "scores"] and list(c.inputs) == ["inputs"]
    assert tf.saved_model.is_valid_signature(c)
    r = tf.saved_model.regression_signature_def(examples, scores)
    assert (r.method_name, list(r.inputs), list(r.outputs)) == (
        "tensorflow/serving/regress", ["inputs"], ["outputs"])
    assert tf.saved_model.is_valid_signature(r)
    p = tf.saved_model.predict_signature_def({"i": ints}, {"s": scores})
    assert tf.saved_model.is_valid_signature(p)
    assert not tf.saved_model.is_valid_signature(None)
    assert not tf.saved_model.is_valid_signature(tf.saved_model.build_signature_def(
        {"i": tf.saved_model.build_tensor_info(ints)}, {}, "tensorflow/serving/predict"))
    odd = tf.saved_model.build_signature_def(
        {"inputs": tf.saved_model.build_tensor_info(ints)},
        {"outputs": tf.saved_model.build_tensor_info(scores)}, "tensorflow/serving/regress")
    assert not tf.saved_model.is_valid_signature(odd)
    with pytest.raises(ValueError, match="Classification `classes` and `scores` cannot "
                       "both be None"):
        tf.saved_model.classification_signature_def(examples, None, None)
    with pytest.raises(ValueError, match="Classification input tensors must be of type "
                       "string"):
        tf.saved_model.classification_signature_def(ints, None, scores)
    with pytest.raises(ValueError, match="Classification scores must be a float Tensor"):
        tf.saved_model.classification_signature_def(examples, None, ints)
    with pytest.raises(ValueError, match="Regression output tensors must be of type float"):
        tf.saved_model.regression_signature_def(examples, ints)
    with pytest.raises(ValueError, match="Regression `examples` cannot be None"):
        tf.saved_model.regression_signature_def(None, scores)
    with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty"):
        tf.saved_model.predict_signature_def({}, {"s": scores})
    d = tf.saved_model.build_signature_def(
        {"i": tf.saved_model.build_tensor_info(ints)}, {},
        defaults={"i": tf.constant([4, 5], name="dflt")})
    assert list(tf.make_ndarray(d.defaults["i"])) == [4, 5]
    with pytest.raises(ValueError, match="Unable to convert object"):
        tf.saved_model.build_signature_def(defaults={"i": ints})


def test_main_ops_initialize_variables(graph):
    g = tf.Variable(2.0, name="g")
    local = tf.Variable(5.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    init = tf.saved_model.main_op.main_op()
    saver = tf.train.Saver([g])
    with_restore = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
    assert init.type == "NoOp" and with_restore.type == "NoOp"
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run([g, local]) == [2.0, 5.0]


def test_method_name_updater(tmp_path):
    export = str(tmp_path / "m")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.identity(x, name="y")
        with tf.Session() as sess:
            b = tf.saved_model.Builder(export)
            sig = tf.saved_model.predict_signature_def({"x": x}, {"y": y})
            b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"s": sig})
            b.add_meta_graph(["other"], signature_def_map={"s": sig})
            b.save()
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export)
    updater.replace_method_name("s", "tensorflow/serving/regress", tags="serve")
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'nope'"):
        updater.replace_method_name("nope", "m")
    with pytest.raises(ValueError, match="could not be found in SavedModel"):
        updater.replace_method_name("s", "m", tags=["absent"])
    with pytest.raises(ValueError, match="`method_name` must be defined"):
        updater.replace_method_name("s", "")
    updater.save()
    methods = {}
    for tags in (["serve"], ["other"]):
        with tf.Session(graph=tf.Graph()) as sess:
            mg = tf.saved_model.load(sess, tags, export)
            methods[tags[0]] = mg.signature_def["s"].method_name
    assert methods == {"serve": "tensorflow/serving/regress",
                       "other": "tensorflow/serving/predict"}


def test_build_tensor_info_of_a_variable(graph):
    v = tf.Variable(np.zeros([2, 3], np.float32), name="v")
    info = tf.saved_model.build_tensor_info(v)
    assert info.name == v.name and info.dtype == tf.float32.as_datatype_enum
    assert [d.size for d in info.tensor_shape.dim] == [2, 3]
    with pytest.raises(TypeError, match="expects a Tensor or SparseTensor"):
        tf.saved_model.build_tensor_info(3.0)


# --- probe round: differences from TF 2.21 found by running both -------------------------
def _save_matmul_model(export_dir, **builder_kwargs):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    tf.matmul(x, w, name="y")
    with tf.Session() as sess:
        sess.run(w.initializer)
        b = tf.saved_model.builder.SavedModelBuilder(export_dir)
        b.add_meta_graph_and_variables(sess, ["serve"], **builder_kwargs)
        b.save()


@pytest.mark.parametrize("strip", [True, False])
def test_strip_default_attrs_is_recorded_in_the_meta_info(graph, tmp_path, strip):
    # TF 2.21 writes meta_info_def.stripped_default_attrs = strip, and leaves MatMul's
    # default-valued transpose_a/transpose_b out of the graph when stripping
    export = str(tmp_path / "m")
    _save_matmul_model(export, strip_default_attrs=strip)
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], export)
        y = sess.run("y:0", {"x:0": [[3.0, 4.0]]})
    assert mg.meta_info_def.stripped_default_attrs is strip
    matmul = [n for n in mg.graph_def.node if n.name == "y"][0]
    assert ("transpose_a" in matmul.attr) is not strip
    np.testing.assert_allclose(y, [[11.0]])


def test_export_meta_graph_records_stripped_default_attrs(graph, tmp_path):
    from tensorboard.compat.proto import meta_graph_pb2
    tf.matmul([[1.0]], [[2.0]], name="y")
    path = str(tmp_path / "g.meta")
    tf.train.export_meta_graph(path, strip_default_attrs=True)
    written = meta_graph_pb2.MetaGraphDef.FromString(open(path, "rb").read())
    assert written.meta_info_def.stripped_default_attrs
    assert not tf.train.export_meta_graph().to_proto().meta_info_def.stripped_default_attrs


def test_builder_on_a_file_raises_tf_not_found(tmp_path):
    # TF lists the path as a directory: NotFoundError "Could not find directory <path>"
    path = tmp_path / "a_file"
    path.write_text("x")
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory .*a_file"):
        tf.saved_model.builder.SavedModelBuilder(str(path))


def test_unknown_keyword_arguments_are_type_errors(graph, tmp_path):
    # TF passes load's **saver_kwargs on to import_meta_graph, whose callee rejects an
    # unknown keyword with Python's TypeError
    export = str(tmp_path / "m")
    _save_matmul_model(export)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
            tf.saved_model.loader.load(sess, ["serve"], export, bogus=True)
    meta_graph = tf.train.export_meta_graph()
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        tf.train.import_meta_graph(meta_graph, bogus=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        tf.train.export_meta_graph(bogus=1)


def test_signature_dtype_errors_use_tf_wording(graph):
    # TF 2.21: "... Found tensors of type <dtype>" in the classification checks, "...
    # Found tensors with type <dtype>." in the regression ones (TF prints the enum; the
    # dtype's name is what it stands for)
    examples = tf.placeholder(tf.string, [None])
    ints = tf.placeholder(tf.int32, [None])
    floats = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match=r"^Regression input tensors must be of type "
                       r"string. Found tensors with type float32.$"):
        tf.saved_model.regression_signature_def(floats, floats)
    with pytest.raises(ValueError, match=r"^Regression output tensors must be of type "
                       r"float. Found tensors with type int32.$"):
        tf.saved_model.regression_signature_def(examples, ints)
    with pytest.raises(ValueError, match=r"^Classification classes must be of type string "
                       r"Tensor. Found tensors of type int32.$"):
        tf.saved_model.classification_signature_def(examples, ints, None)


def test_a_model_whose_while_calls_a_missing_function(tmp_path):
    # TF 2.x writes tf.while_loop as a While op calling library functions, which the
    # import lowers (tests/framework/test_functional_import.py loads such a SavedModel);
    # a function the library lacks is TF's InvalidArgumentError, naming it
    from tensorweave.saved_model import saved_model_file
    saved = saved_model_file.saved_model_class()(saved_model_schema_version=1)
    meta_graph = saved.meta_graphs.add()
    meta_graph.meta_info_def.tags.append("serve")
    gd = meta_graph.graph_def
    gd.library.function.add().signature.name = "helper"
    gd.node.add(name="i", op="Const").attr["dtype"].type = 3  # DT_INT32
    gd.node[0].attr["value"].tensor.dtype = 3
    gd.node[0].attr["value"].tensor.int_val.append(0)
    loop = gd.node.add(name="while", op="While", input=["i"])
    loop.attr["T"].list.type.append(3)
    loop.attr["cond"].func.name = "while_cond_8"
    loop.attr["body"].func.name = "while_body_9"
    (tmp_path / "saved_model.pb").write_bytes(saved.SerializeToString())
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Function 'while_cond_8' called by node 'while' is not "
                                 r"in the GraphDef's function library \(it holds: helper\)"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))


def test_tf1_saved_model_namespaces_hold_tfs_names_only():
    # TF 2.21's tf.compat.v1.saved_model.builder / loader / constants (implementation
    # modules named like them used to show their imports and helpers here)
    def public(ns):
        return sorted(n for n in dir(ns) if not n.startswith("_"))
    assert public(tf.saved_model.builder) == ["SavedModelBuilder"]
    assert public(tf.saved_model.loader) == ["load", "maybe_saved_model_directory"]
    assert public(tf.saved_model.constants) == [
        "ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
        "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "SAVED_MODEL_FILENAME_PB",
        "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY",
        "VARIABLES_FILENAME"]
    from tensorweave.saved_model import builder, loader
    assert builder.SavedModelBuilder is tf.saved_model.Builder
    assert loader.load is tf.saved_model.load
