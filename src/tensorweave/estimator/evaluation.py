"""How an Estimator evaluates: the eval step counter, the hook that stops after N
batches, one evaluation pass over a checkpoint, and the eval results written as summaries
(what TF keeps in tensorflow/python/training/evaluation.py and estimator.py)."""
from __future__ import annotations

import time
from typing import Dict, Optional

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.graph import GraphKeys, control_dependencies, get_collection
from tensorweave.platform import tf_logging as logging
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook


def get_or_create_eval_step():
    """The graph's eval step: a local int64 variable counting evaluated batches (the
    EVAL_STEP collection, as TF's evaluation._get_or_create_eval_step)."""
    steps = get_collection(GraphKeys.EVAL_STEP)
    if len(steps) == 1:
        return steps[0]
    if len(steps) > 1:
        raise ValueError("Multiple tensors added to tf.GraphKeys.EVAL_STEP")
    from tensorweave.ops.state.variable_scope import get_variable
    from tensorweave.ops.state.init_ops import zeros_initializer
    return get_variable("eval_step", shape=[], dtype=dtypes.int64,
                        initializer=zeros_initializer(), trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.EVAL_STEP])


class StopAfterNEvalsHook(SessionRunHook):
    """Stops an evaluation after `num_evals` batches (reads the eval step each run)."""

    def __init__(self, num_evals: Optional[int], log_progress: bool = True):
        self._num_evals = num_evals
        self._log_progress = log_progress
        self._evals_completed = None

    def set_evals_completed_tensor(self, tensor) -> None:
        self._evals_completed = tensor

    def before_run(self, run_context):
        return SessionRunArgs({"evals_completed": self._evals_completed})

    def after_run(self, run_context, run_values):
        done = int(run_values.results["evals_completed"])
        if self._log_progress:
            if self._num_evals is None:
                logging.info("Evaluation [%d]", done)
            elif done % max(self._num_evals // 10, 1) == 0 or done >= self._num_evals:
                logging.info("Evaluation [%d/%d]", done, self._num_evals)
        if self._num_evals is not None and done >= self._num_evals:
            run_context.request_stop()


def evaluate_once(checkpoint_path: Optional[str], master: str, scaffold, eval_ops,
                  final_ops: dict, hooks: list, config) -> dict:
    """Runs `eval_ops` until the input ends (OutOfRangeError) or a hook stops, on the
    variables of `checkpoint_path` (initialized ones when None), and returns the values
    of `final_ops` after the last batch."""
    from tensorweave.ops.state.state_ops import assign_add
    from tensorweave.ops.control_flow.structure import identity
    from tensorweave.train.basic_session_run_hooks import FinalOpsHook
    from tensorweave.train.monitored_session import ChiefSessionCreator, MonitoredSession
    eval_step = get_or_create_eval_step()
    hooks = list(hooks)
    if eval_ops is not None:
        update_eval_step = assign_add(eval_step, 1)
        eval_ops = [eval_ops, update_eval_step]
        with control_dependencies(eval_ops):
            done = identity(eval_step)
        for h in hooks:
            if isinstance(h, StopAfterNEvalsHook):
                h.set_evals_completed_tensor(done)
    logging.info("Starting evaluation at " + time.strftime("%Y-%m-%dT%H:%M:%S"))
    start = time.time()
    final_hook = FinalOpsHook(final_ops)
    hooks.append(final_hook)
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
                                  master=master, config=config)
    with MonitoredSession(session_creator=creator, hooks=hooks) as session:
        if eval_ops is not None:
            while not session.should_stop():
                session.run(eval_ops)
    logging.info("Inference Time : {:0.5f}s".format(time.time() - start))
    logging.info("Finished evaluation at " + time.strftime("%Y-%m-%d-%H:%M:%S"))
    return final_hook.final_ops_values


def _dict_to_str(d: dict) -> str:
    return ", ".join("%s = %s" % (k, v) for k, v in sorted(d.items())
                     if not isinstance(v, bytes))


def write_dict_to_summary(output_dir: str, dictionary: Dict, global_step: int) -> None:
    """Writes the scalar (and array) results of an evaluation as one Summary event of
    step `global_step` into `output_dir` (as TF's Estimator does for TensorBoard)."""
    from tensorweave.summary import _proto_class
    from tensorweave.summary.writer import FileWriterCache
    from tensorweave.ops.array.array_shape_ops import make_tensor_proto
    logging.info("Saving dict for global step %d: %s", global_step, _dict_to_str(dictionary))
    summary = _proto_class("Summary")()
    for key, value in dictionary.items():
        if value is None or key == "global_step":
            continue
        if isinstance(value, (float, np.floating)):
            summary.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            summary.value.add(tag=key, simple_value=int(value))
        elif isinstance(value, bytes):
            try:
                parsed = _proto_class("Summary").FromString(value)
            except Exception:  # noqa: BLE001 - any parse failure means "not a Summary"
                logging.warning("Skipping summary for %s, cannot parse string to Summary.",
                                key)
                continue
            for i, v in enumerate(parsed.value):
                v.tag = "%s/%d" % (key, i)
            summary.value.extend(parsed.value)
        elif isinstance(value, np.ndarray):
            entry = summary.value.add(tag=key, node_name=key)
            entry.tensor.CopyFrom(make_tensor_proto(value))
        else:
            logging.warning("Skipping summary for %s, must be a float, np.float32, np.int64, "
                            "np.int32 or int or np.ndarray or a serialized string of "
                            "Summary.", key)
    writer = FileWriterCache.get(output_dir)
    writer.add_summary(summary, global_step)
    writer.flush()


def write_checkpoint_path_to_summary(output_dir: str, checkpoint_path: str,
                                     global_step: int) -> None:
    from tensorweave.summary import _proto_class
    from tensorweave.summary.writer import FileWriterCache
    from tensorweave.ops.array.array_shape_ops import make_tensor_proto
    logging.info("Saving 'checkpoint_path' summary for global step %d: %s", global_step,
                 checkpoint_path)
    summary = _proto_class("Summary")()
    summary.value.add(tag="checkpoint_path",
                      tensor=make_tensor_proto(checkpoint_path, dtype=dtypes.string))
    writer = FileWriterCache.get(output_dir)
    writer.add_summary(summary, global_step)
    writer.flush()
