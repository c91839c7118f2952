"""TF1's recurrent networks over time: `static_rnn` (unrolled in the graph),
`dynamic_rnn` (a while_loop over a TensorArray of inputs) and their bidirectional forms.

Semantics follow TF1: variables are created under the "rnn" scope (or
"bidirectional_rnn/fw", ".../bw"), the cell is called once per step and reuses its
weights, and with `sequence_length` each sequence's outputs are zero past its length while
its state is copied through unchanged, so the final state is the state at its last
valid step.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, dimension_value
from tensorweave.nn import rnn_cell_impl as _cells
from tensorweave.framework.nest import flatten, is_sequence, pack_sequence_as
from tensorweave.nn.rnn_cell_impl import (assert_like_rnncell, assert_same_structure,
                                          map_structure)
from tensorweave.ops.array import array_ops, array_pad_ops, constant_op
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
from tensorweave.ops.control_flow import structure
from tensorweave.ops.state import variable_scope as vs


def _infer_state_dtype(explicit_dtype, state):
    """The dtype of the outputs: `explicit_dtype`, else the (single) dtype of `state`."""
    if explicit_dtype is not None:
        return _dt.as_dtype(explicit_dtype)
    if is_sequence(state):
        dtypes = [s.dtype for s in flatten(state)]
        if not dtypes:
            raise ValueError("Unable to infer dtype from argument state=%s." % (state,))
        if any(d != dtypes[0] for d in dtypes):
            raise ValueError("Argument state=%s has tensors of different inferred dtypes. "
                             "Unable to infer a single representative dtype. Dtypes "
                             "received: %s" % (state, dtypes))
        return dtypes[0]
    return state.dtype


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, argument `dtype` must be "
                         "specified")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _rnn_step(time, sequence_length, zero_output, state, call_cell):
    """One step with per-sequence masking: entries with time >= their length get zero
    output and keep their previous state (TF1's `_rnn_step` with the selection done at
    every step)."""
    new_output, new_state = call_cell()
    assert_same_structure(zero_output, new_output)
    assert_same_structure(state, new_state)
    finished = math_binary.greater_equal(time, sequence_length)
    output = map_structure(lambda o, n: _copy_through(finished, o, n), zero_output,
                           new_output)
    state = pack_sequence_as(state, [_copy_through(finished, o, n) for o, n in
                                     zip(flatten(state), flatten(new_state))])
    return output, state


def _copy_through(finished, old, new):
    """`new`, except `old` in the batch entries that are `finished` (TensorArrays and
    scalars are taken from `new` whole)."""
    if type(old).__name__ == "TensorArray" or old.shape.ndims == 0:
        return new
    picked = indexing_select.where(finished, old, new)
    picked.set_shape(old.shape)
    return picked


def _zero_output(output_size, batch_size, static_batch, dtype):
    def zeros_for(size):
        z = array_ops.zeros(array_ops.stack(_cells._concat(batch_size, size)), dtype=dtype)
        static = _cells._concat(static_batch, size, static=True)
        if static is not None:
            z.set_shape(static)
        return z
    return map_structure(zeros_for, output_size)


def _check_sequence_length(sequence_length, static_batch):
    """static_rnn's sequence_length as int32, checked to be a vector."""
    sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("Argument `sequence_length` must be a vector of length %s. "
                         "Received sequence_length=%s." % (static_batch, sequence_length))
    return math_ops.cast(sequence_length, _dt.int32)


def _check_input_list(inputs) -> None:
    """static_rnn's inputs: a non-empty Python sequence of per-step inputs."""
    if not is_sequence(inputs):
        raise TypeError("Argument `inputs` must be a sequence. Received: %s" % (inputs,))
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")


@tf_export("nn.static_rnn")
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """Runs `cell` over a Python list of per-step inputs, unrolled in the graph.

    Args:
      cell: an RNNCell.
      inputs: a list of T Tensors [batch, depth] (or nested structures of them).
      initial_state: the first state (default: the cell's zero state; needs `dtype`).
      dtype: the state's dtype when `initial_state` is not given.
      sequence_length: optional int vector [batch]: past each length the output is zero
        and the state is copied through.
      scope: variable scope (default "rnn").

    Returns:
      (outputs, state): the list of T outputs and the final state.

    Raises:
      TypeError: `cell` is not an RNNCell, or `inputs` is not a sequence.
      ValueError: empty inputs, unknown input depth, no initial_state nor dtype, or a
        sequence_length that is not a vector.
    """
    assert_like_rnncell("cell", cell)
    _check_input_list(inputs)
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = inputs
        while is_sequence(first):
            first = flatten(first)[0]
        if first.shape.ndims != 1:
            fixed_batch = first.shape.with_rank_at_least(2)[0]
            for x in flatten(inputs):
                shape = x.shape.with_rank_at_least(2)
                fixed_batch = fixed_batch.merge_with(shape[0])
                for i, size in enumerate(shape.dims[1:]):
                    if dimension_value(size) is None:
                        raise ValueError("Input size (dimension %d of input %s) must be "
                                         "accessible via shape inference, but saw value "
                                         "None." % (i, x))
        else:
            fixed_batch = first.shape.with_rank_at_least(1)[0]
        static_batch = dimension_value(fixed_batch)
        batch_size = static_batch if static_batch else array_ops.shape(first)[0]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length, static_batch)
            zero_output = _zero_output(cell.output_size, batch_size, static_batch,
                                       _infer_state_dtype(dtype, state))
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(x=step_input, s=state):
                return cell(x, s)
            if sequence_length is not None:
                output, state = _rnn_step(time, sequence_length, zero_output, state,
                                          call_cell)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


@tf_export("nn.static_state_saving_rnn")
def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """A `static_rnn` whose initial state comes from a state saver, to which it saves
    the final state: time-truncated RNNs over segments of long sequences.

    The state saver is any object with `state(name)`, returning the saved state Tensor
    of that name, and `save_state(name, value)`, returning an op (or Tensor) that saves
    `value` (TF1's contrib SequenceQueueingStateSaver is one). The saves run whenever
    the last output or the final state is computed.

    Args:
      cell: an RNNCell.
      inputs: a list of T Tensors [batch, input_size].
      state_saver: the state saver object.
      state_name: a string, or, when `cell.state_size` is a tuple, a tuple of strings
        with its structure: the names of the states in the saver.
      sequence_length: optional int32/int64 vector [batch] (see `static_rnn`).
      scope: variable scope (default "rnn").

    Returns:
      (outputs, state): the list of T outputs and the final state.

    Raises:
      TypeError: `cell` is not an RNNCell.
      ValueError: `inputs` is None or empty, or the structure of `state_name` does not
        match that of `cell.state_size`.
    """
    state_size = cell.state_size
    state_is_tuple = is_sequence(state_size)
    if state_is_tuple != is_sequence(state_name):
        raise ValueError("Argument `state_name` should be the same type as "
                         "`cell.state_size`. Received: state_name=%s, cell.state_size=%s."
                         % (state_name, state_size))
    if state_is_tuple:
        state_name_flat = flatten(state_name)
        state_size_flat = flatten(state_size)
        if len(state_name_flat) != len(state_size_flat):
            raise ValueError("Number of elements in argument `state_name` and "
                             "`cell.state_size` are mismatched. Received state_name=%s "
                             "with %d elements and cell.state_size=%s with %d elements."
                             % (state_name, len(state_name_flat), state_size,
                                len(state_size_flat)))
        initial_state = pack_sequence_as(state_size,
                                         [state_saver.state(s) for s in state_name_flat])
    else:
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    if state_is_tuple:
        flat_state = flatten(state)
        saves = [state_saver.save_state(n, s) for n, s in zip(flatten(state_name),
                                                                flat_state)]
    else:
        saves = [state_saver.save_state(state_name, state)]
    with _graph.control_dependencies(saves):
        last_output = outputs[-1]
        outputs[-1] = pack_sequence_as(
            last_output, [structure.identity(o) for o in flatten(last_output)])
        if state_is_tuple:
            state = pack_sequence_as(state, [structure.identity(s) for s in flat_state])
        else:
            state = structure.identity(state)
    return outputs, state


def _reverse(x, lengths, time_axis):
    """Reverses x along its time axis (0 or 1; the batch is the other one), the first
    `lengths` steps only when given."""
    if lengths is None:
        return array_ops.reverse(x, axis=[time_axis])
    return array_pad_ops.reverse_sequence(x, lengths, seq_axis=time_axis,
                                          batch_axis=1 - time_axis)


def _reverse_seq(input_seq, lengths):
    """Reverses a list of per-step (nested) inputs, per sequence when `lengths`."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_steps = [flatten(step) for step in input_seq]
    flat_reversed = []
    for parts in zip(*flat_steps):
        static = parts[0].shape
        for p in parts:
            static = static.merge_with(p.shape)
        stacked = array_ops.stack(list(parts))
        flipped = array_ops.unstack(
            array_pad_ops.reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1),
            num=len(parts))
        for t in flipped:
            t.set_shape(static)
        flat_reversed.append(flipped)
    return [pack_sequence_as(input_seq[0], list(step)) for step in zip(*flat_reversed)]


@tf_export("nn.static_bidirectional_rnn")
def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """A forward and a backward `static_rnn` over the same inputs; outputs concatenated.

    Args:
      cell_fw, cell_bw: RNNCells for the two directions.
      inputs: a list of T Tensors [batch, depth].
      initial_state_fw, initial_state_bw: first states (default: zero states).
      dtype: the states' dtype when initial states are not given.
      sequence_length: optional int vector [batch]; the backward pass then reverses only
        the first sequence_length[b] steps of each sequence.
      scope: variable scope (default "bidirectional_rnn"; the cells get "fw" and "bw").

    Returns:
      (outputs, output_state_fw, output_state_bw), outputs a list of T Tensors
      [batch, fw_size + bw_size].

    Raises:
      TypeError: a cell is not an RNNCell, or `inputs` is not a sequence.
      ValueError: `inputs` is empty.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    _check_input_list(inputs)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    outputs = [pack_sequence_as(fw, [array_ops.concat([a, b], 1)
                                     for a, b in zip(flatten(fw), flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def _transpose_batch_time(x):
    """Swaps the first two dims of x ([B, T, ...] <-> [T, B, ...])."""
    static = x.shape
    if static.ndims is not None and static.ndims < 2:
        raise ValueError("Input tensor should have rank >= 2. Received input=%s of rank %d"
                         % (x, static.ndims))
    if static.ndims is not None:
        perm = [1, 0] + list(range(2, static.ndims))
    else:
        perm = array_ops.concat(([1, 0], math_ops.range(2, array_ops.rank(x))), 0)
    y = array_ops.transpose(x, perm)
    if static.ndims is not None:
        y.set_shape(TensorShape([static.dims[1], static.dims[0]] + list(static.dims[2:])))
    return y


def _best_effort_input_batch_size(flat_input):
    """The batch size of time-major inputs: static when any input knows it."""
    for x in flat_input:
        shape = x.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError("Input tensor should have rank >= 2. Received input=%s of "
                             "rank %d" % (x, shape.ndims))
        batch = dimension_value(shape[1])
        if batch is not None:
            return batch
    return array_ops.shape(flat_input[0])[1]


@tf_export("nn.dynamic_rnn")
def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time dimension of `inputs` with a while_loop.

    Args:
      cell: an RNNCell.
      inputs: [batch, time, depth] (or [time, batch, depth] with time_major), or a nested
        structure of such Tensors.
      sequence_length: optional int vector [batch]: past each length the output is zero
        and the state is copied through.
      initial_state: the first state (default: the cell's zero state; needs `dtype`).
      dtype: the state's dtype when `initial_state` is not given.
      parallel_iterations: iterations run in parallel (default 32).
      swap_memory: swap loop tensors to host memory (passed to while_loop).
      time_major: inputs and outputs are [time, batch, ...].
      scope: variable scope (default "rnn").

    Returns:
      (outputs, state): outputs shaped like the inputs' batch/time dims with the cell's
      output size, and the final state.

    Raises:
      TypeError: `cell` is not an RNNCell.
      ValueError: no initial_state nor dtype, a bad sequence_length, or inputs whose
        depth is unknown or whose time/batch sizes differ.
    """
    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, _dt.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("Argument sequence_length must be a vector of length "
                                 "batch_size. Received sequence_length=%s of shape: %s"
                                 % (sequence_length, sequence_length.shape))
            sequence_length = structure.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _checked_length(sequence_length, batch_size)
        inputs = pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations,
                                                 swap_memory, sequence_length, dtype)
        if not time_major:
            outputs = map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _checked_length(sequence_length, batch_size):
    """sequence_length with a run-time check that it has shape [batch_size]."""
    from tensorweave.framework.api_export import exported
    assert_op = exported("")["Assert"]
    got = array_ops.shape(sequence_length)
    want = array_ops.stack([batch_size])
    check = assert_op(reduction_ops.reduce_all(math_binary.equal(got, want)),
                      ["Expected shape for Tensor %s is " % sequence_length.name, want,
                       " but saw shape: ", got])
    with _graph.control_dependencies([check]):
        return structure.identity(sequence_length, name="CheckSeqLen")


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length=None, dtype=None):
    """The while_loop of dynamic_rnn over time-major `inputs`; returns time-major
    outputs and the final state."""
    from tensorweave.ops.control_flow.control_flow_ops import while_loop
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    state = initial_state
    flat_input = flatten(inputs)
    flat_output_size = flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    input_shapes = [x.shape.with_rank_at_least(3) for x in flat_input]
    const_time_steps, const_batch_size = input_shapes[0].as_list()[:2]
    for x, shape in zip(flat_input, input_shapes):
        if not shape[2:].is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape "
                             "inference, but saw value None for input=%s." % x)
        if dimension_value(shape[0]) != const_time_steps:
            raise ValueError("Time steps is not the same for all the elements in the input "
                             "in a batch. Received time steps=%s for input=%s."
                             % (dimension_value(shape[0]), x))
        if dimension_value(shape[1]) != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the "
                             "input. Received batch size=%s for input=%s."
                             % (dimension_value(shape[1]), x))
    out_dtype = _infer_state_dtype(dtype, state)
    zero_output = _zero_output(cell.output_size, batch_size, None, out_dtype)
    if sequence_length is not None:
        max_sequence_length = reduction_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant_op.constant(0, dtype=_dt.int32, name="time")
    with _graph.name_scope("dynamic_rnn") as base_name:
        pass

    def element_shape(size):
        return TensorShape([const_batch_size]).concatenate(
            TensorShape(size if isinstance(size, (list, tuple, TensorShape)) else [size]))
    output_ta = tuple(
        TensorArray(dtype=out_dtype, size=time_steps, element_shape=element_shape(size),
                    tensor_array_name=base_name + "output_%d" % i)
        for i, size in enumerate(flat_output_size))
    input_ta = tuple(
        TensorArray(dtype=x.dtype, size=time_steps, element_shape=x.shape[1:],
                    tensor_array_name=base_name + "input_%d" % i).unstack(x)
        for i, x in enumerate(flat_input))

    def time_step(t, output_ta_t, state):
        step_inputs = [ta.read(t) for ta in input_ta]
        for x, shape in zip(step_inputs, input_shapes):
            x.set_shape(shape[1:])
        step_inputs = pack_sequence_as(inputs, step_inputs)

        def call_cell():
            return cell(step_inputs, state)
        if sequence_length is not None:
            output, new_state = _rnn_step(t, sequence_length, zero_output, state, call_cell)
        else:
            output, new_state = call_cell()
        output_ta_t = tuple(ta.write(t, out) for ta, out in zip(output_ta_t,
                                                                 flatten(output)))
        return t + 1, output_ta_t, new_state

    # At least one step, so the arrays learn the element shape even for empty lengths.
    loop_bound = math_binary.minimum(time_steps,
                                     math_binary.maximum(1, max_sequence_length))
    _, final_ta, final_state = while_loop(
        lambda t, *_: math_binary.less(t, loop_bound), time_step,
        loop_vars=(time, output_ta, state), parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps, swap_memory=swap_memory)
    final_outputs = []
    for ta, size in zip(final_ta, flat_output_size):
        out = ta.stack()
        static = _cells._concat([const_time_steps, const_batch_size], size, static=True)
        if static is not None:
            out.set_shape(static)
        final_outputs.append(out)
    return pack_sequence_as(cell.output_size, final_outputs), final_state


@tf_export("nn.bidirectional_dynamic_rnn")
def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward and a backward `dynamic_rnn` over the same inputs.

    The backward direction runs on the inputs reversed in time (only the first
    sequence_length[b] steps of each sequence when given) and its outputs are reversed
    back, so both outputs are aligned with the inputs.

    Args:
      cell_fw, cell_bw: RNNCells for the two directions.
      inputs: [batch, time, depth] (or [time, batch, depth] with time_major), or a nested
        structure of such Tensors.
      sequence_length: optional int vector [batch].
      initial_state_fw, initial_state_bw: first states (default: zero states).
      dtype, parallel_iterations, swap_memory, time_major: as for dynamic_rnn.
      scope: variable scope (default "bidirectional_rnn"; the cells get "fw" and "bw").

    Returns:
      ((output_fw, output_bw), (output_state_fw, output_state_bw)).

    Raises:
      TypeError: a cell is not an RNNCell.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis = 0 if time_major else 1
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length,
                initial_state=initial_state_fw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            inputs_reversed = map_structure(
                lambda x: _reverse(convert_to_tensor(x), sequence_length, time_axis),
                inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw, inputs_reversed, sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = map_structure(lambda x: _reverse(x, sequence_length, time_axis), tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


@tf_export("nn.raw_rnn")
def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory: bool = False,
            scope=None):
    """An RNN whose every step `loop_fn` drives (TF1 `tf.nn.raw_rnn`).

    `loop_fn(time, cell_output, cell_state, loop_state)` (called positionally) returns
    `(finished, next_input, next_cell_state, emit_output, next_loop_state)`: at time 0
    (called with None for the last three) the initial input and state, and the structure
    to emit, one example's (None: the cell's output); after each cell call, what comes
    next. The loop runs while any batch entry is unfinished; a finished entry emits zeros
    and keeps its state.

    Args:
      cell: an RNNCell.
      loop_fn: the callable above.
      parallel_iterations: of the while_loop (default 32).
      swap_memory: of the while_loop.
      scope: variable scope (default "rnn").

    Returns:
      (emit_ta, final_state, final_loop_state): TensorArrays of the emitted values per
      step (in the structure of the emit output), the final cell state, and the final
      loop state (None if `loop_fn` returned none at time 0).

    Raises:
      TypeError: `cell` is not an RNNCell or `loop_fn` not callable.
    """
    from tensorweave.ops.control_flow.control_flow_ops import while_loop
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError("Argument `loop_fn` must be a callable. Received: %s." % (loop_fn,))
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = constant_op.constant(0, dtype=_dt.int32)
        # positionally, as TF calls it: a loop_fn may name its parameters as it likes
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None)
        flat_input = flatten(next_input)
        loop_state = init_loop_state if init_loop_state is not None else \
            constant_op.constant(0, dtype=_dt.int32)
        static_batch = TensorShape(None)
        for x in flat_input:
            static_batch = static_batch.merge_with(x.shape.with_rank_at_least(1)[:1])
        batch_size = dimension_value(static_batch[0]) if static_batch.rank else None
        if batch_size is None:
            batch_size = array_ops.shape(flat_input[0])[0]
        assert_same_structure(initial_state, cell.state_size)
        if emit_structure is not None:
            flat_emit = flatten(emit_structure)
            # the template is one example's emit: its whole shape is the per-example
            # size (the batch dimension is added to the zeros and the writes)
            sizes = [e.shape if e.shape.is_fully_defined() else array_ops.shape(e)
                     for e in flat_emit]
            dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            sizes = flatten(cell.output_size)
            dtypes = [flatten(initial_state)[0].dtype] * len(sizes)
        emit_ta = pack_sequence_as(emit_structure, [
            TensorArray(dtype=dt, dynamic_size=True, size=0, name="rnn_output_%d" % i)
            for i, dt in enumerate(dtypes)])
        zero_emit = pack_sequence_as(emit_structure, [
            array_ops.zeros(array_ops.stack(_cells._concat(batch_size, size)), dtype=dt)
            for size, dt in zip(sizes, dtypes)])

        def condition(unused_time, finished, *unused):
            return math_unary.logical_not(reduction_ops.reduce_all(finished))

        def body(time, finished, current_input, emit_ta, state, loop_state):
            output, cell_state = cell(current_input, state)
            assert_same_structure(state, cell_state)
            assert_same_structure(cell.output_size, output)
            next_time = time + 1
            next_finished, next_input, next_state, emit, next_loop_state = loop_fn(
                next_time, output, cell_state, loop_state)
            assert_same_structure(state, next_state)
            assert_same_structure(current_input, next_input)
            assert_same_structure(emit_ta, emit)
            if next_loop_state is not None:
                loop_state = next_loop_state
            emit = map_structure(lambda z, e: _copy_through(finished, z, e), zero_emit,
                                 emit)
            next_state = map_structure(lambda o, n: _copy_through(finished, o, n), state,
                                       next_state)
            emit_ta = map_structure(lambda ta, e: ta.write(time, e), emit_ta, emit)
            return (next_time, math_binary.logical_or(finished, next_finished), next_input,
                    emit_ta, next_state, loop_state)

        out = while_loop(condition, body,
                         [time, finished, next_input, emit_ta, initial_state, loop_state],
                         parallel_iterations=parallel_iterations, swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = out[-3:]
        return emit_ta, final_state, (final_loop_state if init_loop_state is not None
                                      else None)
