"""tensorweave.debug: a debugger for graphs (white paper §9; tfdbg's ideas, simple).

    import tensorweave as tf
    import tensorweave.debug as twdbg

    sess = twdbg.watch(tf.Session(), regex=r"while/", dump_root="/tmp/dump",
                       when=twdbg.has_inf_or_nan)
    sess.run(train_op)   # FilterMatchedError: names the first op producing NaN/Inf,
                         # its line, loop iteration and its inputs' ranges
    dump = twdbg.DebugDumpDir("/tmp/dump")
    first = dump.find(twdbg.has_inf_or_nan, first_n=1)[0]
    first.tensor_name, first.frame_name, first.iteration, first.get_tensor()

* `watch(sess, tensors=None, regex=None, dump_root=None, when="always")` wraps a
  session; its runs dump the watched tensors' values (per iteration inside loops)
  always, only when a run fails ("on_error"), or when a filter matches.
* `DebugDumpDir(dump_root)` reads dumps back: `dumped_tensor_data`,
  `watch_key_to_data(key)`, `get_tensors(node, slot)`, `find(predicate)`.
* `has_inf_or_nan(datum, tensor)`: the filter of non-finite values.
* `set_cond_side_effects("warn" | "error" | "ignore" | None)`: what tf.cond does when
  an op with a side effect, created outside its branch functions, is used in only one
  branch (it runs whatever the predicate; see ops/control_flow/cond_side_effects.py).
  None defers to the environment variable TW_COND_SIDE_EFFECTS (default "warn").

Run-time errors of every executor already name the failing op, its user line, the cond
branch and the loop iterations around it (runtime/provenance.py); tf.check_numerics and
tf.add_check_numerics_ops stop a step at a NaN or Inf as in TF1.

This package is not part of the `tf.` namespace (TF1 has no such names); import it as
`tensorweave.debug`.
"""
from tensorweave.debug.dump import DebugDumpDir, DebugTensorDatum
from tensorweave.debug.watch import FilterMatchedError, WatchSession, has_inf_or_nan, watch
from tensorweave.ops.control_flow.cond_side_effects import (CondSideEffectWarning,
                                                            set_mode as set_cond_side_effects)

__all__ = ["watch", "WatchSession", "DebugDumpDir", "DebugTensorDatum", "has_inf_or_nan",
           "FilterMatchedError", "CondSideEffectWarning", "set_cond_side_effects"]
