"""WAV audio (TF1 `tf.audio`): DecodeWav and EncodeWav, 16-bit PCM as TF reads and writes
it.

DecodeWav reads the RIFF header, the "fmt " chunk (PCM, 16 bits per sample: anything else
is refused as TF refuses it) and the "data" chunk, skipping other chunks, and gives
float32 samples in [-1, 1) (sample / 32768) shaped [samples, channels] with the sample
rate. `desired_channels` keeps the first channels, or repeats the last one to fill;
`desired_samples` truncates, or pads with zeros. EncodeWav writes the 44-byte header and
each sample as round(x * 32768) clamped to the int16 range.
"""
from __future__ import annotations

import collections
import struct
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape


def _decode_shape(op):
    def dim(v):
        return v if v > 0 else None
    op.inputs[0].shape.with_rank(0)
    return [TensorShape([dim(op._get_attr("desired_samples")),
                         dim(op._get_attr("desired_channels"))]), TensorShape([])]


def _encode_shape(op):
    op.inputs[0].shape.with_rank(2)
    op.inputs[1].shape.with_rank(0)
    return TensorShape([])


register_op("DecodeWav", inputs=["contents: string"],
            outputs=["audio: float", "sample_rate: int32"],
            attrs={"desired_channels": -1, "desired_samples": -1}, shape=_decode_shape)
register_op("EncodeWav", inputs=["audio: float", "sample_rate: int32"],
            outputs=["contents: string"], shape=_encode_shape)
not_differentiable("DecodeWav")
not_differentiable("EncodeWav")


class _Reader:
    """Reads little-endian fields from a WAV file's bytes, with TF's errors."""

    def __init__(self, ctx, data: bytes):
        self.ctx, self.data, self.pos = ctx, data, 0

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise errors.InvalidArgumentError(None, self.ctx.op, "Data too short when trying "
                                              "to read %s" % what)
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def tag(self, want: Optional[bytes] = None) -> bytes:
        got = self.take(4, "string")
        if want is not None and got != want:
            raise errors.InvalidArgumentError(
                None, self.ctx.op, "Header mismatch: Expected %s but found %s"
                % (want.decode(), got.decode("latin-1")))
        return got

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4, "uint32"))[0]

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2, "uint16"))[0]


@kernel("DecodeWav")
def _decode_wav_kernel(ctx, contents):
    data = np.asarray(contents).item()
    r = _Reader(ctx, data if isinstance(data, bytes) else bytes(data, "latin-1"))
    r.tag(b"RIFF")
    r.u32()
    r.tag(b"WAVE")
    channels = rate = None
    while True:
        chunk = r.tag()
        size = r.u32()
        if chunk == b"fmt ":
            start = r.pos
            audio_format = r.u16()
            if audio_format != 1:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Bad audio format value of %d; expected 1 (PCM)"
                    % audio_format)
            channels, rate = r.u16(), r.u32()
            r.u32()  # byte rate
            r.u16()  # block alignment
            bits = r.u16()
            if bits != 16:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Can only read 16-bit WAV files, but received %d" % bits)
            if channels < 1:
                raise errors.InvalidArgumentError(None, ctx.op, "Bad number of channels: %d"
                                                  % channels)
            r.pos = start + size
        elif chunk == b"data":
            if channels is None:
                raise errors.InvalidArgumentError(None, ctx.op, "Found a data chunk before "
                                                  "the format chunk")
            raw = r.take(size - size % (2 * channels), "data")
            samples = np.frombuffer(raw, "<i2").reshape(-1, channels)
            break
        else:
            r.take(size + (size & 1), "chunk")  # chunks are padded to an even length
    audio = samples.astype(np.float32) / np.float32(32768)
    want_c, want_n = ctx.attrs["desired_channels"], ctx.attrs["desired_samples"]
    if want_c > 0:
        pick = np.minimum(np.arange(want_c), channels - 1)
        audio = audio[:, pick]
    if want_n > 0:
        out = np.zeros((want_n, audio.shape[1]), np.float32)
        n = min(want_n, audio.shape[0])
        out[:n] = audio[:n]
        audio = out
    return [np.ascontiguousarray(audio), np.int32(rate)]


@kernel("EncodeWav")
def _encode_wav_kernel(ctx, audio, sample_rate):
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "audio must be 2-dimensional "
                                          "[samples, channels], got shape %s"
                                          % list(audio.shape))
    samples, channels = audio.shape
    rate = int(np.asarray(sample_rate))
    pcm = np.clip(np.round(audio * np.float32(32768)), -32768, 32767).astype("<i2")
    body = pcm.tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVE" + b"fmt " + \
        struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16) \
        + b"data" + struct.pack("<I", len(body))
    return np.array(header + body, dtype=object)


DecodeWavOutput = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


@tf_export("audio.decode_wav")
def decode_wav(contents, desired_channels: int = -1, desired_samples: int = -1,
               name: Optional[str] = None) -> DecodeWavOutput:
    """Decodes a 16-bit PCM WAV file (see the module docstring).

    Args:
      contents: a scalar string Tensor, the file's bytes.
      desired_channels: how many channels to return (-1: the file's).
      desired_samples: how many samples to return (-1: the file's).
      name: the op's name.

    Returns:
      A namedtuple DecodeWav (audio, sample_rate): float32 [samples, channels] and an
      int32 scalar.

    Raises:
      InvalidArgumentError (at run time): not a 16-bit PCM WAV file, or truncated.
    """
    op = apply_op("DecodeWav", [contents], {"desired_channels": desired_channels,
                                            "desired_samples": desired_samples},
                  name=name or "DecodeWav")
    return DecodeWavOutput(*op.outputs)


@tf_export("audio.encode_wav")
def encode_wav(audio, sample_rate, name: Optional[str] = None):
    """The bytes of a 16-bit PCM WAV file of `audio` (float32 [samples, channels], in
    [-1, 1]) at `sample_rate` (an int32 scalar)."""
    return apply_op("EncodeWav", [audio, sample_rate], name=name or "EncodeWav").outputs[0]
