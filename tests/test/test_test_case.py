"""tf.test.TestCase and the tf.test functions, against TF 2.21's TensorFlowTestCase in
graph mode: inner TestCases are run with unittest and their results counted."""
import os
import unittest

import numpy as np
import pytest

import tensorweave as tf


def run_case(cls):
    """Runs every test of cls; returns {test name: 'ok' | 'fail' | 'error' | 'skip'}."""
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(result)
    outcome = {}
    for kind, items in (("fail", result.failures), ("error", result.errors),
                        ("skip", result.skipped)):
        for test, _ in items:
            outcome[test._testMethodName] = kind
    for name in unittest.defaultTestLoader.getTestCaseNames(cls):
        outcome.setdefault(name, "ok")
    return outcome, result


def failure_text(result, name):
    for test, text in result.failures + result.errors:
        if test._testMethodName == name:
            return text
    return ""


class ShapeCases(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_close_scalar_vs_vector(self):
        self.assertAllClose(np.zeros(3), 0.0)

    def test_equal_scalar_vs_vector(self):
        self.assertAllEqual([1, 1, 1], 1)

    def test_close_transposed(self):
        self.assertAllClose(np.zeros((2, 3)), np.zeros((3, 2)))

    def test_close_ok(self):
        self.assertAllClose([1.0, 2.0], np.array([1.0, 2.0 + 1e-8]))


def test_shape_mismatch_fails():
    outcome, result = run_case(ShapeCases)
    assert outcome == {"test_close_scalar_vs_vector": "fail",
                       "test_equal_scalar_vs_vector": "fail",
                       "test_close_transposed": "fail", "test_close_ok": "ok",
                       "test_session": "skip"}
    assert "Shape mismatch: expected (3,), got ()" in failure_text(
        result, "test_close_scalar_vs_vector")


class NoSuperSetUp(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def setUp(self):
        self.x = 1

    def test_cached_session(self):
        with self.cached_session() as sess:
            self.assertEqual(sess.run(tf.constant(2)), 2)


def test_setup_without_super():
    outcome, _ = run_case(NoSuperSetUp)
    assert outcome["test_cached_session"] == "ok"


class Structures(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_tensors(self):
        with self.cached_session():
            self.assertAllClose(tf.constant([1.0, 2.0]), [1.0, 2.0])
            self.assertAllEqual([[1, 2]], tf.constant([[1, 2]]))
            self.assertAllClose({"a": tf.constant(1.0), "b": [tf.constant(2.0), 3.0]},
                                {"a": 1.0, "b": [2.0, 3.0]})

    def test_nested_ok(self):
        self.assertAllClose({"a": [1.0], "b": (2.0, 3.0)}, {"a": [1.0], "b": (2.0, 3.0)})
        self.assertAllClose([np.zeros(2), {"x": np.ones(3)}],
                            [np.zeros(2), {"x": np.ones(3)}])

    def test_nested_fail_path(self):
        self.assertAllClose([np.zeros(2), {"x": np.ones(3)}],
                            [np.zeros(2), {"x": np.zeros(3)}])

    def test_dict_vs_list(self):
        self.assertAllClose({"a": 1.0}, [1.0])

    def test_bytes_vs_str(self):
        self.assertAllEqual([b"a", b"b"], ["a", "b"])

    def test_bytes_vs_str_differ(self):
        self.assertAllEqual([b"a", b"b"], ["a", "c"])

    def test_according_to_type(self):
        self.assertAllCloseAccordingToType(np.float16(1.0), np.float16(1.0005))
        self.assertAllCloseAccordingToType(np.float32(1.0), np.float32(1.0 + 5e-7))
        with self.assertRaises(AssertionError):
            self.assertAllCloseAccordingToType(np.float64(1.0), np.float64(1.0005))


def test_structures():
    outcome, result = run_case(Structures)
    assert outcome["test_tensors"] == "ok"
    assert outcome["test_nested_ok"] == "ok"
    assert outcome["test_nested_fail_path"] == "fail"
    assert "a[1][x] is different from b[1][x]" in failure_text(result, "test_nested_fail_path")
    assert outcome["test_dict_vs_list"] == "error"  # ValueError, as TF
    assert outcome["test_bytes_vs_str"] == "ok"
    assert outcome["test_bytes_vs_str_differ"] == "fail"
    assert outcome["test_according_to_type"] == "ok"


class Comparisons(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_ok(self):
        self.assertAllGreater([2, 3], 1)
        self.assertAllLess([2, 3], 4)
        self.assertAllGreaterEqual([1, 2], 1)
        self.assertAllLessEqual([1, 2], 2)
        self.assertAllInRange([1, 2], 1, 2)
        self.assertAllInRange([0.5, 2.5], 0, 3, open_lower_bound=True, open_upper_bound=True)
        self.assertAllInSet([1, 2, 2], [1, 2, 3])
        self.assertArrayNear([1.0, 2.0], [1.0, 2.0001], 1e-3)
        self.assertNDArrayNear(np.ones((2, 2)), np.ones((2, 2)) + 1e-5, 1e-4)
        self.assertNotAllClose([1.0], [2.0])
        self.assertNotAllEqual([1, 2], [1, 3])
        self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
        with self.cached_session():
            self.assertAllGreater(tf.constant([2.0, 3.0]), 1.0)
        self.assertLen([1, 2], 2)
        self.assertEmpty([])
        self.assertNotEmpty([1])
        self.assertItemsEqual([1, 2], [2, 1])
        self.assertSameElements([1, 2, 2], [2, 1])
        self.assertStartsWith("tensorweave", "tensor")
        self.assertContainsSubset({1}, {1, 2})
        self.assertSameStructure({"a": [1]}, {"a": [1]})

    def test_greater_fails(self):
        self.assertAllGreater([2, 0], 1)

    def test_open_lower_fails(self):
        self.assertAllInRange([0, 1], 0, 3, open_lower_bound=True)

    def test_in_set_fails(self):
        self.assertAllInSet([1, 4], [1, 2])

    def test_array_near_fails(self):
        self.assertArrayNear([1.0, 2.0], [1.0, 2.1], 1e-3)

    def test_not_all_close_fails(self):
        self.assertNotAllClose([1.0], [1.0])

    def test_device_fails(self):
        self.assertDeviceEqual("/cpu:0", "/gpu:0")


def test_comparisons():
    outcome, result = run_case(Comparisons)
    assert outcome.pop("test_ok") == "ok", failure_text(result, "test_ok")
    outcome.pop("test_session")
    assert set(outcome.values()) == {"fail"}
    assert "outside the range (0, 3]" in failure_text(result, "test_open_lower_fails")
    assert "1 unique element(s) are not in the set" in failure_text(result, "test_in_set_fails")
    assert "Devices /device:CPU:0 and /device:GPU:0" in failure_text(result, "test_device_fails")


class Raising(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_op_error(self):
        with self.cached_session():
            with self.assertRaisesOpError("must be positive"):
                tf.Assert(tf.constant(False), ["must be positive"]).run()

    def test_incompatible_shapes(self):
        with self.cached_session():
            with self.assertRaisesIncompatibleShapesError():
                self.evaluate(tf.add(tf.placeholder_with_default([1, 2], None),
                                     tf.placeholder_with_default([1, 2, 3], None)))

    def test_predicate(self):
        with self.assertRaisesWithPredicateMatch(ValueError, lambda e: "boom" in str(e)):
            raise ValueError("boom")
        with self.assertRaisesWithLiteralMatch(ValueError, "a (literal) message"):
            raise ValueError("a (literal) message")

    def test_op_error_not_raised(self):
        with self.cached_session():
            with self.assertRaisesOpError("nope"):
                self.evaluate(tf.constant(1))

    def test_wrong_message(self):
        with self.assertRaisesWithPredicateMatch(ValueError, "expected"):
            raise ValueError("something else")


def test_raising():
    outcome, result = run_case(Raising)
    for name in ("test_op_error", "test_incompatible_shapes", "test_predicate"):
        assert outcome[name] == "ok", failure_text(result, name)
    assert outcome["test_op_error_not_raised"] == "fail"
    assert "OpError not raised" in failure_text(result, "test_op_error_not_raised")
    assert outcome["test_wrong_message"] == "fail"


class Sessions(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_other_graph(self):
        with self.cached_session():
            pass
        with self.cached_session(graph=tf.Graph()):
            pass

    def test_same_session(self):
        with self.cached_session() as s1:
            pass
        with self.cached_session() as s2:
            self.assertIs(s1, s2)
            self.assertIs(tf.get_default_session(), s2)

    def test_temp_dirs(self):
        d = self.get_temp_dir()
        self.assertTrue(os.path.isdir(d))
        self.assertEqual(d, self.get_temp_dir())
        self.assertTrue(os.path.isdir(self.create_tempdir().full_path))
        self.assertTrue(os.path.isfile(self.create_tempfile(content="x").full_path))
        self.assertTrue(os.path.isdir(tf.test.get_temp_dir()))

    def test_checked_thread_fails(self):
        def target():
            raise RuntimeError("in thread")
        thread = self.checkedThread(target)
        thread.start()
        thread.join()

    def test_checked_thread_ok(self):
        seen = []
        thread = self.checkedThread(seen.append, args=(1,))
        thread.start()
        thread.join()
        self.assertEqual(seen, [1])

    def test_proto(self):
        tf.constant(1.0, name="c")
        node = tf.get_default_graph().as_graph_def().node[0]
        node_type = type(node)
        self.assertProtoEquals(node_type(name="c", op="Const"),
                               node_type(name="c", op="Const"))
        self.assertProtoEquals("name: 'c' op: 'Const'", node_type(name="c", op="Const"))
        with self.assertRaises(AssertionError):
            self.assertProtoEquals("name: 'd'", node_type(name="c"))


def test_sessions():
    outcome, result = run_case(Sessions)
    assert outcome["test_other_graph"] == "error"
    assert "The graph used to get the cached session is different" in failure_text(
        result, "test_other_graph")
    for name in ("test_same_session", "test_temp_dirs", "test_checked_thread_ok",
                 "test_proto"):
        assert outcome[name] == "ok", failure_text(result, name)
    assert outcome["test_checked_thread_fails"] == "fail"
    assert "Error in checkedThread: in thread" in failure_text(
        result, "test_checked_thread_fails")


class NamedTestSession(tf.test.TestCase):
    __test__ = False  # run by the pytest functions below, through unittest

    def test_session(self):
        raise AssertionError("a test named test_session must not run")

    def test_real(self):
        pass


def test_test_session_is_skipped():
    outcome, result = run_case(NamedTestSession)
    assert outcome == {"test_session": "skip", "test_real": "ok"}
    assert result.testsRun == 2


def test_module_functions():
    assert tf.test.is_built_with_gpu_support() is False
    assert tf.test.is_built_with_rocm() is False
    assert tf.test.is_built_with_xla() is False
    public = {n for n in dir(tf.test) if not n.startswith("_")}
    assert not public & {"np", "unittest", "contextlib", "annotations", "test_case"}


def _graph_def(build):
    g = tf.Graph()
    with g.as_default():
        build()
    return g.as_graph_def()


def test_assert_equal_graph_def():
    def ab():
        tf.constant(1.0, name="a")
        tf.constant(2.0, name="b")

    def ba():
        tf.constant(2.0, name="b")
        tf.constant(1.0, name="a")
    tf.test.assert_equal_graph_def(_graph_def(ab), _graph_def(ba))
    with pytest.raises(AssertionError, match="Node named 'b' has attr 'value'"):
        tf.test.assert_equal_graph_def(_graph_def(ab), _graph_def(
            lambda: (tf.constant(1.0, name="a"), tf.constant(3.0, name="b"))))
    with pytest.raises(AssertionError, match="Did not find expected node 'b"):
        tf.test.assert_equal_graph_def(
            _graph_def(lambda: tf.constant(1.0, name="a")), _graph_def(ab))
    with pytest.raises(TypeError):
        tf.test.assert_equal_graph_def("x", _graph_def(ab))



def _graph_def_message(build_actual, build_expected):
    with pytest.raises(AssertionError) as info:
        tf.test.assert_equal_graph_def(_graph_def(build_actual), _graph_def(build_expected))
    return str(info.value)


# (actual, expected, the attribute summaries TF 2.21's message holds for them)
_ATTR_SUMMARIES = [
    (lambda: tf.constant(1, name="a"), lambda: tf.constant(2, name="a"),
     "Tensor<type: int32 shape: [] values: 1>", "Tensor<type: int32 shape: [] values: 2>"),
    (lambda: tf.constant([0.1, 1e10, 3.0], name="a"),
     lambda: tf.constant([1.5, 2.0], name="a"),
     "Tensor<type: float shape: [3] values: 0.1 1e+10 3>",
     "Tensor<type: float shape: [2] values: 1.5 2>"),
    (lambda: tf.constant(list(range(10)), name="a"),
     lambda: tf.constant([[1, 2, 3], [4, 5, 6]], name="a"),
     "Tensor<type: int32 shape: [10] values: 0 1 2...>",
     "Tensor<type: int32 shape: [2,3] values: [1 2 3]...>"),
    (lambda: tf.constant([[1, 2, 3, 4, 5]], name="a"),
     lambda: tf.constant(np.arange(8, dtype=np.int32).reshape(2, 2, 2), name="a"),
     "Tensor<type: int32 shape: [1,5] values: [1 2 3...]...>",
     "Tensor<type: int32 shape: [2,2,2] values: [[0 1][2...]]...>"),
    (lambda: tf.constant(["a", "b\n"], name="a"), lambda: tf.constant("cd", name="a"),
     "Tensor<type: string shape: [2] values: a b\\n>",
     "Tensor<type: string shape: [] values: cd>"),
    (lambda: tf.constant(True, name="a"), lambda: tf.constant(False, name="a"),
     "Tensor<type: bool shape: [] values: 1>", "Tensor<type: bool shape: [] values: 0>"),
    (lambda: tf.constant([1.0 / 3], tf.float64, name="a"),
     lambda: tf.constant([0.1], tf.float64, name="a"),
     "Tensor<type: double shape: [1] values: 0.33333333333333331>",
     "Tensor<type: double shape: [1] values: 0.1>"),
    (lambda: tf.constant([0.1], tf.float16, name="a"),
     lambda: tf.constant([0.2], tf.float16, name="a"),
     "Tensor<type: half shape: [1] values: 0.0999755859>",
     "Tensor<type: half shape: [1] values: 0.199951172>"),
    (lambda: tf.placeholder(tf.float32, [2, None], name="p"),
     lambda: tf.placeholder(tf.int32, None, name="p"), "DT_FLOAT", "DT_INT32"),
]


def test_assert_equal_graph_def_summarizes_attributes_as_tf():
    for actual, expected, actual_text, expected_text in _ATTR_SUMMARIES:
        message = _graph_def_message(actual, expected)
        assert message.endswith("with value: %s that does not match expected: %s" % (
            actual_text, expected_text)), message
    shapes = _graph_def_message(lambda: tf.placeholder(tf.float32, [2, None], name="p"),
                                lambda: tf.placeholder(tf.float32, None, name="p"))
    assert shapes.endswith("value: [2,?] that does not match expected: <unknown>")
    conv = [lambda s, p: tf.nn.conv2d(tf.zeros([1, 4, 4, 1], name="x"),
                                      tf.zeros([2, 2, 1, 1], name="f"), s, p, name="c")]
    strides = _graph_def_message(lambda: conv[0]([1, 1, 1, 1], "SAME"),
                                 lambda: conv[0]([1, 2, 2, 1], "SAME"))
    assert strides.endswith("value: [1, 1, 1, 1] that does not match expected: [1, 2, 2, 1]")
    padding = _graph_def_message(lambda: conv[0]([1, 1, 1, 1], "SAME"),
                                 lambda: conv[0]([1, 1, 1, 1], "VALID"))
    assert padding.endswith('value: "SAME" that does not match expected: "VALID"')
    alpha = _graph_def_message(lambda: tf.nn.leaky_relu(tf.zeros([1], name="x"), 0.25, name="l"),
                               lambda: tf.nn.leaky_relu(tf.zeros([1], name="x"), 0.5, name="l"))
    assert alpha.endswith("value: 0.25 that does not match expected: 0.5")
    types = _graph_def_message(lambda: tf.FIFOQueue(2, [tf.float32, tf.int32], name="q"),
                               lambda: tf.FIFOQueue(2, [tf.float32, tf.int64], name="q"))
    assert types.endswith("value: [DT_FLOAT, DT_INT32] that does not match expected: "
                          "[DT_FLOAT, DT_INT64]")

class ProtoVersionAndCaptureCases(tf.test.TestCase):
    __test__ = False

    def test_graph_def_with_versions(self):
        g = tf.Graph()
        with g.as_default():
            tf.constant(1.0, name="c")
        node = g.as_graph_def().node[0]
        text = 'node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }'
        text += ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { }'
        text += ' float_val: 1.0 } } } }'
        gd = tf.GraphDef()
        gd.node.add().CopyFrom(node)
        gd.versions.producer = tf.GRAPH_DEF_VERSION
        self.assertProtoEqualsVersion(text, gd)
        self.assertEqual(g.as_graph_def().versions.producer, tf.GRAPH_DEF_VERSION)

    def test_wrong_producer_fails(self):
        gd = tf.GraphDef()
        gd.versions.producer = 7
        self.assertProtoEqualsVersion("", gd, producer=7)
        self.assertProtoEqualsVersion("", gd)  # expects tf.GRAPH_DEF_VERSION: fails

    def test_capture_writes_to_a_stream(self):
        path = os.path.join(self.get_temp_dir(), "stream.txt")
        with open(path, "w") as stream:
            stream.write("before\n")
            with self.captureWritesToStream(stream) as captured:
                stream.write("inside\n")
                os.write(stream.fileno(), b"raw\n")
            stream.write("after\n")
        self.assertEqual(captured.contents(), "raw\ninside\n")
        with open(path) as f:
            self.assertEqual(f.read(), "before\nafter\n")


def test_assert_proto_equals_version_and_capture_writes_to_stream():
    outcome, result = run_case(ProtoVersionAndCaptureCases)
    outcome.pop("test_session")  # TestCase.test_session, skipped as in TF
    assert outcome == {"test_graph_def_with_versions": "ok",
                       "test_wrong_producer_fails": "fail",
                       "test_capture_writes_to_a_stream": "ok"}, result.errors
    assert "versions" in failure_text(result, "test_wrong_producer_fails")
    assert tf.GRAPH_DEF_VERSION == 134  # TF 1.15's, the producer its graphs carry


class SeedCases(tf.test.TestCase):
    __test__ = False
    seen = []

    def test_draw(self):
        with self.cached_session() as sess:
            SeedCases.seen.append((tf.get_default_graph().seed,
                                   sess.run(tf.random_uniform([3]))))


class UnseededCases(tf.test.TestCase):
    __test__ = False
    _set_default_seed = False

    def test_graph_seed(self):
        self.assertIsNone(tf.get_default_graph().seed)


def test_set_up_seeds_the_default_graph():
    # TF's setUp calls set_random_seed(DEFAULT_GRAPH_SEED): random ops repeat across runs
    SeedCases.seen.clear()
    run_case(SeedCases)
    run_case(SeedCases)
    (seed1, draw1), (seed2, draw2) = SeedCases.seen
    assert seed1 == seed2 == 87654321
    np.testing.assert_array_equal(draw1, draw2)
    outcome, _ = run_case(UnseededCases)
    assert outcome["test_graph_seed"] == "ok"
