"""tf.estimator.Exporter and its kinds: what `train_and_evaluate` does with the model
after an evaluation (export it as a SavedModel under <model_dir>/export/<name>/).

  LatestExporter  exports after every evaluation, keeping the newest `exports_to_keep`
  FinalExporter   exports once, at the end of training
  BestExporter    exports when the evaluation beats the best so far (by `compare_fn`,
                  default: smaller loss); the best so far is first read back from the
                  evaluation event files, so a restarted job keeps its standard

Each export calls `estimator.export_saved_model(export_path, serving_input_receiver_fn,
assets_extra=..., as_text=..., checkpoint_path=...)`, which writes a new timestamped
directory under `export_path`.
"""
from __future__ import annotations

import collections
import logging
import os
from typing import Callable, Optional

from tensorweave.estimator.model_fn import fn_args
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import gfile

_log = logging.getLogger("tensorflow")

_LOSS_KEY = "loss"  # tf.estimator's MetricKeys.LOSS


@tf_export("estimator.Exporter")
class Exporter:
    """A kind of model export. Subclasses define `name` and `export`."""

    @property
    def name(self) -> str:
        """The directory name under the export base directory where exports of this kind
        are written (neither None nor empty)."""
        raise NotImplementedError("%s must define the `name` property."
                                  % type(self).__name__)

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        """Exports `estimator` (its `checkpoint_path` checkpoint) under `export_path`.

        Args:
          estimator: the `Estimator` to export.
          export_path: the directory to write exports under.
          checkpoint_path: the checkpoint to export.
          eval_result: what `Estimator.evaluate` gave for that checkpoint.
          is_the_final_export: True for the export at the end of training.

        Returns:
          The path of the export, or None if this exporter skipped it.
        """
        raise NotImplementedError("%s must define `export`." % type(self).__name__)


class _SavedModelExporter(Exporter):
    """Exports the serving graph and the checkpoint: the part every kind shares."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable,
                 assets_extra: Optional[dict] = None, as_text: bool = False):
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


_ExportPath = collections.namedtuple("_ExportPath", "path export_version")


def _garbage_collect_exports(export_dir_base, exports_to_keep: Optional[int]) -> None:
    """Deletes all but the `exports_to_keep` newest exports under `export_dir_base`.

    Exports are the subdirectories named by a 10-digit number (a timestamp in seconds);
    other entries are left alone.
    """
    if exports_to_keep is None:
        return
    base = os.fsdecode(export_dir_base)
    versions = []
    for entry in gfile.ListDirectory(base):
        entry = os.fsdecode(entry).rstrip("/")
        if len(entry) == 10 and entry.isdigit():
            versions.append(_ExportPath(os.path.join(base, entry), int(entry)))
    versions.sort(key=lambda p: p.export_version)
    for old in versions[:max(len(versions) - exports_to_keep, 0)]:
        try:
            gfile.DeleteRecursively(old.path)
        except errors.NotFoundError as e:
            _log.warning("Can not delete %s recursively: %s", old.path, e)


def _check_exports_to_keep(exports_to_keep, message: str) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(message)


@tf_export("estimator.LatestExporter")
class LatestExporter(Exporter):
    """Exports the serving graph and checkpoint after every evaluation, deleting all but
    the newest `exports_to_keep` exports.

    Args:
      name: unique name of this exporter, the directory under the export base.
      serving_input_receiver_fn: function of no arguments returning a
        `ServingInputReceiver`.
      assets_extra: dict of destination path (under assets.extra) -> source file path.
      as_text: write the SavedModel proto in text format.
      exports_to_keep: how many exports to keep; None keeps all.

    Raises:
      ValueError: `exports_to_keep` is not positive.
    """

    def __init__(self, name: str, serving_input_receiver_fn: Callable,
                 assets_extra: Optional[dict] = None, as_text: bool = False,
                 exports_to_keep: Optional[int] = 5):
        self._saved_model_exporter = _SavedModelExporter(
            name, serving_input_receiver_fn, assets_extra, as_text)
        self._exports_to_keep = exports_to_keep
        _check_exports_to_keep(exports_to_keep,
                               "`exports_to_keep`, if provided, must be positive number")

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        result = self._saved_model_exporter.export(
            estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result


@tf_export("estimator.FinalExporter")
class FinalExporter(Exporter):
    """Exports the serving graph and checkpoint once, at the end of training.

    Args:
      name, serving_input_receiver_fn, assets_extra, as_text: as for `LatestExporter`.
    """

    def __init__(self, name: str, serving_input_receiver_fn: Callable,
                 assets_extra: Optional[dict] = None, as_text: bool = False):
        self._saved_model_exporter = _SavedModelExporter(
            name, serving_input_receiver_fn, assets_extra, as_text)

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        _log.info("Performing the final export in the end of training.")
        return self._saved_model_exporter.export(
            estimator, export_path, checkpoint_path, eval_result, is_the_final_export)


def _loss_smaller(best_eval_result, current_eval_result) -> bool:
    """True if `current_eval_result` has a smaller 'loss' than `best_eval_result`.

    Raises:
      ValueError: either result is empty or has no loss.
    """
    if not best_eval_result or _LOSS_KEY not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or _LOSS_KEY not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result[_LOSS_KEY] > current_eval_result[_LOSS_KEY]


def _verify_compare_fn_args(compare_fn) -> None:
    """`compare_fn` must take exactly best_eval_result and current_eval_result."""
    args = set(fn_args(compare_fn))
    for needed in ("best_eval_result", "current_eval_result"):
        if needed not in args:
            raise ValueError("compare_fn (%s) must include %s argument." % (compare_fn, needed))
    others = list(args - {"best_eval_result", "current_eval_result"})
    if others:
        raise ValueError("compare_fn (%s) has following not expected args: %s"
                         % (compare_fn, others))


@tf_export("estimator.BestExporter")
class BestExporter(Exporter):
    """Exports the serving graph and checkpoint whenever the model beats the best so far.

    The first export always happens. The best result so far is first read from the
    evaluation event files (`event_file_pattern`, under the estimator's model_dir), so a
    restarted job does not export a model worse than one it exported before.

    Args:
      name: unique name of this exporter, the directory under the export base.
      serving_input_receiver_fn: function of no arguments returning a
        `ServingInputReceiver`.
      event_file_pattern: the evaluation event files, relative to model_dir; None does
        not read them (not safe across restarts).
      compare_fn: function(best_eval_result, current_eval_result) -> True if the current
        result is better; default: a smaller 'loss'.
      assets_extra: dict of destination path (under assets.extra) -> source file path.
      as_text: write the SavedModel proto in text format.
      exports_to_keep: how many exports to keep; None keeps all.

    Raises:
      ValueError: `compare_fn` is None or takes other arguments, or `exports_to_keep`
        is not positive.
    """

    def __init__(self, name: str = "best_exporter",
                 serving_input_receiver_fn: Optional[Callable] = None,
                 event_file_pattern: Optional[str] = "eval/*.tfevents.*",
                 compare_fn: Callable = _loss_smaller, assets_extra: Optional[dict] = None,
                 as_text: bool = False, exports_to_keep: Optional[int] = 5):
        if compare_fn is None:
            raise ValueError("`compare_fn` must not be None.")
        _verify_compare_fn_args(compare_fn)
        self._compare_fn = compare_fn
        self._saved_model_exporter = _SavedModelExporter(
            name, serving_input_receiver_fn, assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        # the model_dir whose event files gave _best_eval_result (read again on a change)
        self._model_dir = None
        self._best_eval_result = None
        self._has_exported = False
        self._exports_to_keep = exports_to_keep
        _check_exports_to_keep(
            exports_to_keep, "`exports_to_keep`, if provided, must be a positive number. "
            "Got %s" % exports_to_keep)

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            _log.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._get_best_eval_result(
                os.path.join(self._model_dir, self._event_file_pattern))
        if (self._best_eval_result is None or not self._has_exported
                or self._compare_fn(best_eval_result=self._best_eval_result,
                                    current_eval_result=eval_result)):
            _log.info("Performing best model export.")
            self._best_eval_result = eval_result
            result = self._saved_model_exporter.export(
                estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
            _garbage_collect_exports(export_path, self._exports_to_keep)
            self._has_exported = True
            return result
        return None

    def _get_best_eval_result(self, event_files: str):
        """The best of the results the event files hold (each event's simple values, by
        tag), or None."""
        from tensorweave.summary.writer import summary_iterator
        best = None
        for event_file in gfile.Glob(event_files):
            for event in summary_iterator(event_file):
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value
                          if v.HasField("simple_value")}
                # positional, as TF calls it here
                if result and (best is None or self._compare_fn(best, result)):
                    best = result
        return best
