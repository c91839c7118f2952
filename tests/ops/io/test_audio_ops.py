"""tf.audio: WAV files as TF reads and writes them (the encoded bytes below are TF 2.21's
for the same samples)."""
import io
import struct
import wave

import numpy as np
import pytest

import tensorweave as tf

SAMPLES = np.array([[0.5, -0.25], [1.5, -1.0], [0.0001, 0.99999]], np.float32)
TF_HEADER = "524946463000000057415645666d74201000000001000200803e000000fa00000400100064617461" \
    "0c000000"


def _wav(frames: np.ndarray, rate: int, width: int = 2, extra_chunk: bool = False) -> bytes:
    """A WAV file written by Python's `wave` module (an independent writer)."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(frames.shape[1])
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames.astype("<i2" if width == 2 else np.uint8).tobytes())
    data = buf.getvalue()
    if extra_chunk:  # a LIST chunk before "data", which readers must skip
        at = data.index(b"data")
        chunk = b"LIST" + struct.pack("<I", 5) + b"INFOx\x00"
        data = data[:at] + chunk + data[at:]
        data = data[:4] + struct.pack("<I", len(data) - 8) + data[8:]
    return data


def test_encode_is_tfs_bytes_and_decodes_back(sess):
    enc = sess.run(tf.audio.encode_wav(SAMPLES, 16000))
    assert enc[:44].hex() == TF_HEADER and len(enc) == 56
    assert np.frombuffer(enc[44:], "<i2").tolist() == [16384, -8192, 32767, -32768, 3, 32767]
    decoded = tf.audio.decode_wav(enc)
    # TF's namedtuple: wav_decoder.audio / .sample_rate (speech_commands' input code)
    assert type(decoded).__name__ == "DecodeWav" and decoded.audio is decoded[0]
    audio, rate = sess.run([decoded.audio, decoded.sample_rate])
    assert rate == 16000 and audio.dtype == np.float32
    np.testing.assert_array_equal(audio, np.array([[16384, -8192], [32767, -32768],
                                                   [3, 32767]]) / 32768.0)


def test_decode_a_file_from_another_writer_with_channels_and_samples(sess):
    frames = np.array([[1000, -2000], [30000, 5], [-7, 8]])
    data = _wav(frames, 22050, extra_chunk=True)
    audio, rate = sess.run(tf.audio.decode_wav(data))
    assert rate == 22050
    np.testing.assert_array_equal(audio, frames / 32768.0)
    more = sess.run(tf.audio.decode_wav(data, desired_channels=3, desired_samples=5)[0])
    want = np.zeros((5, 3))
    want[:3, :2] = frames / 32768.0
    want[:3, 2] = frames[:, 1] / 32768.0  # the last channel repeated
    np.testing.assert_array_equal(more, want)
    fewer = tf.audio.decode_wav(data, desired_channels=1, desired_samples=2)[0]
    assert fewer.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(sess.run(fewer), frames[:2, :1] / 32768.0)


def test_decode_errors(sess):
    for data, message in ((b"RIFX....", "Header mismatch: Expected RIFF but found RIFX"),
                          (_wav(np.zeros((2, 1)), 8000)[:30], "Data too short"),
                          (_wav(np.array([[128], [255]]), 8000, width=1),
                           "Can only read 16-bit WAV files, but received 8")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(tf.audio.decode_wav(data))
    with pytest.raises(ValueError):
        tf.audio.encode_wav(np.zeros(3, np.float32), 8000)
