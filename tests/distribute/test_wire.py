"""The wire format of tensors and messages (distribute/wire.py): round trips and
the header bytes, by hand."""
import struct

import ml_dtypes
import numpy as np
import pytest

from tensorweave.distribute import wire
from tensorweave.framework import errors


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.float64(2.5),
    np.array([[1 + 2j]], np.complex64),
    np.zeros((0, 4), np.int64),
    np.array([1.5, -2], ml_dtypes.bfloat16),
    np.array([True, False]),
    np.array([b"ab", b"", "\u00e9".encode()], dtype=object),
])
def test_round_trip_keeps_dtype_shape_and_values(value):
    got, dead = wire.decode_tensor(wire.encode_tensor(value))
    assert not dead
    want = np.asarray(value)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes() if want.dtype != object else \
        list(got) == list(want)


def test_header_layout():
    buf = wire.encode_tensor(np.array([[1, 2, 3]], dtype="<i4"))
    assert buf[0] == 0 and buf[1] == 3 and buf[2:5] == b"<i4" and buf[5] == 2
    assert struct.unpack_from("<2q", buf, 6) == (1, 3)
    assert buf[22:] == np.array([1, 2, 3], "<i4").tobytes()


def test_dead_values_and_strings():
    assert wire.decode_tensor(wire.encode_tensor(None, is_dead=True)) == (None, True)
    got, _ = wire.decode_tensor(wire.encode_tensor(b"xyz"))
    assert got.shape == () and got[()] == b"xyz"


def test_only_tensors_travel():
    with pytest.raises(errors.InvalidArgumentError, match="only tensors travel"):
        wire.encode_tensor(object())


def test_a_gpu_array_travels_through_host_memory():
    class DeviceArray:  # what the wire sees of a CuPy array: the CUDA interface, .get()
        __cuda_array_interface__ = {"shape": (2, 2), "typestr": "<f4", "version": 3}

        def get(self):
            return np.array([[1, 2], [3, 4]], np.float32)
    got, _ = wire.decode_tensor(wire.encode_tensor(DeviceArray()))
    assert got.dtype == np.float32 and got.tolist() == [[1, 2], [3, 4]]


def test_messages_and_errors():
    meta, tensors = wire.unpack(wire.pack({"a": [1, "b"]}, [wire.encode_tensor(
        np.ones(2, np.float32))]))
    assert meta == {"a": [1, "b"]} and len(tensors) == 1
    np.testing.assert_array_equal(wire.decode_tensor(tensors[0])[0], [1.0, 1.0])
    m = wire.error_meta(errors.NotFoundError(None, None, "no such thing"))
    with pytest.raises(errors.NotFoundError, match=r"no such thing\n\t \[\[task /job:ps"):
        wire.raise_error(m, "/job:ps/replica:0/task:0")
    with pytest.raises(errors.InternalError, match="ValueError: boom"):
        wire.raise_error(wire.error_meta(ValueError("boom")))
    wire.raise_error({"ok": True})  # no error: nothing raised
