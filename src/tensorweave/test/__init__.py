"""The tf.test namespace: gradient checking and a TestCase with TF1's helpers."""
from __future__ import annotations

import contextlib
import unittest

import numpy as np

from tensorweave.autodiff.gradient_checker import compute_gradient, compute_gradient_error  # noqa


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """True when CuPy and a CUDA device are usable."""
    try:
        import cupy  # noqa: F401
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError or a CUDA runtime error: no usable GPU
        return False


def gpu_device_name() -> str:
    return "/device:GPU:0" if is_gpu_available() else ""


def is_built_with_cuda() -> bool:
    return is_gpu_available()


def main(argv=None) -> None:
    """Runs the tests of the calling module (TF1 `tf.test.main`)."""
    unittest.main(argv=argv)


class TestCase(unittest.TestCase):
    """unittest.TestCase with TF1's graph-mode helpers."""

    def setUp(self):
        from tensorweave.framework.graph import reset_default_graph
        reset_default_graph()
        self._cached_session = None

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        from tensorweave.framework.graph import get_default_graph
        from tensorweave.runtime.session import Session
        g = graph if graph is not None else get_default_graph()
        with Session(graph=g, config=config) as sess, g.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        from tensorweave.framework.graph import get_default_graph
        from tensorweave.runtime.session import Session
        g = graph if graph is not None else get_default_graph()
        if self._cached_session is None or self._cached_session.graph is not g:
            if self._cached_session is not None:
                self._cached_session.close()
            self._cached_session = Session(graph=g, config=config)
        with self._cached_session.as_default(), g.as_default():
            yield self._cached_session

    test_session = cached_session

    def evaluate(self, tensors):
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol,
                                   err_msg=msg or "")

    def assertAllEqual(self, a, b, msg=None):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=msg or "")

    def assertNear(self, f1, f2, err, msg=None):
        self.assertTrue(abs(f1 - f2) <= err, msg or "%r != %r +/- %r" % (f1, f2, err))

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):
        self.assertEqual(list(np_array.shape), tf_tensor.get_shape().as_list(), msg)

    def assertDTypeEqual(self, target, expected_dtype):
        self.assertEqual(np.asarray(target).dtype, np.dtype(expected_dtype))
