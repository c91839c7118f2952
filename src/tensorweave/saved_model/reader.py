"""Loading a SavedModel into a session (TF1 `tf.saved_model.loader.load`).

The MetaGraphDef whose tag set equals the one asked for is imported into the session's
graph (`tf.train.import_meta_graph`), its variables are restored from
<export_dir>/variables/variables by the Saver it names, and its init op runs with each
asset tensor fed the path of its file under <export_dir>/assets (so a vocabulary a table
reads is found wherever the SavedModel was copied). The init op is the one TF2's builder
names in the "__saved_model_init_op" signature, else the "saved_model_main_op"
collection's, else the "legacy_init_op" collection's."""
from __future__ import annotations

import logging
from typing import Dict, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.saved_model import names as _c
from tensorweave.saved_model import saved_model_file as _file
from tensorweave.saved_model import signatures as _sig

_log = logging.getLogger("tensorflow")


@tf_export("saved_model.maybe_saved_model_directory", "saved_model.contains_saved_model",
           "saved_model.loader.maybe_saved_model_directory")
def maybe_saved_model_directory(export_dir) -> bool:
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt (it may still
    fail to load)."""
    return _file.contains_saved_model(export_dir)


@tf_export("saved_model.load", "saved_model.loader.load")
def load(sess, tags, export_dir, import_scope: Optional[str] = None, **saver_kwargs):
    """Loads the MetaGraphDef tagged `tags` of the SavedModel in `export_dir` into
    `sess`: its graph into `sess.graph`, its variables restored, its init op run.

    Args:
      sess: the Session to load into.
      tags: the tag set (a list or set of strings) of the MetaGraphDef to load.
      export_dir: the SavedModel directory.
      import_scope: a name scope the loaded nodes go under (the returned MetaGraphDef
        keeps the saved names).
      **saver_kwargs: passed to `tf.train.import_meta_graph`.

    Returns:
      The loaded `MetaGraphDef` protocol buffer (signature_def, collection_def, ...).

    Raises:
      IOError: no SavedModel in `export_dir`, or it does not parse.
      RuntimeError: no MetaGraphDef has exactly these tags, or it has more than one init
        op.
    """
    from tensorweave.train.meta_graph import import_meta_graph
    from tensorweave.train.saver import Saver
    meta_graph = meta_graph_of(_file.read(export_dir), tags)
    with sess.graph.as_default():
        saver = import_meta_graph(meta_graph, import_scope=import_scope, **saver_kwargs)
        if isinstance(saver, Saver):
            saver.restore(sess, _file.variables_path(export_dir))
        elif saver is None:
            _log.info("The specified SavedModel has no variables; no checkpoints were "
                      "restored.")
        init_op = _init_op(meta_graph, import_scope)
        if init_op is not None:
            sess.run([init_op], feed_dict=asset_paths(export_dir, meta_graph, import_scope))
    return meta_graph


def meta_graph_of(saved_model, tags):
    """The MetaGraphDef of `saved_model` whose tag set is `tags`.

    Raises:
      RuntimeError: none is, naming the tag sets there are.
    """
    available = []
    for mg in saved_model.meta_graphs:
        available.append(set(mg.meta_info_def.tags))
        if set(mg.meta_info_def.tags) == set(tags):
            return mg
    raise RuntimeError(
        "MetaGraphDef associated with tags %s could not be found in SavedModel, with "
        "available tags '%s'. To inspect available tag-sets in the SavedModel, please "
        "use the SavedModel CLI: `saved_model_cli`." % (str(tags).strip("[]"), available))


def asset_paths(export_dir, meta_graph, import_scope: Optional[str] = None) -> Dict[str, str]:
    """{asset tensor name: the path of its file under <export_dir>/assets} for the
    assets of `meta_graph` (its asset_file_def field and its asset collection)."""
    from tensorboard.compat.proto import meta_graph_pb2
    assets = list(meta_graph.asset_file_def)
    if _c.ASSETS_KEY in meta_graph.collection_def:
        for item in meta_graph.collection_def[_c.ASSETS_KEY].any_list.value:
            # by bytes: the Any names TF's message, tensorweave's class is tensorboard's
            if item.type_url.rpartition("/")[2].endswith("AssetFileDef"):
                assets.append(meta_graph_pb2.AssetFileDef.FromString(item.value))
    out = {}
    for asset in assets:
        name = asset.tensor_info.name
        if import_scope:
            name = "%s/%s" % (import_scope, name)
        out[name] = _file.join(export_dir, _c.ASSETS_DIRECTORY, asset.filename)
    return out


def _init_op(meta_graph, import_scope: Optional[str]):
    if _c.INIT_OP_SIGNATURE_KEY in meta_graph.signature_def:
        return _sig.load_op_from_signature_def(
            meta_graph.signature_def[_c.INIT_OP_SIGNATURE_KEY], _c.INIT_OP_SIGNATURE_KEY,
            import_scope)
    for key in (_c.MAIN_OP_KEY, _c.LEGACY_INIT_OP_KEY):
        if key in meta_graph.collection_def:
            names = meta_graph.collection_def[key].node_list.value
            if len(names) != 1:
                raise RuntimeError("Expected exactly one SavedModel init op. Found %d: %s."
                                   % (len(names), list(names)))
            return _graph.get_default_graph().get_collection(key)[0]
    return None
