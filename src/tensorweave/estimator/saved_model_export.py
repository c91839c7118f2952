"""How an Estimator writes SavedModels (export_saved_model,
experimental_export_all_saved_models): one MetaGraphDef per mode whose input receiver fn
is given, each the model_fn of that mode over the receiver's tensors with the variables
of one checkpoint.

  TRAIN  tags ['train'], signature 'train' (TrainOutput), the train op in the
         'saved_model_train_op' collection
  EVAL   tags ['eval'], signature 'eval' (EvalOutput of loss, predictions, metrics)
  PREDICT tags ['serve'], the model_fn's serving export outputs

The first MetaGraphDef written saves the variables; the others reuse them.
"""
from __future__ import annotations

import os
from typing import Dict, Optional

from tensorweave.estimator import export as export_lib
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.framework import errors
from tensorweave.framework.graph import Graph, GraphKeys, Operation, Tensor, \
    add_to_collection, get_collection

# the modes in the order TF writes their MetaGraphDefs
_EXPORT_ORDER = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def export_all_saved_models(estimator, export_dir_base, receiver_fn_map: Dict,
                            assets_extra: Optional[Dict], as_text: bool, checkpoint_path,
                            strip_default_attrs: bool) -> bytes:
    """Writes the SavedModel of every mode of `receiver_fn_map` (mode -> input receiver
    fn) into a new timestamped directory under `export_dir_base`; returns that directory.

    Raises:
      ValueError: no checkpoint, no mode with a receiver fn, or variables missing from
        the checkpoint.
    """
    from tensorweave.platform import gfile
    from tensorweave.saved_model.writer import SavedModelBuilder
    checkpoint_path = _checkpoint_to_export(estimator, checkpoint_path)
    export_dir = export_lib.get_timestamped_export_dir(export_dir_base)
    temp_dir = export_lib.get_temp_export_dir(export_dir)
    builder = SavedModelBuilder(temp_dir)
    save_variables = True
    for mode in _EXPORT_ORDER:
        if receiver_fn_map.get(mode):
            _add_meta_graph_for_mode(estimator, builder, receiver_fn_map[mode], mode,
                                     checkpoint_path, save_variables, strip_default_attrs)
            save_variables = False
    if save_variables:
        raise ValueError("No valid modes for exporting found. Got {}."
                         .format(receiver_fn_map.keys()))
    builder.save(as_text)
    if assets_extra:
        extra = os.path.join(os.fsdecode(temp_dir), "assets.extra")
        for dest, source in assets_extra.items():
            target = os.path.join(extra, dest)
            gfile.MakeDirs(os.path.dirname(target))
            gfile.Copy(source, target)
    gfile.Rename(os.fsdecode(temp_dir), os.fsdecode(export_dir))
    return export_dir


def _checkpoint_to_export(estimator, checkpoint_path) -> str:
    """The given checkpoint, else the latest, else the warm-start checkpoint."""
    from tensorweave.train import checkpoint_management
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if checkpoint_path:
        return checkpoint_path
    settings = estimator._warm_start_settings
    if not settings:
        raise ValueError("Couldn't find trained model at {}.".format(estimator.model_dir))
    checkpoint_path = settings.ckpt_to_initialize_from
    if os.path.isdir(checkpoint_path):
        checkpoint_path = checkpoint_management.latest_checkpoint(checkpoint_path)
    return checkpoint_path


def _add_meta_graph_for_mode(estimator, builder, receiver_fn, mode: str, checkpoint_path,
                             save_variables: bool, strip_default_attrs: bool) -> None:
    """Adds to `builder` the MetaGraphDef of model_fn(`mode`) over the receiver of
    `receiver_fn`, with the variables of `checkpoint_path` (saved too where
    `save_variables`)."""
    from tensorweave.ops.random.random_ops import set_random_seed
    from tensorweave.runtime.session import Session
    from tensorweave.train.meta_graph import SaverDef
    from tensorweave.train.monitored_session import Scaffold
    from tensorweave.train.saver import Saver
    with Graph().as_default() as g:
        estimator._create_global_step(g)
        set_random_seed(estimator.config.tf_random_seed)
        receiver = receiver_fn()
        spec = estimator._call_model_fn(receiver.features, getattr(receiver, "labels", None),
                                        mode, estimator.config)
        export_outputs = export_lib.export_outputs_for_mode(
            spec.mode, serving_export_outputs=spec.export_outputs,
            predictions=spec.predictions, loss=spec.loss, metrics=spec.eval_metric_ops)
        signatures = export_lib.build_all_signature_defs(
            receiver.receiver_tensors, export_outputs,
            getattr(receiver, "receiver_tensors_alternatives", None),
            serving_only=mode == ModeKeys.PREDICT)
        with Session(config=estimator._session_config) as session:
            local_init = spec.scaffold.local_init_op
            if local_init is None:
                local_init = Scaffold.default_local_init_op()
            # a SavedModel is for TensorFlow Serving too: its variables in TF's V2 format
            # (the Saver reads the model_dir's checkpoint in either format)
            saver = spec.scaffold.saver or Saver(sharded=True, write_version=SaverDef.V2)
            _restore(saver, session, checkpoint_path, mode)
            _add_train_op(spec.train_op)
            add = builder.add_meta_graph_and_variables if save_variables \
                else builder.add_meta_graph
            arguments = dict(tags=export_lib.EXPORT_TAG_MAP[mode],
                             signature_def_map=signatures,
                             assets_collection=get_collection(GraphKeys.ASSET_FILEPATHS),
                             main_op=local_init, saver=saver,
                             strip_default_attrs=strip_default_attrs)
            if save_variables:
                add(session, **arguments)
            else:
                add(**arguments)


def _restore(saver, session, checkpoint_path, mode: str) -> None:
    try:
        saver.restore(session, checkpoint_path)
    except errors.NotFoundError as e:
        raise ValueError(
            "Could not load all requested variables from checkpoint. Please make sure your "
            "model_fn does not expect variables that were not saved in the checkpoint.\n\n"
            "Encountered error with mode `{}` while restoring checkpoint from: `{}`. Full "
            "Traceback:\n\n{}".format(mode, checkpoint_path, e)) from None


def _add_train_op(train_op) -> None:
    """Puts the train op (None in PREDICT) in the SavedModel's train op collection, as
    TF's builder does for Estimator exports."""
    from tensorweave.saved_model import names as constants
    if train_op is None:
        return
    if not isinstance(train_op, (Tensor, Operation)):
        raise TypeError("`train_op` {} needs to be a Tensor or Op.".format(train_op))
    if get_collection(constants.TRAIN_OP_KEY):
        raise ValueError("Graph already contains one or more main ops under the "
                         "collection {}.".format(constants.TRAIN_OP_KEY))
    add_to_collection(constants.TRAIN_OP_KEY, train_op)
