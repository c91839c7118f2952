"""I/O: the checkpoint formats (tensorweave's and TF's tensor bundle) and
SaveV2/RestoreV2, TFRecord files, readers (LMDB databases through the optional `lmdb`
package: lmdb_io), tf.train.Example and SequenceExample parsing, and
decoding compressed or JSON strings (decode_ops), WAV audio (audio_ops), speech features
(audio_features: AudioSpectrogram, Mfcc), and protocol buffer messages as tensors
(proto_ops).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.io import (  # noqa: F401
    checkpoint_format, sstable, tensor_bundle, io_ops, record_io, reader_kinds, reader_ops,
    parsing_ops, sequence_parsing_ops, decode_ops, audio_ops, audio_features, proto_ops)
