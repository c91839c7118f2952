"""Writing a SavedModel (TF1 `tf.saved_model.builder.SavedModelBuilder`, `simple_save`).

A SavedModel is one set of variables and assets with one or more MetaGraphDefs that use
them, each under a tag set ("serve", "train", ...) and with named signatures. The first
MetaGraphDef is added with `add_meta_graph_and_variables`, which saves the variables as
a V2 checkpoint (the tensor-bundle format TensorFlow reads) under variables/ and copies
the asset files under assets/; later ones with `add_meta_graph`. `save` writes
saved_model.pb. What is written is what TF1's builder writes: the assets as AssetFileDef
`Any`s in the "saved_model_assets" collection, the main op in "saved_model_main_op", a
sharded Saver's SaverDef, so TensorFlow loads our SavedModels and we load its."""
from __future__ import annotations

import logging
import os
from typing import Dict, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import file_io
from tensorweave.saved_model import names as _c
from tensorweave.saved_model import saved_model_file as _file
from tensorweave.saved_model import signatures as _sig

_log = logging.getLogger("tensorflow")


@tf_export("saved_model.Builder", "saved_model.builder.SavedModelBuilder")
class SavedModelBuilder:
    """Builds a SavedModel in `export_dir` (see the module docstring).

    Args:
      export_dir: the directory to write; it must not exist or be empty.

    Raises:
      AssertionError: `export_dir` exists and is not empty.
      NotFoundError: `export_dir` is a file.
    """

    def __init__(self, export_dir):
        self._saved_model = _file.saved_model_class()(
            saved_model_schema_version=_c.SAVED_MODEL_SCHEMA_VERSION)
        self._export_dir = file_io.fspath(export_dir)
        if file_io.exists(self._export_dir):
            if not file_io.isdir(self._export_dir):
                # TF lists the path as a directory, which fails with its NotFoundError
                raise errors.NotFoundError(None, None, "Could not find directory %s"
                                           % self._export_dir)
            if file_io.listdir(self._export_dir):
                raise AssertionError(
                    "Export directory %s already exists, and isn't empty. Please choose "
                    "a different export directory, or delete all the contents of the "
                    "specified directory." % self._export_dir)
        else:
            file_io.makedirs(self._export_dir)
        self._has_saved_variables = False
        self._saved_asset_files = set()

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map: Optional[Dict] = None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices: bool = False, main_op=None,
                                     strip_default_attrs: bool = False, saver=None) -> None:
        """Saves the variables of `sess` and the assets, and adds the current graph as
        the MetaGraphDef tagged `tags`.

        Args:
          sess: the Session holding the variables' values.
          tags: the tag set of this MetaGraphDef (e.g. [tf.saved_model.SERVING]).
          signature_def_map: key -> SignatureDef (build_signature_def and friends).
          assets_collection: scalar string constants naming asset files to copy in (e.g.
            tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)); the loader feeds each the
            copy's path.
          legacy_init_op: the main op's older name (used when `main_op` is None).
          clear_devices: drop device assignments from the saved graph.
          main_op: an Operation the loader runs after restoring (e.g. table inits).
          strip_default_attrs: omit attrs that have their op's default value.
          saver: the Saver to save and restore with (default: a sharded V2 Saver of
            every saveable object).

        Raises:
          AssertionError: variables were already saved (use `add_meta_graph`), or a
            signature's TensorInfo lacks a name or dtype.
          KeyError: a signature uses a key reserved for init and train ops.
          TypeError, ValueError: a bad main op or asset tensor (see `add_meta_graph`).
        """
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        signature_def_map = signature_def_map or {}
        _validate_signature_def_map(signature_def_map)
        self._add_collections(assets_collection, main_op if main_op is not None
                              else legacy_init_op)
        file_io.makedirs(_file.join(self._export_dir, _c.VARIABLES_DIRECTORY))
        saver = saver or _default_saver()
        saver.save(sess, _file.variables_path(self._export_dir), write_meta_graph=False,
                   write_state=False)
        self._add(saver, tags, signature_def_map, clear_devices, strip_default_attrs)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map: Optional[Dict] = None,
                       assets_collection=None, legacy_init_op=None,
                       clear_devices: bool = False, main_op=None,
                       strip_default_attrs: bool = False, saver=None) -> None:
        """Adds the current graph as the MetaGraphDef tagged `tags`, using the variables
        and assets saved by `add_meta_graph_and_variables` (arguments as there).

        Raises:
          AssertionError: variables were not saved yet, or a signature's TensorInfo
            lacks a name or dtype.
          KeyError: a signature uses a key reserved for init and train ops.
          TypeError: `main_op` is not an Operation, or an asset is not a scalar string
            constant.
          ValueError: the graph already has a main op.
        """
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        signature_def_map = signature_def_map or {}
        _validate_signature_def_map(signature_def_map)
        self._add_collections(assets_collection, main_op if main_op is not None
                              else legacy_init_op)
        self._add(saver or _default_saver(), tags, signature_def_map, clear_devices,
                  strip_default_attrs)

    def save(self, as_text: bool = False) -> bytes:
        """Writes saved_model.pb (saved_model.pbtxt with `as_text`).

        Returns:
          The path written (bytes, as TF1 returns it).
        """
        if as_text:
            from google.protobuf import text_format
            path = _file.join(self._export_dir, _c.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = _file.join(self._export_dir, _c.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        from tensorweave.ops.io import checkpoint_format
        checkpoint_format.write_atomic(path, data)
        _log.info("SavedModel written to: %s", path)
        return os.fsencode(path)

    # -- helpers --
    def _add(self, saver, tags, signature_def_map, clear_devices, strip_default_attrs):
        proto = saver.export_meta_graph(clear_devices=clear_devices,
                                        strip_default_attrs=strip_default_attrs).to_proto()
        proto.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            proto.signature_def[key].CopyFrom(signature)
        self._saved_model.meta_graphs.add().CopyFrom(proto)

    def _add_collections(self, assets_collection, main_op) -> None:
        self._copy_assets(assets_collection)
        if main_op is None:
            return
        if not isinstance(main_op, _graph.Operation):
            raise TypeError("Expected %s to be an Operation but got type %s instead."
                            % (main_op, type(main_op)))
        g = _graph.get_default_graph()
        for key in (_c.MAIN_OP_KEY, _c.LEGACY_INIT_OP_KEY):
            if g.get_collection(key):
                raise ValueError("Graph already contains one or more main ops under the "
                                 "collection %s." % key)
        g.add_to_collection(_c.MAIN_OP_KEY, main_op)

    def _copy_assets(self, assets_collection) -> None:
        """Copies the asset files under assets/ (a second file with the same base name
        gets "_1", "_2", ... appended) and records each as an AssetFileDef in the
        graph's asset collection, as TF1's builder does."""
        if not assets_collection:
            return
        from google.protobuf import any_pb2
        from tensorboard.compat.proto import meta_graph_pb2
        g = _graph.get_default_graph()
        names: Dict[str, str] = {}
        for tensor in assets_collection:
            source = _asset_path(tensor)
            name = os.path.basename(source)
            if name in names and names[name] != source and not _same_bytes(source,
                                                                           names[name]):
                base, k = name, 1
                while name in names:
                    name = "%s_%d" % (base, k)
                    k += 1
            names[name] = source
            asset = meta_graph_pb2.AssetFileDef(filename=name)
            asset.tensor_info.name = tensor.name
            # TF's message name (tensorboard's copy is "tensorboard.AssetFileDef"), which
            # TensorFlow's loader unpacks by
            g.add_to_collection(_c.ASSETS_KEY, any_pb2.Any(
                type_url=_c.ASSET_FILE_DEF_TYPE_URL, value=asset.SerializeToString()))
        directory = _file.join(self._export_dir, _c.ASSETS_DIRECTORY)
        file_io.makedirs(directory)
        for name, source in names.items():
            target = _file.join(directory, name)
            if file_io.exists(source) and source != target and \
                    target not in self._saved_asset_files:
                file_io.copy(source, target)
                self._saved_asset_files.add(target)


def _asset_path(tensor) -> str:
    """The path a scalar string constant holds.

    Raises:
      TypeError: `tensor` is not a scalar string constant.
      ValueError: its path is empty.
    """
    if not isinstance(tensor, _graph.Tensor):
        raise TypeError("Asset path tensor %s must be a Tensor." % (tensor,))
    if tensor.op.type != "Const":
        raise TypeError("Asset path tensor %s must be of type constant. Has type %s instead."
                        % (tensor, tensor.op.type))
    if tensor.dtype.base_dtype != _dt.string:
        raise TypeError("Asset path tensor %s must be of dtype string. Has type %s instead."
                        % (tensor, tensor.dtype))
    from tensorweave.framework.tensor_util import constant_value
    value = constant_value(tensor)
    if value is None or getattr(value, "ndim", 1) != 0:
        raise TypeError("Asset path tensor %s must be a scalar." % (tensor,))
    path = file_io.fspath(value.item() if hasattr(value, "item") else value)
    if not path:
        raise ValueError("Asset filepath tensor %s in is invalid." % (tensor,))
    return path


def _same_bytes(a: str, b: str) -> bool:
    try:
        return file_io.read_bytes(a) == file_io.read_bytes(b)
    except OSError:
        return False


def _validate_signature_def_map(signature_def_map: Dict) -> None:
    """TF's checks: every TensorInfo names a tensor (or a SparseTensor) and has a dtype;
    the init and train op keys are reserved."""
    for signature in signature_def_map.values():
        for info in list(signature.inputs.values()) + list(signature.outputs.values()):
            if info.WhichOneof("encoding") is None:
                raise AssertionError(
                    "Invalid `tensor_info`: %s. All TensorInfo protos used in the "
                    "SignatureDefs must have one of the 'encoding' fields (e.g., name or "
                    "coo_sparse) set." % info)
            if info.dtype == 0:
                raise AssertionError(
                    "Invalid `tensor_info`: %s. All TensorInfo protos used in the "
                    "SignatureDefs must have the dtype field set." % info)
    for key, what in ((_c.INIT_OP_SIGNATURE_KEY, "initialization"),
                      (_c.TRAIN_OP_SIGNATURE_KEY, "the train op")):
        if key in signature_def_map:
            raise KeyError("SignatureDef map key \"%s\" is reserved for %s. Please use a "
                           "different key." % (key, what))


def _default_saver():
    """A sharded V2 Saver of every saveable object (TF1's builder's default)."""
    from tensorweave.train.meta_graph import SaverDef
    from tensorweave.train.saver import Saver
    return Saver(sharded=True, write_version=SaverDef.V2, allow_empty=True)


@tf_export("saved_model.simple_save")
def simple_save(session, export_dir, inputs: Dict, outputs: Dict,
                legacy_init_op=None) -> None:
    """Saves the model of `session` for serving: one MetaGraphDef tagged "serve" with a
    predict signature "serving_default" of `inputs` and `outputs`, the graph's
    ASSET_FILEPATHS as assets, devices cleared.

    Args:
      session: the Session holding the variables.
      export_dir: the directory to write (must not exist or be empty).
      inputs: dict of string to Tensor.
      outputs: dict of string to Tensor.
      legacy_init_op: an op the loader runs after restoring.
    """
    signatures = {_c.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                  _sig.predict_signature_def(inputs, outputs)}
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(
        session, tags=[_c.SERVING], signature_def_map=signatures,
        assets_collection=_graph.get_collection(_graph.GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    b.save()


@tf_export("saved_model.main_op.main_op")
def main_op():
    """An op that initializes the global and local variables and the tables (the usual
    main op of a SavedModel)."""
    from tensorweave.ops.control_flow.structure import group
    from tensorweave.ops.state import variables
    return group(variables.global_variables_initializer(),
                 variables.local_variables_initializer(), variables.tables_initializer())


@tf_export("saved_model.main_op_with_restore", "saved_model.main_op.main_op_with_restore")
def main_op_with_restore(restore_op_name):
    """`main_op()`, then the restore op named `restore_op_name` (a Saver's
    restore_op_name), as one op."""
    from tensorweave.framework.graph import control_dependencies
    from tensorweave.ops.control_flow.structure import group
    restore = restore_op_name
    if isinstance(restore_op_name, (str, bytes)):
        restore = _graph.get_default_graph().as_graph_element(file_io.fspath(restore_op_name))
    with control_dependencies([main_op()]):
        return group(restore)


@tf_export("saved_model.signature_def_utils.MethodNameUpdater")
class MethodNameUpdater:
    """Changes the method names of signatures of an existing SavedModel.

    Args:
      export_dir: the SavedModel directory.

    Raises:
      IOError: no SavedModel there, or it does not parse.
    """

    def __init__(self, export_dir):
        self._export_dir = file_io.fspath(export_dir)
        self._saved_model = _file.read(self._export_dir)

    def replace_method_name(self, signature_key: str, method_name: str, tags=None) -> None:
        """Sets the method name of signature `signature_key` in the MetaGraphDef tagged
        `tags` (a tag or a list of tags), or in every MetaGraphDef when `tags` is None.

        Raises:
          ValueError: a missing key or name, no MetaGraphDef with these tags, or one
            without the signature.
        """
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, list):
            tags = [tags]
        found = False
        for mg in self._saved_model.meta_graphs:
            if tags is None or set(tags) == set(mg.meta_info_def.tags):
                if signature_key not in mg.signature_def:
                    raise ValueError(
                        "MetaGraphDef associated with tags %s does not have a signature_def "
                        "with key: '%s'. This means either you specified the wrong "
                        "signature key or forgot to put the signature_def with the "
                        "corresponding key in your SavedModel." % (tags, signature_key))
                mg.signature_def[signature_key].method_name = method_name
                found = True
        if not found:
            raise ValueError("MetaGraphDef associated with tags %s could not be found in "
                             "SavedModel. This means either you specified invalid tags or "
                             "your SavedModel does not have a MetaGraphDef with the "
                             "specified tags." % (tags,))

    def save(self, new_export_dir=None) -> None:
        """Writes the SavedModel message, in the form it was read (binary or text), to
        `new_export_dir` (default: over the original). As TF's, it writes that file only:
        variables and assets stay where they are."""
        directory = file_io.fspath(new_export_dir) if new_export_dir else self._export_dir
        from tensorweave.ops.io import checkpoint_format
        if file_io.isfile(_file.join(self._export_dir, _c.SAVED_MODEL_FILENAME_PBTXT)) and \
                not file_io.isfile(_file.join(self._export_dir, _c.SAVED_MODEL_FILENAME_PB)):
            from google.protobuf import text_format
            checkpoint_format.write_atomic(
                _file.join(directory, _c.SAVED_MODEL_FILENAME_PBTXT),
                text_format.MessageToString(self._saved_model).encode())
        else:
            checkpoint_format.write_atomic(
                _file.join(directory, _c.SAVED_MODEL_FILENAME_PB),
                self._saved_model.SerializeToString(deterministic=True))
