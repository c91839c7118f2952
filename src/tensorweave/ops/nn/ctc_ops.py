"""Connectionist temporal classification: CTCLoss, ctc_loss_v2 and CTCGreedyDecoder (part
of the nn family).

The loss runs the forward-backward recursions of Graves et al. (2006) in log space,
one time step at a time, each step vectorized over the batch and the label positions
(the "extended" label sequence: blank, l1, blank, l2, ..., blank). The blank is the last
class. The op returns the loss and its gradient with respect to the logits, as TF's
does; the registered gradient scales that by the gradient of the loss. ctc_loss_v2 with
dense labels is TF's composite of standard ops (see its section).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.nn.nn_ops import merge_dims, with_rank
from tensorweave.ops.sparse.sparse_util import check_sorted_in_bounds


def _invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


def _check_sequence_length(ctx, seq_len: np.ndarray, batch: int, max_time: int) -> None:
    if seq_len.ndim != 1:
        raise _invalid(ctx, "sequence_length is not a vector")
    if seq_len.shape[0] != batch:
        raise _invalid(ctx, "len(sequence_length) != batch_size.  len(sequence_length):  %d "
                            "batch_size: %d" % (seq_len.shape[0], batch))
    bad = np.nonzero((seq_len > max_time) | (seq_len < 0))[0]
    if bad.size:
        raise _invalid(ctx, "sequence_length(%d) <= %d" % (bad[0], max_time))


def check_decoder_inputs(ctx, inputs: np.ndarray, seq_len: np.ndarray) -> None:
    """TF's CTCDecodeHelper checks of the greedy and beam search decoders, in its order
    and with its error classes."""
    if inputs.ndim != 3:
        raise errors.InvalidArgumentError(None, ctx.op, "inputs is not a 3-Tensor")
    if inputs.size == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "inputs must not be empty")
    if seq_len.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "sequence_length is not a vector")
    max_time, batch = inputs.shape[:2]
    if seq_len.shape[0] != batch:
        raise errors.FailedPreconditionError(
            None, ctx.op, "len(sequence_length) != batch_size.  len(sequence_length):  %d "
                          "batch_size: %d" % (seq_len.shape[0], batch))
    too_long = np.flatnonzero(seq_len > max_time)  # negative lengths decode nothing
    if too_long.size:
        raise errors.FailedPreconditionError(
            None, ctx.op, "sequence_length(%d) <= %d" % (too_long[0], max_time))


# --- CTCLoss -------------------------------------------------------------------------------
def _ctc_loss_shape(op):
    inputs = with_rank(op.inputs[0].shape, 3)
    with_rank(op.inputs[1].shape, 2)
    values = with_rank(op.inputs[2].shape, 1)
    seq_len = with_rank(op.inputs[3].shape, 1)
    merge_dims(op.inputs[1].shape.as_list()[0] if op.inputs[1].shape.ndims else None,
               values.as_list()[0])
    dims = inputs.as_list() if inputs.ndims is not None else [None, None, None]
    batch = merge_dims(dims[1], seq_len.as_list()[0])
    return [TensorShape([batch]), TensorShape([dims[0], batch, dims[2]])]


register_op("CTCLoss",
            inputs=["inputs: T", "labels_indices: int64", "labels_values: int32",
                    "sequence_length: int32"],
            outputs=["loss: T", "gradient: T"],
            attrs={"T": TypeAttr((_dt.float32, _dt.float64), default=_dt.float32),
                   "preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
                   "ignore_longer_outputs_than_inputs": False},
            shape=_ctc_loss_shape)


def _dense_labels(ctx, indices, values, batch: int, collapse: bool):
    """The label sequences as a [batch, max_len] array (padded) and their lengths."""
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise _invalid(ctx, "labels_indices must be a 2-D matrix of [batch, time] pairs")
    if values.ndim != 1 or values.shape[0] != indices.shape[0]:
        raise _invalid(ctx, "labels_indices and labels_values must contain the same number "
                            "of rows, but saw shapes: %s vs. %s"
                       % (list(indices.shape), list(values.shape)))
    rows, cols = indices[:, 0], indices[:, 1]
    # as TF: a SparseTensor of dense shape [batch, max column + 1] whose indices must be
    # in bounds, in row-major order and distinct
    dense_shape = np.array([batch, max(int(cols.max(initial=-1)) + 1, 0)])
    try:
        check_sorted_in_bounds(ctx, indices, dense_shape)
    except errors.InvalidArgumentError as e:
        raise _invalid(ctx, "label SparseTensor is not valid: " + e.message) from None
    vals = values
    if collapse and rows.size:
        keep = np.ones(rows.shape[0], dtype=bool)
        keep[1:] = (rows[1:] != rows[:-1]) | (vals[1:] != vals[:-1])
        rows, vals = rows[keep], vals[keep]
    lengths = np.bincount(rows, minlength=batch).astype(np.int64)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(rows.shape[0]) - starts[rows]
    labels = np.zeros((batch, int(lengths.max()) if batch else 0), dtype=np.int64)
    labels[rows, position] = vals
    return labels, lengths


def _logsumexp(*terms: np.ndarray) -> np.ndarray:
    top = np.maximum.reduce(terms)
    safe = np.where(np.isfinite(top), top, 0.0)
    total = sum(np.exp(t - safe) for t in terms)
    with np.errstate(divide="ignore"):
        return np.log(total) + safe


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """a shifted right by k along the last axis, -inf filled (state u takes u - k)."""
    out = np.full_like(a, -np.inf)
    out[..., k:] = a[..., :a.shape[-1] - k]
    return out


def _forward_backward(log_probs, labels, lengths, seq_len, merge_repeated: bool):
    """log p(labels | inputs) per batch entry and the posteriors of the classes
    ([time, batch, classes]), from the log-softmax `log_probs` [time, batch, classes]."""
    max_time, batch, classes = log_probs.shape
    blank = classes - 1
    states = 2 * labels.shape[1] + 1
    ext = np.full((batch, states), blank, dtype=np.int64)  # blank, l1, blank, l2, ...
    ext[:, 1::2] = labels
    n_states = 2 * lengths + 1
    valid = np.arange(states)[None, :] < n_states[:, None]
    is_blank = ext == blank
    stay = np.broadcast_to(merge_repeated | is_blank, (batch, states))
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 2:] = ~is_blank[:, 2:] & ~(merge_repeated & (ext[:, 2:] == ext[:, :-2]))
    emit = np.take_along_axis(log_probs, np.broadcast_to(ext, (max_time, batch, states)),
                              axis=2)
    emit = np.where(valid[None], emit, -np.inf)
    neg_inf = np.full((batch, states), -np.inf)

    alpha = np.empty((max_time, batch, states))
    if max_time:
        alpha[0] = neg_inf
        alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, max_time):
        prev = alpha[t - 1]
        alpha[t] = emit[t] + _logsumexp(np.where(stay, prev, -np.inf), _shift(prev, 1),
                                        np.where(skip, _shift(prev, 2), -np.inf))
    beta = np.empty((max_time, batch, states))
    last_t = seq_len.astype(np.int64) - 1
    end = neg_inf.copy()
    end[valid & (np.arange(states)[None, :] >= n_states[:, None] - 2)] = 0.0
    skip_back = np.zeros((batch, states), dtype=bool)
    skip_back[:, :-2] = skip[:, 2:]
    for t in range(max_time - 1, -1, -1):
        if t == max_time - 1:
            rec = neg_inf
        else:
            nxt = beta[t + 1] + emit[t + 1]
            rec = _logsumexp(np.where(stay, nxt, -np.inf), _shift(nxt[:, ::-1], 1)[:, ::-1],
                             np.where(skip_back, _shift(nxt[:, ::-1], 2)[:, ::-1], -np.inf))
        here = (last_t == t)[:, None]
        beta[t] = np.where(here, end, np.where((t < last_t)[:, None], rec, -np.inf))

    rows = np.arange(batch)
    t_end = np.maximum(last_t, 0)
    final = alpha[t_end, rows] if max_time else np.full((batch, states), -np.inf)
    last = final[rows, n_states - 1]
    second = np.where(n_states >= 2, final[rows, np.maximum(n_states - 2, 0)], -np.inf)
    log_p = _logsumexp(last, second)
    log_p = np.where(seq_len == 0, np.where(lengths == 0, 0.0, -np.inf), log_p)
    # posterior of state u at t, summed over the states of each class
    with np.errstate(invalid="ignore"):
        gamma = np.exp(alpha + beta - np.where(np.isfinite(log_p), log_p, 0.0)[None, :, None])
    gamma = np.where(np.isfinite(log_p)[None, :, None], gamma, 0.0)
    posterior = np.zeros((max_time, batch, classes))
    one_hot = np.zeros((batch, states, classes))
    one_hot[rows[:, None], np.arange(states)[None, :], ext] = valid
    posterior = np.einsum("tbu,buc->tbc", np.nan_to_num(gamma), one_hot)
    return log_p, posterior


@kernel("CTCLoss", cheap=False)
def _ctc_loss_kernel(ctx, inputs, indices, values, seq_len):
    if inputs.ndim != 3:
        raise _invalid(ctx, "inputs is not a 3-Tensor")
    max_time, batch, classes = inputs.shape
    _check_sequence_length(ctx, seq_len, batch, max_time)
    if classes < 1:
        raise _invalid(ctx, "num_classes cannot be 0.")
    labels, lengths = _dense_labels(ctx, np.asarray(indices), np.asarray(values), batch,
                                    ctx.attrs["preprocess_collapse_repeated"])
    empty = np.nonzero(lengths == 0)[0]
    if empty.size:
        raise _invalid(ctx, "Labels length is zero in batch %d" % empty[0])
    present = np.arange(labels.shape[1])[None, :] < lengths[:, None]
    negative = (labels < 0) & present
    if negative.any():
        b = int(np.argwhere(negative)[0][0])
        raise _invalid(ctx, "All labels must be nonnegative integers, batch: %d labels: %s"
                       % (b, ",".join(str(v) for v in labels[b, :lengths[b]])))
    # A label >= num_classes - 1 is a "null label" in TF's kernel: it ends the label
    # sequence (labels padded with the blank index), and only null labels may follow it
    null = (labels >= classes - 1) & present
    for b in np.flatnonzero(null.any(axis=1)):
        row = labels[b, :lengths[b]]
        first = int(np.argmax(null[b]))
        after = row[first:] < classes - 1
        if after.any():
            raise _invalid(ctx, "Saw a non-null label (index >= num_classes - 1) following "
                           "a null label, batch: %d num_classes: %d labels: %s labels seen "
                           "so far: %s" % (b, classes, ",".join(str(v) for v in row),
                                           ",".join(str(v) for v in row[:first])))
        if first == 0:
            # TF computes something of its own here (not the loss of an empty label)
            raise _invalid(ctx, "The labels of batch %d are all null labels (index >= "
                           "num_classes - 1 = %d): tensorweave does not define a loss for "
                           "an empty label sequence" % (b, classes - 1))
        lengths[b] = first
        labels[b, first:] = 0  # beyond the length: never read as labels
    too_long = lengths > seq_len
    ignore = ctx.attrs["ignore_longer_outputs_than_inputs"]
    if too_long.any() and not ignore:
        b = int(np.nonzero(too_long)[0][0])
        raise _invalid(ctx, "Not enough time for target transition sequence (required: %d, "
                            "available: %d)%d, You can turn this error into a warning by "
                            "using the flag ignore_longer_outputs_than_inputs"
                       % (lengths[b], seq_len[b], b))
    work = inputs.astype(np.float64)
    shifted = work - work.max(axis=2, keepdims=True) if work.size else work
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    log_p, posterior = _forward_backward(log_probs, labels, lengths, seq_len,
                                         ctx.attrs["ctc_merge_repeated"])
    grad = np.exp(log_probs) - posterior
    in_sequence = np.arange(max_time)[:, None] < seq_len[None, :]
    keep = in_sequence & ~too_long[None, :]
    grad = np.where(keep[:, :, None], grad, 0.0)
    loss = np.where(too_long, 0.0, -log_p)
    return loss.astype(inputs.dtype), grad.astype(inputs.dtype)


# PreventGradient (TF's op): an identity whose gradient fails, for values such as the
# CTCLoss gradient output that cannot be differentiated again
register_op("PreventGradient", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "message": ""}, shape=lambda op: op.inputs[0].shape)


@kernel("PreventGradient")
def _prevent_gradient_kernel(ctx, x):
    return x


@gradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError("Gradient explicitly disabled. Reason: %s" % op._get_attr("message"))


@gradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _):
    from tensorweave.ops.array import array_ops
    fused = apply_op("PreventGradient", [op.outputs[1]],
                     {"message": "Currently there is no way to take the second derivative "
                                 "of ctc_loss due to the fused implementation's "
                                 "interaction with tf.gradients()"},
                     name="PreventGradient").outputs[0]
    return [array_ops.reshape(grad_loss, [1, -1, 1]) * fused, None, None, None]


@tf_export("nn.ctc_loss")
def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None) -> Tensor:
    """The CTC loss (negative log probability of the labels) of each batch entry.

    Args:
      labels: an int32 SparseTensor of shape [batch, max_label_length]; values in
        [0, num_classes - 1) (the last class is the blank).
      inputs: logits (unnormalized), float32 or float64, of shape
        [max_time, batch, num_classes] ([batch, max_time, num_classes] if not
        `time_major`).
      sequence_length: an int32 vector [batch] of the sequence lengths (<= max_time).
      preprocess_collapse_repeated: merge repeated labels before computing the loss.
      ctc_merge_repeated: if False, repeated non-blank labels are not merged in the
        paths (each emission is a separate label).
      ignore_longer_outputs_than_inputs: give 0 loss and gradient to entries whose
        labels are longer than their sequence, instead of failing.
      time_major: the layout of `inputs`.
      logits: alias of `inputs`.

    Returns:
      A 1-D Tensor [batch] of losses.

    Raises:
      TypeError: `labels` is not a SparseTensor.
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected argument `labels` to be a SparseTensor. Received "
                        "labels=%s of type: %s" % (labels, type(labels).__name__))
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = convert_to_tensor(logits if inputs is None else inputs, name="logits")
    if not time_major:
        from tensorweave.ops.array import array_ops
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    op = apply_op("CTCLoss", [inputs, labels.indices, labels.values, sequence_length],
                  {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                   "ctc_merge_repeated": bool(ctc_merge_repeated),
                   "ignore_longer_outputs_than_inputs":
                       bool(ignore_longer_outputs_than_inputs)},
                  name="CTCLoss")
    return op.outputs[0]


# --- ctc_loss_v2 -----------------------------------------------------------------------------
# With SparseTensor labels, TF1's ctc_loss_v2 moves the blank to the last class and runs
# CTCLoss. With dense labels it runs TF's batched forward-backward (Sim et al., 2017) built
# from standard ops, which we build the same way: its results differ from CTCLoss's where
# no alignment exists (TF gives every state a start and end weight of 1e-307, so such a row
# costs about 707 instead of failing) and it accepts empty label sequences.
def _dim(t: Tensor, i: int):
    """The static size of dimension i of `t`, else a scalar Tensor (TF's _get_dim)."""
    from tensorweave.ops.array import array_ops
    d = t.shape.as_list()[i] if t.shape.ndims is not None else None
    return d if d is not None else array_ops.shape(t)[i]


def _ctc_state_trans(label_seq: Tensor) -> Tensor:
    """[batch, states, states] transitions (to, from) of the alignment model: state 0
    starts, states 1..L are the labels, L+1..2L+1 the blanks after label 0..L; a label
    follows the previous one directly unless they are equal."""
    from tensorweave.framework.graph import name_scope
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import ones, zeros_like
    from tensorweave.ops.array.array_join_ops import concat, stack, tile
    from tensorweave.ops.indexing.indexing_gather import scatter_nd
    from tensorweave.ops.linalg.matrix_ops import eye
    from tensorweave.ops.math import math_binary, math_ops
    with name_scope("ctc_state_trans"):
        label_seq = convert_to_tensor(label_seq, name="label_seq")
        batch_size, num_labels = _dim(label_seq, 0), _dim(label_seq, 1)
        num_label_states = num_labels + 1
        num_states = 2 * num_label_states
        label_states = math_ops.range(num_label_states)
        blank_states = label_states + num_label_states
        start_to_label = [[1, 0]]
        blank_to_label = stack([label_states[1:], blank_states[:-1]], 1)
        label_to_blank = stack([blank_states, label_states], 1)
        indices = concat([start_to_label, blank_to_label, label_to_blank], 0)
        values = ones([_dim(indices, 0)])
        trans = scatter_nd(indices, values, shape=[num_states, num_states])
        trans += eye(num_states)  # self-loops
        batch_idx = zeros_like(label_states[2:])
        indices = stack([batch_idx, label_states[2:], label_states[1:-1]], 1)
        indices = tile(array_ops.expand_dims(indices, 0), [batch_size, 1, 1])
        batch_idx = array_ops.expand_dims(math_ops.range(batch_size), 1) * [1, 0, 0]
        indices += array_ops.expand_dims(batch_idx, 1)
        repeats = math_binary.equal(label_seq[:, :-1], label_seq[:, 1:])
        values = 1.0 - math_ops.cast(repeats, _dt.float32)
        label_to_label = scatter_nd(indices, values, [batch_size, num_states, num_states])
        return array_ops.expand_dims(trans, 0) + label_to_label


def _ctc_state_log_probs(label_length: Tensor, max_label_length) -> Tuple[Tensor, Tensor]:
    """[batch, states] log weights of the first and last states: 0 for the start state
    and for label `label_length` and the blank after it, log(1e-307) for the others."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import zeros_like
    from tensorweave.ops.array.array_join_ops import stack
    from tensorweave.ops.indexing.indexing_gather import one_hot
    from tensorweave.ops.math import math_ops, math_unary
    num_label_states = max_label_length + 1
    num_states = 2 * num_label_states
    log_0 = math_ops.cast(math_unary.log(math_ops.cast(0, _dt.float64) + 1e-307),
                          _dt.float32)
    initial = one_hot(zeros_like(label_length, dtype=_dt.int32), depth=num_states,
                      on_value=0.0, off_value=log_0, axis=1)
    label_final = one_hot(label_length, depth=num_label_states, axis=0)
    final_mask = stack([label_final, label_final])  # a label and its blank
    final = array_ops.reshape((1.0 - final_mask) * log_0, [num_states, -1])
    return initial, array_ops.transpose(final)


def _ilabel_to_state(labels: Tensor, num_labels, ilabel_log_probs: Tensor) -> Tensor:
    """[time, batch, states] log probabilities each state emits (-inf for the start)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat, tile
    from tensorweave.ops.array.array_pad_ops import pad
    from tensorweave.ops.indexing.indexing_gather import one_hot
    from tensorweave.ops.math import math_unary, reduction_ops
    num_label_states = _dim(labels, 1)
    blank = tile(ilabel_log_probs[:, :, :1], [1, 1, num_label_states + 1])
    labels_1hot = array_ops.expand_dims(one_hot(labels, depth=num_labels), axis=0)
    state_log_probs = reduction_ops.reduce_sum(
        array_ops.expand_dims(ilabel_log_probs, axis=2) * labels_1hot, axis=3)
    state_log_probs = concat([state_log_probs, blank], axis=2)
    return pad(state_log_probs, [[0, 0], [0, 0], [1, 0]],
               constant_values=math_unary.log(0.0))


def _state_to_olabel(labels: Tensor, num_labels, states: Tensor) -> Tensor:
    """[time, batch, classes] log posteriors of the classes from those of the states."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.indexing.indexing_gather import one_hot
    from tensorweave.ops.math import math_unary, reduction_ops
    num_label_states = _dim(labels, 1) + 1
    label_states = array_ops.expand_dims(states[:, :, 1:num_label_states], axis=3)
    blank_states = states[:, :, num_label_states:]
    labels_1hot = one_hot(labels - 1, depth=num_labels - 1, on_value=0.0,
                          off_value=math_unary.log(0.0))
    label_olabels = reduction_ops.reduce_logsumexp(
        label_states + array_ops.expand_dims(labels_1hot, axis=0), axis=2)
    blank_olabels = reduction_ops.reduce_logsumexp(blank_states, axis=2, keepdims=True)
    return concat([blank_olabels, label_olabels], axis=-1)


def _forward_backward_log(trans_log_probs, initial, final, observed, logit_length):
    """(normalized log posteriors of the states [time, batch, states], log likelihood
    [batch]) of the alignment model, by two scans renormalized at every step."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import zeros_like
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.control_flow.functional_ops import scan
    from tensorweave.ops.indexing.indexing_select import sequence_mask
    from tensorweave.ops.math import math_unary, reduction_ops
    bwd_trans_log_probs = array_ops.transpose(trans_log_probs, [0, 2, 1])

    def forward(state, obs):
        state = array_ops.expand_dims(state, axis=1) + trans_log_probs
        state = reduction_ops.reduce_logsumexp(state, axis=-1) + obs
        return state - reduction_ops.reduce_logsumexp(state, axis=-1, keepdims=True)

    def backward(accs, elems):
        state, cum_log_sum = accs
        obs, step_mask = elems
        state = array_ops.expand_dims(state + obs, axis=1) + bwd_trans_log_probs
        state = reduction_ops.reduce_logsumexp(state, axis=-1)
        log_prob_sum = reduction_ops.reduce_logsumexp(state, axis=-1, keepdims=True)
        state -= log_prob_sum
        cum_log_sum += array_ops.squeeze(log_prob_sum, axis=[-1]) * step_mask
        step_mask = array_ops.expand_dims(step_mask, axis=1)
        return state * step_mask + final * (1.0 - step_mask), cum_log_sum

    mask = array_ops.transpose(sequence_mask(logit_length, _dim(observed, 0), _dt.float32))
    # TF's inclusive scans: the initial value is the first (last, backwards) row
    fwd = concat([array_ops.expand_dims(initial, 0),
                  scan(forward, observed, initial, back_prop=False)], 0)
    start = (final, zeros_like(logit_length, dtype=_dt.float32))
    bwd, cum_log_sum = [concat([rows, array_ops.expand_dims(first, 0)], 0)
                        for rows, first in zip(scan(backward, (observed, mask), start,
                                                    reverse=True, back_prop=False), start)]
    fwd_bwd = fwd[1:] + bwd[1:]
    fwd_bwd -= reduction_ops.reduce_logsumexp(fwd_bwd, axis=2, keepdims=True)
    fwd_bwd += math_unary.log(array_ops.expand_dims(mask, axis=2))
    return fwd_bwd, bwd[0, :, 0] + cum_log_sum[0]


def _ctc_loss_and_grad(logits, labels, label_length, logit_length) -> Tuple[Tensor, Tensor]:
    """(loss [batch], its gradient [time, batch, classes]) of TF's dense CTC, the blank
    being class 0."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_select import sequence_mask
    from tensorweave.ops.math import math_unary
    from tensorweave.ops.nn.nn_softmax import log_softmax
    num_labels = _dim(logits, 2)
    ilabel_log_probs = log_softmax(logits)
    initial, final = _ctc_state_log_probs(label_length, _dim(labels, 1))
    fwd_bwd, log_likelihood = _forward_backward_log(
        math_unary.log(_ctc_state_trans(labels)), initial, final,
        _ilabel_to_state(labels, num_labels, ilabel_log_probs), logit_length)
    olabel_log_probs = _state_to_olabel(labels, num_labels, fwd_bwd)
    grad = math_unary.exp(ilabel_log_probs) - math_unary.exp(olabel_log_probs)
    logit_mask = sequence_mask(logit_length, _dim(logits, 0), _dt.float32)
    grad *= array_ops.expand_dims(array_ops.transpose(logit_mask), axis=2)
    return -log_likelihood, grad


def _ctc_loss_dense(labels, logits, label_length, logit_length, logits_time_major: bool,
                    blank_index: int, name: Optional[str]) -> Tensor:
    from tensorweave.autodiff.custom_gradient import custom_gradient
    from tensorweave.framework.graph import name_scope
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.indexing.indexing_select import where
    from tensorweave.ops.math import math_binary, math_ops
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        label_length = convert_to_tensor(label_length, name="label_length")
        logit_length = convert_to_tensor(logit_length, name="logit_length")
        orig_dtype = logits.dtype
        if orig_dtype in (_dt.float16, _dt.bfloat16):
            logits = math_ops.cast(logits, _dt.float32)
        if not logits_time_major:
            logits = array_ops.transpose(logits, perm=[1, 0, 2])
        if blank_index != 0:  # the blank becomes class 0, the classes before it move up
            if blank_index < 0:
                blank_index += _dim(logits, 2)
            logits = concat([logits[:, :, blank_index:blank_index + 1],
                             logits[:, :, :blank_index], logits[:, :, blank_index + 1:]],
                            axis=2)
            labels = where(math_binary.less(labels, blank_index), labels + 1, labels)

        @custom_gradient
        def compute_ctc_loss(logits_t, labels_t, label_length_t, logit_length_t):
            for t, like in ((logits_t, logits), (labels_t, labels),
                            (label_length_t, label_length), (logit_length_t, logit_length)):
                t.set_shape(like.shape)
            loss, grad = _ctc_loss_and_grad(logits_t, labels_t, label_length_t,
                                            logit_length_t)

            def grad_fn(grad_loss):
                return [array_ops.reshape(grad_loss, [1, -1, 1]) * grad, None, None, None]
            return loss, grad_fn

        loss = compute_ctc_loss(logits, labels, label_length, logit_length)
        if orig_dtype in (_dt.float16, _dt.bfloat16):
            loss = math_ops.cast(loss, orig_dtype)
        return loss


@tf_export("nn.ctc_loss_v2")
def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major: bool = True,
                unique=None, blank_index: Optional[int] = None,
                name: Optional[str] = None) -> Tensor:
    """The CTC loss of each batch entry (TF1 `tf.nn.ctc_loss_v2`): "classic" CTC, as
    `ctc_loss` with `preprocess_collapse_repeated=False, ctc_merge_repeated=True`.

    Args:
      labels: int Tensor [batch, max_label_length] padded, or a SparseTensor.
      logits: [max_time, batch, num_classes] ([batch, max_time, num_classes] if not
        `logits_time_major`), unnormalized.
      label_length: int Tensor [batch] of the label lengths (None with a SparseTensor).
      logit_length: int Tensor [batch] of the sequence lengths.
      logits_time_major: the layout of `logits`.
      unique: (unique labels, their indices) as `ctc_unique_labels` gives: TF's memory
        saving variant of the dense computation, of the same result; not used here.
      blank_index: the class of the blank; negative counts from `num_classes`. Default
        0 for dense labels; required for a SparseTensor.
      name: name scope of the dense computation (default "ctc_loss_dense").

    Returns:
      A 1-D Tensor [batch] of losses (negative log probabilities). With dense labels, a
      row whose labels cannot be aligned within its sequence costs about 707
      (-log(1e-307), TF's stand-in for log 0) instead of failing, as in TF.

    Raises:
      ValueError: a SparseTensor without `blank_index`.
    """
    del unique  # an optimization of TF's dense path that does not change the result
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when labels is a "
                             "SparseTensor.")
        logits = convert_to_tensor(logits, name="logits")
        num_classes = _dim(logits, 2)
        if blank_index < 0:
            blank_index += num_classes
        if blank_index != num_classes - 1:  # the blank becomes the last class
            from tensorweave.ops.array.array_join_ops import concat
            from tensorweave.ops.indexing.indexing_select import where
            from tensorweave.ops.math import math_binary
            logits = concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                             logits[:, :, blank_index:blank_index + 1]], axis=2)
            values = labels.values
            labels = SparseTensor(labels.indices,
                                  where(math_binary.less(values, blank_index), values,
                                        values - 1), labels.dense_shape)
        return ctc_loss(labels=labels, inputs=logits, sequence_length=logit_length,
                        time_major=logits_time_major)
    return _ctc_loss_dense(labels, logits, label_length, logit_length, logits_time_major,
                           0 if blank_index is None else blank_index, name)


# --- CTCGreedyDecoder ----------------------------------------------------------------------
def _greedy_shape(op):
    inputs = with_rank(op.inputs[0].shape, 3)
    seq_len = with_rank(op.inputs[1].shape, 1)
    batch = merge_dims(inputs.as_list()[1] if inputs.ndims else None, seq_len.as_list()[0])
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2]),
            TensorShape([batch, 1])]


register_op("CTCGreedyDecoder", inputs=["inputs: T", "sequence_length: int32"],
            outputs=["decoded_indices: int64", "decoded_values: int64",
                     "decoded_shape: int64", "log_probability: T"],
            attrs={"T": TypeAttr((_dt.float32, _dt.float64), default=_dt.float32),
                   "merge_repeated": False, "blank_index": -1},
            shape=_greedy_shape)


@kernel("CTCGreedyDecoder")
def _greedy_kernel(ctx, inputs, seq_len):
    check_decoder_inputs(ctx, inputs, seq_len)
    max_time, batch, classes = inputs.shape
    blank = ctx.attrs["blank_index"]
    blank = blank + classes if blank < 0 else blank
    best = np.argmax(inputs, axis=2) if classes else np.zeros((max_time, batch), np.int64)
    in_sequence = np.arange(max_time)[:, None] < seq_len[None, :]
    top = inputs.max(axis=2) if classes else np.zeros((max_time, batch), inputs.dtype)
    log_prob = -np.where(in_sequence, top, 0).sum(axis=0, dtype=inputs.dtype)
    keep = in_sequence & (best != blank)
    if ctx.attrs["merge_repeated"]:
        repeat = np.zeros_like(keep)
        repeat[1:] = best[1:] == best[:-1]
        keep &= ~repeat
    b, t = np.nonzero(keep.T)  # batch-major order
    lengths = np.bincount(b, minlength=batch)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(b.shape[0]) - starts[b]
    indices = np.stack([b, position], axis=1).astype(np.int64).reshape(-1, 2)
    values = best[t, b].astype(np.int64)
    shape = np.array([batch, lengths.max() if batch else 0], dtype=np.int64)
    return indices, values, shape, log_prob.reshape(batch, 1).astype(inputs.dtype)


not_differentiable("CTCGreedyDecoder")


@tf_export("nn.ctc_greedy_decoder")
def ctc_greedy_decoder(inputs, sequence_length, merge_repeated: bool = True,
                       blank_index: Optional[int] = None
                       ) -> Tuple[List[SparseTensor], Tensor]:
    """Greedy (best path) decoding of CTC logits.

    At each step the most likely class is taken; with `merge_repeated`, repeats of the
    same class in consecutive steps count once; blanks are then dropped.

    Args:
      inputs: float32 or float64 logits [max_time, batch, num_classes].
      sequence_length: an int32 vector [batch] of the sequence lengths.
      merge_repeated: merge repeated classes in the output.
      blank_index: the class of the blank (default: num_classes - 1; negative counts
        from the end).
      name: none (TF1 has no name argument).

    Returns:
      A tuple (decoded, neg_sum_logits): `decoded` a list of one int64 SparseTensor of
      shape [batch, max_decoded_length]; `neg_sum_logits` a [batch, 1] Tensor holding,
      for each sequence, the negated sum over time of the largest logit of each step.
    """
    op = apply_op("CTCGreedyDecoder", [inputs, sequence_length],
                  {"merge_repeated": bool(merge_repeated),
                   "blank_index": -1 if blank_index is None else int(blank_index)},
                  name="CTCGreedyDecoder")
    decoded = SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])
    return [decoded], op.outputs[3]


@tf_export("nn.collapse_repeated")
def collapse_repeated(labels, seq_length, name: Optional[str] = None) -> tuple:
    """Each sequence with runs of a repeated label merged into one label (TF1
    `tf.nn.collapse_repeated`).

    Args:
      labels: an int Tensor [batch, max_length].
      seq_length: an int Tensor [batch], each sequence's length.
      name: name scope.

    Returns:
      (collapsed labels [batch, new max length], left-aligned and padded with zeros; the
      new lengths, of `seq_length`'s type).
    """
    from tensorweave.framework.graph import name_scope
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import ones_like
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.indexing.indexing_gather import gather_nd, scatter_nd
    from tensorweave.ops.indexing.indexing_select import sequence_mask, where
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    from tensorweave.ops.math.scan_ops import cumsum
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        # a label starts a run where it differs from the one before it
        starts = concat([ones_like(labels[:, :1], dtype=_dt.bool),
                         math_binary.not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
        kept = math_binary.logical_and(
            starts, sequence_mask(seq_length, array_ops.shape(labels)[1]))
        counts = math_ops.cast(kept, _dt.int32)
        new_length = reduction_ops.reduce_sum(counts, axis=1)
        at = where(kept)  # [kept, 2]: (row, column) in the input
        column = gather_nd(cumsum(counts, axis=1) - 1, at)
        out = scatter_nd(
            array_ops.stack([math_ops.cast(at[:, 0], _dt.int32), column], axis=1),
            gather_nd(labels, at),
            array_ops.stack([array_ops.shape(labels)[0],
                             reduction_ops.reduce_max(new_length)]))
        out.set_shape(TensorShape([labels.shape.with_rank(2)[0], None]))
        return out, math_ops.cast(new_length, seq_length.dtype)


@tf_export("nn.ctc_unique_labels")
def ctc_unique_labels(labels, name: Optional[str] = None) -> tuple:
    """Each row's distinct labels in order of first appearance, and where each label
    falls among them (TF1 `tf.nn.ctc_unique_labels`; e.g. [3, 4, 4, 3] gives
    [3, 4, 0, 0] and [0, 1, 1, 0]).

    Args:
      labels: an int Tensor [batch, max_label_length], padded with 0.
      name: name scope.

    Returns:
      (the unique labels, int64 [batch, max_label_length], padded with 0; the indices
      into them, int32 [batch, max_label_length]).
    """
    from tensorweave.framework.graph import name_scope
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_pad_ops import pad
    from tensorweave.ops.indexing.indexing_select import unique
    from tensorweave.ops.control_flow.functional_ops import map_fn
    from tensorweave.ops.math import math_ops
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def row(x):
            values, where = unique(x)
            padded = pad(values, [[0, array_ops.shape(x)[0] - array_ops.shape(values)[0]]])
            return [math_ops.cast(padded, _dt.int64), where]
        return tuple(map_fn(row, labels, dtype=[_dt.int64, _dt.int32]))
