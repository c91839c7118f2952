"""tf.compat's text, type and compatibility helpers (tensorweave/compat), as TF's."""
import pathlib

import numpy as np
import pytest

import tensorweave as tf


def test_text_helpers():
    assert tf.compat.as_bytes("abc") == b"abc" and tf.compat.as_bytes(b"a") == b"a"
    assert tf.compat.as_bytes(bytearray(b"z")) == b"z"
    assert tf.compat.as_bytes("é", "latin-1") == b"\xe9"
    assert tf.compat.as_str(b"x") == "x" and tf.compat.as_text("y") == "y"
    assert tf.compat.as_str_any(3) == "3" and tf.compat.as_str_any(b"q") == "q"
    assert tf.compat.path_to_str(pathlib.Path("/a/b")) == "/a/b"
    assert tf.compat.path_to_str(7) == 7

    class BytesPath:
        def __fspath__(self):
            return b"/bytes/path"
    import os
    os.PathLike.register(BytesPath)
    assert tf.compat.path_to_str(BytesPath()) == "/bytes/path"  # TF decodes it
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_text(3)


def test_types_dimensions_and_forward_compatibility():
    assert isinstance(np.int64(3), tf.compat.integral_types)
    assert isinstance(2.5, tf.compat.real_types) and not isinstance(1j, tf.compat.real_types)
    assert isinstance(1j, tf.compat.complex_types)
    assert isinstance(b"", tf.compat.bytes_or_text_types)
    assert tf.compat.dimension_at_index([2, None], 0).value == 2
    assert tf.compat.dimension_at_index(tf.TensorShape(None), 3).value is None
    assert tf.compat.forward_compatible(2019, 1, 1)
    with tf.compat.forward_compatibility_horizon(2018, 1, 1):
        assert not tf.compat.forward_compatible(2019, 1, 1)
    assert tf.compat.forward_compatible(2019, 1, 1)
    assert tf.compat.v1 is tf
