"""Protobuf message classes made from schemas written in code.

TensorFlow's formats use messages that no package we depend on ships as Python classes
(tf.train.Example, QueueRunnerDef, WhileContextDef, ...). Their schema is built as a
`FileDescriptorProto` next to the code that uses it; `message_classes` turns it into
classes. protobuf is imported here, so callers build their schemas lazily.
"""
from __future__ import annotations

from typing import Dict, Sequence


def message_classes(files: Sequence, names: Sequence[str]) -> Dict[str, type]:
    """{full name: message class} of the messages `names` ("tensorflow.Example") of the
    `FileDescriptorProto`s `files`, added in order to a fresh descriptor pool."""
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:  # protobuf < 4.22
        get = message_factory.MessageFactory(pool).GetPrototype
    return {n: get(pool.FindMessageTypeByName(n)) for n in names}
