"""The SavedModel directory on disk: TF's `SavedModel` message in saved_model.pb (or
saved_model.pbtxt), the variables' V2 checkpoint under variables/, asset files under
assets/.

The `tensorboard` package ships the MetaGraphDef message but not SavedModel, which only
wraps it: field 1 the schema version, field 2 the MetaGraphDefs. The class is built here
once from a descriptor, as TF's saved_model.proto declares it, so the bytes and the text
form are TF's."""
from __future__ import annotations

import os

from tensorweave.platform import file_io
from tensorweave.saved_model import names as _c

_message_class = None


def saved_model_class():
    """The `SavedModel` protobuf message class."""
    global _message_class
    if _message_class is None:
        from google.protobuf import descriptor_pb2
        from tensorboard.compat.proto import meta_graph_pb2
        from tensorweave.framework.proto_classes import default_pool_message_classes
        package = meta_graph_pb2.DESCRIPTOR.package
        F = descriptor_pb2.FieldDescriptorProto
        f = descriptor_pb2.FileDescriptorProto(
            name="tensorweave/saved_model/saved_model.proto", package=package,
            syntax="proto3")
        f.dependency.append(meta_graph_pb2.DESCRIPTOR.name)
        m = f.message_type.add(name="SavedModel")
        m.field.add(name="saved_model_schema_version", number=1, type=F.TYPE_INT64,
                    label=F.LABEL_OPTIONAL)
        m.field.add(name="meta_graphs", number=2, type=F.TYPE_MESSAGE,
                    label=F.LABEL_REPEATED, type_name=".%s.MetaGraphDef" % package)
        name = package + ".SavedModel"
        _message_class = default_pool_message_classes([f], [name])[name]
    return _message_class


def join(export_dir, *parts) -> str:
    """A path inside `export_dir` (str or bytes, as TF accepts both)."""
    return file_io.join(file_io.fspath(export_dir), *parts)


def variables_path(export_dir) -> str:
    """The checkpoint prefix of the variables: <export_dir>/variables/variables."""
    return join(export_dir, _c.VARIABLES_DIRECTORY, _c.VARIABLES_FILENAME)


def contains_saved_model(export_dir) -> bool:
    return any(file_io.isfile(join(export_dir, n))
               for n in (_c.SAVED_MODEL_FILENAME_PB, _c.SAVED_MODEL_FILENAME_PBTXT))


def read(export_dir):
    """The `SavedModel` message of `export_dir` (saved_model.pb, else .pbtxt).

    Raises:
      IOError: neither file exists, or the one there does not parse.
    """
    from google.protobuf import message, text_format
    proto = saved_model_class()()
    pb = join(export_dir, _c.SAVED_MODEL_FILENAME_PB)
    pbtxt = join(export_dir, _c.SAVED_MODEL_FILENAME_PBTXT)
    if file_io.isfile(pb):
        try:
            proto.ParseFromString(file_io.read_bytes(pb))
        except message.DecodeError as e:
            raise IOError("Cannot parse file %s: %s." % (pb, e)) from e
    elif file_io.isfile(pbtxt):
        try:
            text_format.Parse(file_io.read_bytes(pbtxt).decode("utf-8"), proto)
        except (text_format.ParseError, UnicodeDecodeError) as e:
            raise IOError("Cannot parse file %s: %s." % (pbtxt, e)) from e
    else:
        raise IOError("SavedModel file does not exist at: %s%s{%s|%s}" % (
            file_io.fspath(export_dir), os.path.sep, _c.SAVED_MODEL_FILENAME_PBTXT,
            _c.SAVED_MODEL_FILENAME_PB))
    return proto
