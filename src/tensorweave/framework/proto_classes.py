"""Protobuf message classes made from schemas written in code.

TensorFlow's formats use messages that no package we depend on ships as Python classes
(tf.train.Example, QueueRunnerDef, WhileContextDef, ...). Their schema is built as a
`FileDescriptorProto` next to the code that uses it; `message_classes` turns it into
classes. protobuf is imported here, so callers build their schemas lazily.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence


def message_classes(files: Sequence, names: Sequence[str]) -> Dict[str, type]:
    """{full name: message class} of the messages `names` ("tensorflow.Example") of the
    `FileDescriptorProto`s `files`, added in order to a fresh descriptor pool."""
    from google.protobuf import descriptor_pool
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    return _classes(pool, names)


def default_pool_message_classes(files: Sequence, names: Sequence[str]) -> Dict[str, type]:
    """`message_classes` for schemas that use messages the `tensorboard` package ships
    (MetaGraphDef, TensorShapeProto, ...): `files` go to protobuf's default pool, where
    those live, once (a file already there by name is kept), so a field of such a type
    holds that package's own class."""
    from google.protobuf import descriptor_pool
    pool = descriptor_pool.Default()
    for f in files:
        try:
            pool.FindFileByName(f.name)
        except KeyError:
            pool.Add(f)
    return _classes(pool, names)


def add_field(message, name: str, number: int, ftype: int, type_name: Optional[str] = None,
              repeated: bool = False, oneof: Optional[int] = None):
    """Adds field `name` to the DescriptorProto `message`: of FieldDescriptorProto type
    `ftype` (`type_name` for a message or enum), optional or `repeated`, in the oneof at
    index `oneof`. Returns the field."""
    from google.protobuf import descriptor_pb2
    label = descriptor_pb2.FieldDescriptorProto
    fd = message.field.add(name=name, number=number, type=ftype,
                           label=label.LABEL_REPEATED if repeated else label.LABEL_OPTIONAL)
    if type_name:
        fd.type_name = type_name
    if oneof is not None:
        fd.oneof_index = oneof
    return fd


def _classes(pool, names: Sequence[str]) -> Dict[str, type]:
    from google.protobuf import message_factory
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:  # protobuf < 4.22
        get = message_factory.MessageFactory(pool).GetPrototype
    return {n: get(pool.FindMessageTypeByName(n)) for n in names}
