"""The tf.train.Example protocol buffers, declared for the `protobuf` library.

The messages carry TensorFlow's full names (`tensorflow.Example`, ...) and the field
numbers and wire types of TF's public tensorflow/core/example/{feature,example}.proto, so
bytes written by TensorFlow parse here and bytes written here parse in TensorFlow. They
live in a descriptor pool of their own, so they never clash with another copy of these
definitions loaded in the same process.

This module imports google.protobuf (about 40 ms); it is imported on first use only
(parsing_ops.py holds light placeholders for the public classes).
"""
from __future__ import annotations

from typing import Dict

from google.protobuf import descriptor_pb2

from tensorweave.framework.proto_classes import message_classes

_F = descriptor_pb2.FieldDescriptorProto


def _field(msg, name: str, number: int, ftype, label=_F.LABEL_OPTIONAL, type_name=None,
           packed: bool = False, oneof_index=None) -> None:
    f = msg.field.add(name=name, number=number, type=ftype, label=label, json_name=name)
    if type_name:
        f.type_name = type_name
    if packed:
        f.options.packed = True
    if oneof_index is not None:
        f.oneof_index = oneof_index


def _map_field(msg, name: str, entry: str, value_type: str) -> None:
    """A `map<string, value_type> name = 1` field and its nested entry message."""
    e = msg.nested_type.add(name=entry)
    e.options.map_entry = True
    _field(e, "key", 1, _F.TYPE_STRING)
    _field(e, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(msg, name, 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="%s.%s" % (msg.name, entry))


def _feature_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/feature.proto",
                                            package="tensorflow", syntax="proto3")
    for name, ftype, packed in (("BytesList", _F.TYPE_BYTES, False),
                                ("FloatList", _F.TYPE_FLOAT, True),
                                ("Int64List", _F.TYPE_INT64, True)):
        m = fd.message_type.add(name=name)
        _field(m, "value", 1, ftype, _F.LABEL_REPEATED, packed=packed)
    feature = fd.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for i, (name, t) in enumerate((("bytes_list", "BytesList"), ("float_list", "FloatList"),
                                   ("int64_list", "Int64List"))):
        _field(feature, name, i + 1, _F.TYPE_MESSAGE, type_name=".tensorflow." + t,
               oneof_index=0)
    features = fd.message_type.add(name="Features")
    _map_field(features, "feature", "FeatureEntry", ".tensorflow.Feature")
    feature_list = fd.message_type.add(name="FeatureList")
    _field(feature_list, "feature", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=".tensorflow.Feature")
    feature_lists = fd.message_type.add(name="FeatureLists")
    _map_field(feature_lists, "feature_list", "FeatureListEntry", ".tensorflow.FeatureList")
    # nested map entry type names must be fully qualified
    features.field[0].type_name = ".tensorflow.Features.FeatureEntry"
    feature_lists.field[0].type_name = ".tensorflow.FeatureLists.FeatureListEntry"
    return fd


def _example_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto",
                                            package="tensorflow", syntax="proto3",
                                            dependency=["tensorflow/core/example/feature.proto"])
    example = fd.message_type.add(name="Example")
    _field(example, "features", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    seq = fd.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(seq, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")
    return fd


def _build() -> Dict[str, type]:
    names = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
             "FeatureLists", "Example", "SequenceExample")
    classes = message_classes([_feature_file(), _example_file()],
                              ["tensorflow." + n for n in names])
    return {n: classes["tensorflow." + n] for n in names}


MESSAGES: Dict[str, type] = _build()
Example = MESSAGES["Example"]
