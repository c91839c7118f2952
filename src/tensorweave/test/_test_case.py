"""`tf.test.TestCase`: absltest's TestCase with TF1's graph-mode session and array helpers.

Behaviour follows TF's `TensorFlowTestCase` (framework/test_util.py) run in graph mode:
shapes must match before values are compared, Tensors inside the compared values are
evaluated, nested dicts/lists/tuples are compared element by element with the path in the
failure message. Per-test state has class-level defaults so that a subclass whose setUp
skips `super().setUp()` still works.
"""
import contextlib
import math
import os
import random
import re
import tempfile
import threading
from collections import abc

import numpy as np
from absl import flags
from absl.testing import absltest

_DEFAULT_SEED = 87654321  # TF's random_seed.DEFAULT_GRAPH_SEED
_INCOMPATIBLE_SHAPES_RE = (r"Incompatible shapes|Dimensions must be equal|"
                           r"required broadcastable shapes")


def _ensure_absl_flags_parsed():
    # absltest's create_tempdir reads --test_tmpdir; outside absltest.main (pytest,
    # unittest.main) nobody parsed the flags, so take their defaults.
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


def _is_graph_tensor(x) -> bool:
    from tensorweave.autodiff.custom_gradient import is_tensor
    return is_tensor(x)


def _where(cond):
    return np.where(cond)


class _CheckedThread:
    """A thread whose exception fails the test when it is joined."""

    def __init__(self, testcase, target, args=None, kwargs=None):
        self._testcase = testcase
        self._target = target
        self._args = () if args is None else args
        self._kwargs = {} if kwargs is None else kwargs
        self._thread = threading.Thread(target=self._protected_run)
        self._exception = None
        self._is_thread_joined = False

    def _protected_run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as e:  # reported on join
            self._exception = e

    def start(self):
        self._thread.start()

    def join(self):
        self._is_thread_joined = True
        self._thread.join()
        if self._exception is not None:
            self._testcase.fail("Error in checkedThread: %s" % str(self._exception))

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def check_termination(self):
        if not self._is_thread_joined:
            self._testcase.fail("A checked thread was not joined.")
        if self.is_alive():
            raise RuntimeError("Thread was not joined with main thread, and is still "
                               "running when the test finished.")


class CapturedWrites:
    """The writes TestCase.captureWritesToStream captured, kept in a file."""

    def __init__(self, capture_location: str):
        self.capture_location = capture_location

    def contents(self) -> str:
        """Everything captured so far, as one string."""
        with open(self.capture_location) as f:
            return f.read()


class TestCase(absltest.TestCase):
    """TF1's `tf.test.TestCase` for graph mode."""

    # Per-test state; class-level defaults keep a setUp without super() working.
    _cached_session = None
    _cached_graph = None
    _cached_config = None
    _tempdir = None
    _threads = ()
    # setUp gives the default graph TF's default seed; a subclass may turn that off
    _set_default_seed = True

    def __init__(self, methodName="runTest"):
        super().__init__(methodName)
        _ensure_absl_flags_parsed()
        self._threads = []

    def setUp(self):
        super().setUp()
        from tensorweave.framework.graph import reset_default_graph
        self._clear_cached_session()
        random.seed(_DEFAULT_SEED)
        np.random.seed(_DEFAULT_SEED)
        reset_default_graph()
        if self._set_default_seed:  # random ops give the same values on every run, as TF
            from tensorweave.ops.random.random_ops import set_random_seed
            set_random_seed(_DEFAULT_SEED)
        # A test method named test_session is TF's deprecated session helper, not a test.
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")

    def tearDown(self):
        for thread in self._threads:
            thread.check_termination()
        self._clear_cached_session()
        super().tearDown()

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self) -> str:
        """A directory for this test, the same on every call within the test."""
        if not self._tempdir:
            from tensorweave.test import get_temp_dir
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    def checkedThread(self, target, args=None, kwargs=None):
        thread = _CheckedThread(self, target, args, kwargs)
        if not isinstance(self._threads, list):
            self._threads = []
        self._threads.append(thread)
        return thread

    # --- sessions -----------------------------------------------------------------------

    @staticmethod
    def _make_session(graph, config):
        from tensorweave.runtime.session import Session
        return Session(graph=graph, config=config)

    @contextlib.contextmanager
    def _as_default(self, sess, use_gpu, force_gpu):
        with sess.graph.as_default(), sess.as_default():
            if force_gpu:
                from tensorweave.test import gpu_device_name
                with sess.graph.device(gpu_device_name() or "/device:GPU:0"):
                    yield sess
            elif use_gpu:
                yield sess
            else:
                with sess.graph.device("/device:CPU:0"):
                    yield sess

    def _get_cached_session(self, graph, config, check_args):
        if self._cached_session is None:
            self._cached_session = self._make_session(graph, config)
            self._cached_graph = graph
            self._cached_config = config
        elif check_args and self._cached_graph is not graph:
            raise ValueError("The graph used to get the cached session is different than "
                             "the one that was used to create the session. Maybe create a "
                             "new session with self.session()")
        elif check_args and self._cached_config is not config:
            raise ValueError("The config used to get the cached session is different than "
                             "the one that was used to create the session. Maybe create a "
                             "new session with self.session()")
        return self._cached_session

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new Session, closed on exit, set as default along with its graph."""
        with self._make_session(graph, config) as sess:
            with self._as_default(sess, use_gpu, force_gpu):
                yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """The test's one Session, created on first use and closed in tearDown."""
        sess = self._get_cached_session(graph, config, check_args=True)
        with self._as_default(sess, use_gpu, force_gpu):
            yield sess

    @contextlib.contextmanager
    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """Deprecated: use cached_session (or session for a graph of its own)."""
        if self.id().endswith(".test_session"):
            self.skipTest('Tests that have the name "test_session" are automatically '
                          "skipped by TensorFlow test fixture, as the name is reserved "
                          "for creating sessions within tests. Please rename your test "
                          "if you have a test with this name.")
        if graph is None:
            sess = self._get_cached_session(graph, config, check_args=False)
            with self._as_default(sess, use_gpu, force_gpu):
                yield sess
        else:
            with self.session(graph, config, use_gpu, force_gpu) as sess:
                yield sess

    def evaluate(self, tensors):
        """Runs `tensors` (a Tensor or nested structure of them) in the default session."""
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is None:
            with self.test_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # --- scalar and array helpers -------------------------------------------------------

    def _GetNdArray(self, a):
        if _is_graph_tensor(a):
            a = self.evaluate(a)
        if isinstance(a, np.ndarray):
            return a
        try:
            return np.array(a)
        except ValueError as e:  # a ragged sequence
            if "inhomogeneous shape" in str(e):
                return np.array(a, dtype=object)
            raise

    def evaluate_if_both_tensors(self, a, b):
        if _is_graph_tensor(a) and _is_graph_tensor(b):
            return self.evaluate((a, b))
        return a, b

    def assertNear(self, f1, f2, err, msg=None):
        f1, f2 = np.squeeze(f1), np.squeeze(f2)
        if f1 != f2:  # inf == inf has a nan difference
            diff = math.fabs(f1 - f2)
            self.assertTrue(diff <= err, "%f != %f +/- %f (difference: %g)%s" % (
                f1, f2, err, diff, " (%s)" % msg if msg is not None else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):
        near = np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) < err
        self.assertTrue(near, msg=msg)

    def _assertArrayLikeAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        a, b = self.evaluate_if_both_tensors(a, b)
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        shape_msg = "Shape mismatch: expected %s, got %s." % (a.shape, b.shape)
        if a.shape != b.shape and (b.ndim <= 3 or b.size < 500):
            shape_msg = "Shape mismatch: expected %s, got %s with contents %s." % (
                a.shape, b.shape, b)
        self.assertEqual(a.shape, b.shape, shape_msg)
        if np.allclose(a, b, rtol=rtol, atol=atol):
            return
        msgs = [msg]
        cond = np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b),
                             np.isnan(a) != np.isnan(b))
        if a.ndim:
            x, y = a[_where(cond)], b[_where(cond)]
            msgs.append("not close where = {}".format(_where(cond)))
        else:
            x, y = a, b
        msgs.append("not close lhs = {}".format(x))
        msgs.append("not close rhs = {}".format(y))
        msgs.append("not close dif = {}".format(np.abs(x - y)))
        msgs.append("not close tol = {}".format(atol + rtol * np.abs(y)))
        msgs.append("dtype = {}, shape = {}".format(a.dtype, a.shape))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg="\n".join(str(m) for m in msgs))

    def _assertAllCloseRecursive(self, a, b, rtol=1e-6, atol=1e-6, path=None, msg=None):
        path = path or []
        path_str = ("[" + "][".join(str(p) for p in path) + "]") if path else ""
        msg = msg if msg else ""
        if hasattr(a, "_asdict"):  # namedtuples compare as dicts
            a = a._asdict()
        if hasattr(b, "_asdict"):
            b = b._asdict()
        a_is_dict = isinstance(a, abc.Mapping)
        if a_is_dict != isinstance(b, abc.Mapping):
            raise ValueError("Can't compare dict to non-dict, a%s vs b%s. %s"
                             % (path_str, path_str, msg))
        value_msg = "Mismatched value: a%s is different from b%s. %s" % (
            path_str, path_str, msg)
        if a_is_dict:
            self.assertCountEqual(
                a.keys(), b.keys(),
                msg="mismatched keys: a%s has keys %s, but b%s has keys %s. %s"
                % (path_str, a.keys(), path_str, b.keys(), msg))
            for k in a:
                self._assertAllCloseRecursive(a[k], b[k], rtol, atol, path + [k], msg)
        elif isinstance(a, (list, tuple)):
            # One array comparison when the sequences convert; element by element if not.
            try:
                a_arr, b_arr = self.evaluate_if_both_tensors(a, b)
                a_arr, b_arr = self._GetNdArray(a_arr), self._GetNdArray(b_arr)
                self._assertArrayLikeAllClose(a_arr, b_arr, rtol, atol, value_msg)
            except (ValueError, TypeError, NotImplementedError):
                if len(a) != len(b):
                    raise ValueError(
                        "Mismatched length: a%s has %d items, but b%s has %d items. %s"
                        % (path_str, len(a), path_str, len(b), msg))
                for idx, (a_ele, b_ele) in enumerate(zip(a, b)):
                    self._assertAllCloseRecursive(a_ele, b_ele, rtol, atol,
                                                  path + [str(idx)], msg)
        else:
            try:
                self._assertArrayLikeAllClose(a, b, rtol, atol, value_msg)
            except TypeError as e:
                extra = "Error: a%s has %s, but b%s has %s. %s" % (
                    path_str, type(a), path_str, type(b), msg)
                e.args = ((e.args[0] + " : " + extra,) + e.args[1:]) if e.args else (extra,)
                raise

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """a and b (arrays, Tensors or nested dicts/lists/tuples of them) are close."""
        self._assertAllCloseRecursive(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3,
                                      bfloat16_rtol=1e-2, bfloat16_atol=1e-2, msg=None):
        """assertAllClose with looser tolerances for float32, float16 and bfloat16."""
        a, b = self.evaluate_if_both_tensors(a, b)
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        dtypes = {a.dtype, b.dtype}
        if dtypes & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in dtypes:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if any(d.name == "bfloat16" for d in dtypes):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError("The two values are close at all elements. %s" % (msg or ""))

    def assertAllEqual(self, a, b, msg=None):
        """a and b (arrays or Tensors) have the same shape and values."""
        msg = msg if msg else ""
        a, b = self.evaluate_if_both_tensors(a, b)
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if b.ndim <= 3 or b.size < 500:
            self.assertEqual(a.shape, b.shape, "Shape mismatch: expected %s, got %s."
                             " Contents: %r. \n%s." % (a.shape, b.shape, b, msg))
        else:
            self.assertEqual(a.shape, b.shape, "Shape mismatch: expected %s, got %s. %s"
                             % (a.shape, b.shape, msg))
        same = a == b
        if a.dtype.kind in "fc":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if np.all(same):
            return
        msgs = [msg]
        diff = np.logical_not(same)
        if a.ndim:
            x, y = a[_where(diff)], b[_where(diff)]
            msgs.append("not equal where = {}".format(_where(diff)))
        else:
            x, y = a, b
        msgs.append("not equal lhs = %r" % (x,))
        msgs.append("not equal rhs = %r" % (y,))
        if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
            # TF strings are bytes: compare str elements by their UTF-8 encoding.
            def as_bytes(arr):
                return np.array([v.encode("utf-8") if isinstance(v, str) else v
                                 for v in arr.flat]).reshape(arr.shape)
            a, b = as_bytes(a), as_bytes(b)
        np.testing.assert_array_equal(a, b, err_msg="\n".join(msgs))

    def assertNotAllEqual(self, a, b, msg=None):
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError("The two values are equal at all elements. %s" % (msg or ""))

    def assertAllGreater(self, a, comparison_target):
        a, comparison_target = self.evaluate_if_both_tensors(a, comparison_target)
        self.assertGreater(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):
        a, comparison_target = self.evaluate_if_both_tensors(a, comparison_target)
        self.assertLess(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):
        a, comparison_target = self.evaluate_if_both_tensors(a, comparison_target)
        self.assertGreaterEqual(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):
        a, comparison_target = self.evaluate_if_both_tensors(a, comparison_target)
        self.assertLessEqual(np.max(self._GetNdArray(a)), comparison_target)

    @staticmethod
    def _format_subscripts(subscripts, value, limit=10, indent=2):
        prefix = " " * indent
        if np.ndim(value) == 0:
            return [prefix + "[0] : " + str(value)]
        subscripts = np.transpose(subscripts)
        lines = [prefix + str(s) + " : " + str(value[tuple(s)]) for s in subscripts[:limit]]
        if len(subscripts) > limit:
            lines.append(prefix + "...")
        return lines

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,
                         open_upper_bound=False):
        """Every element of target lies in the range (bounds closed unless said open)."""
        target = self._GetNdArray(target)
        if not (np.issubdtype(target.dtype, np.floating)
                or np.issubdtype(target.dtype, np.integer)):
            raise AssertionError("The value of %s does not have an ordered numeric type, "
                                 "instead it has type: %s" % (target, target.dtype))
        nan_subscripts = _where(np.isnan(target))
        if np.size(nan_subscripts):
            raise AssertionError(
                "%d of the %d element(s) are NaN. Subscripts(s) and value(s) of the NaN "
                "element(s):\n" % (len(nan_subscripts[0]), np.size(target))
                + "\n".join(self._format_subscripts(nan_subscripts, target)))
        range_str = (("(" if open_lower_bound else "[") + str(lower_bound) + ", "
                     + str(upper_bound) + (")" if open_upper_bound else "]"))
        below = (target <= lower_bound) if open_lower_bound else (target < lower_bound)
        above = (target >= upper_bound) if open_upper_bound else (target > upper_bound)
        violations = _where(np.logical_or(below, above))
        if np.size(violations):
            raise AssertionError(
                "%d of the %d element(s) are outside the range %s. " % (
                    len(violations[0]), np.size(target), range_str)
                + "Subscript(s) and value(s) of the offending elements:\n"
                + "\n".join(self._format_subscripts(violations, target)))

    def assertAllInSet(self, target, expected_set):
        target = self._GetNdArray(target)
        diff = np.setdiff1d(target.flatten(), list(expected_set))
        if np.size(diff):
            raise AssertionError("%d unique element(s) are not in the set %s: %s"
                                 % (np.size(diff), expected_set, diff))

    def assertDTypeEqual(self, target, expected_dtype):
        self.assertEqual(self._GetNdArray(target).dtype, expected_dtype)

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Same static shape: each of input_a, input_b is a NumPy array/scalar or Tensor."""
        from tensorweave.framework.graph import Tensor
        for name, value in (("input_a", input_a), ("input_b", input_b)):
            if not isinstance(value, (np.ndarray, np.generic, Tensor)):
                raise TypeError("%s must be a Numpy ndarray, Numpy scalar, or a Tensor."
                                "Instead received %s" % (name, type(value)))

        def shape(x):
            return x.get_shape().as_list() if isinstance(x, Tensor) else x.shape
        self.assertAllEqual(shape(input_a), shape(input_b), msg=msg)

    def assertDeviceEqual(self, device1, device2, msg=None):
        from tensorweave.framework.device_spec import DeviceSpec

        def canonical(device):
            if isinstance(device, DeviceSpec):
                return device.to_string()
            return DeviceSpec.from_string(device).to_string() if device else ""
        device1, device2 = canonical(device1), canonical(device2)
        self.assertEqual(device1, device2,
                         "Devices %s and %s are not equal. %s" % (device1, device2, msg))

    def assertDictEqual(self, a, b, msg=None):
        """unittest's dict equality, falling back to array comparison of the values."""
        try:
            super().assertDictEqual(a, b, msg)
        except Exception:  # values that are arrays or Tensors do not compare with ==
            self.assertSameElements(a.keys(), b.keys())
            for k, v in a.items():
                a_k, b_k = self.evaluate_if_both_tensors(v, b[k])
                if np.issubdtype(self._GetNdArray(a_k).dtype, np.floating):
                    self.assertAllClose(v, b[k], msg=k)
                else:
                    self.assertAllEqual(v, b[k], msg=k)

    def assertStartsWith(self, actual, expected_start, msg=None):
        if not actual.startswith(expected_start):
            fail_msg = "%r does not start with %r" % (actual, expected_start)
            fail_msg += " : %r" % (msg,) if msg else ""
            self.fail(fail_msg)

    # --- protos and errors --------------------------------------------------------------

    def assertProtoEquals(self, expected_message_maybe_ascii, validate_message, msg=None,
                          relative_tolerance=None):
        """validate_message equals the expected message (a message or its text format)."""
        from google.protobuf import text_format
        if isinstance(expected_message_maybe_ascii, type(validate_message)):
            expected = expected_message_maybe_ascii
        elif isinstance(expected_message_maybe_ascii, (str, bytes)):
            expected = type(validate_message)()
            text = expected_message_maybe_ascii
            text_format.Merge(text.decode() if isinstance(text, bytes) else text, expected)
        else:
            raise AssertionError("Can't compare protos of type %s and %s." % (
                type(expected_message_maybe_ascii), type(validate_message)))
        if expected != validate_message:
            self.assertMultiLineEqual(text_format.MessageToString(expected),
                                      text_format.MessageToString(validate_message), msg)

    def assertProtoEqualsVersion(self, expected, actual, producer=None, min_consumer=None,
                                 msg=None):
        """assertProtoEquals for a GraphDef: `expected` (text format) gets the versions
        entry this library writes (producer tf.GRAPH_DEF_VERSION, min_consumer
        tf.GRAPH_DEF_VERSION_MIN_CONSUMER unless given) in front of it."""
        import tensorweave
        if producer is None:
            producer = tensorweave.GRAPH_DEF_VERSION
        if min_consumer is None:
            min_consumer = tensorweave.GRAPH_DEF_VERSION_MIN_CONSUMER
        expected = "versions { producer: %d min_consumer: %d };\n%s" % (
            producer, min_consumer, expected)
        self.assertProtoEquals(expected, actual, msg=msg)

    @contextlib.contextmanager
    def captureWritesToStream(self, stream):
        """Captures what is written to `stream` (one with a file descriptor, such as
        sys.stdout or sys.stderr, so writes from C code and subprocesses count too)
        inside the block; yields a CapturedWrites whose contents() returns them."""
        stream.flush()
        fd = stream.fileno()
        tmp_fd, tmp_path = tempfile.mkstemp(dir=self.get_temp_dir())
        saved_fd = os.dup(fd)
        os.dup2(tmp_fd, fd)
        try:
            yield CapturedWrites(tmp_path)
        finally:
            stream.flush()  # what Python buffered inside the block belongs to it
            os.close(tmp_fd)
            os.dup2(saved_fd, fd)
            os.close(saved_fd)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        """The block raises exception_type whose message matches (re.search) or passes
        the predicate; for an OpError the names of its op are searched too."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                from tensorweave.framework.errors import OpError
                if isinstance(e, OpError):
                    err_str, op = e.message, e.op
                else:
                    err_str, op = str(e), None
                while op is not None:
                    err_str += "\nCaused by: " + op.name
                    op = getattr(op, "_original_op", None)
                return re.search(expected_err_re_or_predicate, err_str)
        try:
            yield
            self.fail(exception_type.__name__ + " not raised")
        except Exception as e:  # our own failure lands here too, as TF's does
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError("Exception of type %s: %s" % (str(type(e)), str(e)))

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        from tensorweave.framework.errors import OpError
        return self.assertRaisesWithPredicateMatch(OpError, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(self, exception_type=None):
        if exception_type is None:
            from tensorweave.framework.errors import InvalidArgumentError
            exception_type = InvalidArgumentError
        return self.assertRaisesWithPredicateMatch(exception_type, _INCOMPATIBLE_SHAPES_RE)

    assertRaisesRegexp = absltest.TestCase.assertRaisesRegex
    assertItemsEqual = absltest.TestCase.assertCountEqual

