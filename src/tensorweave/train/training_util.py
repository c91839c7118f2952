"""global_step helpers: the int64 scalar Variable counting training steps (TF1)."""
from __future__ import annotations

import logging

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor

_log = logging.getLogger("tensorflow")
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


@tf_export("train.global_step")
def global_step(sess, global_step_tensor) -> int:
    """The value of the global step in `sess`, as a Python int.

    Args:
      sess: a Session.
      global_step_tensor: the global step Variable or Tensor, or its name.
    """
    return int(sess.run(global_step_tensor))


@tf_export("train.get_global_step")
def get_global_step(graph=None):
    """The global step of `graph` (default graph if None), or None.

    It is the single entry of the GLOBAL_STEP collection, else the tensor named
    'global_step:0'.

    Raises:
      TypeError: the global step found is not an integer scalar Variable or Tensor.
    """
    graph = graph or _graph.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
        # TF1's `tf.Variable(0, name="global_step")`: its "global_step:0" is the
        # reference variable itself (here the handle of the variable made as one)
        from tensorweave.ops.state.variables import variable_of_ref_tensor
        var = variable_of_ref_tensor(step)
        step = step if var is None else var
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


@tf_export("train.create_global_step")
def create_global_step(graph=None):
    """Creates the global step of `graph`: an int64 scalar Variable 'global_step'
    initialized to 0, not trainable, in GLOBAL_VARIABLES and GLOBAL_STEP.

    Raises:
      ValueError: the graph already has a global step.
    """
    from tensorweave.ops.state import init_ops, variable_scope
    from tensorweave.ops.state.variables import VariableAggregation
    graph = graph or _graph.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=_dt.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            aggregation=VariableAggregation.ONLY_FIRST_REPLICA,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


@tf_export("train.get_or_create_global_step")
def get_or_create_global_step(graph=None):
    """The global step of `graph`, created if it does not exist yet."""
    graph = graph or _graph.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def _get_or_create_global_step_read(graph=None):
    """A copy of the global step's value that the hooks fetch, made once per graph (TF's
    `training_util._get_or_create_global_step_read`); None without a global step.

    A copy, not the variable: a fetched TF1 reference variable shows the run's updates
    (runtime/late_reads.py), while the hooks and the estimator want the step the run
    started from, as TF's do. It reads the initial value when the variable is not
    initialized yet.
    """
    from tensorweave.ops.control_flow.control_flow_ops import cond
    from tensorweave.ops.state.variables import Variable, is_variable_initialized
    graph = graph or _graph.get_default_graph()
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(cached) == 1:
        return cached[0]
    if len(cached) > 1:
        raise RuntimeError("There are multiple items in collection %s. There should be "
                           "only one." % GLOBAL_STEP_READ_KEY)
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None):
        with graph.name_scope(step.op.name + "/"):
            value = step
            if isinstance(step, Variable):
                # with the variable (on a ps under replica_device_setter): the cond
                # passes its handle, which must stay on the variable's device
                with _graph.colocate_with(step.op, ignore_existing=True):
                    value = cond(is_variable_initialized(step), step.read_value,
                                 lambda: step.initial_value)
            read = value + 0
            graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


@tf_export("train.assert_global_step")
def assert_global_step(global_step_tensor) -> None:
    """Checks that `global_step_tensor` can be a global step: an integer scalar (or
    shape-unknown) Variable or Tensor.

    Raises:
      TypeError: it is not.
    """
    from tensorweave.ops.state.variables import Variable
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError('Existing "global_step" must be a Variable or Tensor: %s.'
                        % (global_step_tensor,))
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError('Existing "global_step" does not have integer type: %s'
                        % global_step_tensor.dtype)
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError('Existing "global_step" is not scalar: %s' % shape)
