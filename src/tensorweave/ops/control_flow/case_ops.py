"""tf.case and tf.switch_case: a chain of conds (control_flow_ops.py), one per
predicate or branch key, with TF's argument checks, guards and errors.
"""
from __future__ import annotations

from typing import Callable, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.ops.control_flow.control_flow_ops import cond_of_callables


@tf_export("case")
def case(pred_fn_pairs, default: Callable = None, exclusive: bool = False,
         strict: bool = False, name: str = "case"):
    """The result of the first callable whose predicate is true (TF1 `tf.case`).

    Args:
      pred_fn_pairs: list of (boolean scalar tensor, callable) pairs, or a dict (its
        pairs are tested in the order of the predicates' names, as TF's graph mode).
      default: callable for when no predicate holds (when None, the last pair's
        callable is the default, guarded as TF's: a run where no predicate holds fails).
      exclusive: if True, a run where more than one predicate holds fails with
        InvalidArgumentError.
      strict: as in `cond`.
      name: name scope.

    Returns:
      The selected callable's result.

    Raises:
      TypeError: malformed pairs, or a predicate that is not a bool Tensor.
      ValueError: no pairs.
      InvalidArgumentError (at run time): no predicate holds and there is no default;
        with `exclusive`, more than one holds.
    """
    pairs = _checked_case_pairs(pred_fn_pairs)
    guard_last = default is None
    if not pairs:  # TF fails too, a default or not
        raise ValueError("pred_fn_pairs must not be empty")
    with _graph.name_scope(name, "case", [p for p, _ in pairs]):
        preds = [p for p, _ in pairs]
        if guard_last:
            # TF's default action: the last callable, run only when its predicate holds
            last_pred, last_fn = preds[-1], pairs[-1][1]
            all_preds = list(preds)
            pairs, preds = pairs[:-1], preds[:-1]

            def default():
                from tensorweave.ops.debug.debug_ops import Assert
                check = Assert(last_pred, ["Input error: None of conditions evaluated as "
                                           "True:", _stack(all_preds)])
                with _graph.control_dependencies([check]):
                    return last_fn()
        fn = default
        for p, (_, f) in reversed(list(zip(preds, pairs))):
            fn = _case_branch(p, f, fn, strict)
        if exclusive:
            with _graph.control_dependencies([_assert_at_most_one_true(preds)]):
                return fn()
        return fn()


def _checked_case_pairs(pred_fn_pairs) -> list:
    """`case`'s (bool Tensor, callable) pairs, with TF's checks; a dict's pairs are
    ordered by predicate name, as TF orders them in graph mode."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError("'pred_fn_pairs' must be a list, tuple, or dict. Received: %s"
                        % type(pred_fn_pairs))
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = sorted(pred_fn_pairs.items(),
                               key=lambda pair: getattr(pair[0], "name", ""))
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in 'pred_fn_pairs' must be a 2-tuple. Received %s."
                            % (pair,))
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError("pred must be a Tensor, got: %s" % (pred,))
        if pred.dtype.base_dtype is not _dt.bool:
            raise TypeError("pred must be Tensor of type bool: %s" % pred.name)
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % pred.name)
    return list(pred_fn_pairs)


def _assert_at_most_one_true(preds) -> Operation:
    """An Assert that fails the run when more than one of `preds` holds; its message
    names the predicates and shows their values (TF's)."""
    from tensorweave.ops.debug.debug_ops import Assert
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    stacked = _stack(preds)
    count = reduction_ops.reduce_sum(math_ops.cast(stacked, _dt.int32))
    message = ("Input error: exclusive=True: more than 1 conditions (%s) evaluated as True:"
               % ", ".join(p.name for p in preds))
    return Assert(math_binary.less_equal(count, 1), [message, stacked],
                  summarize=len(preds))


@tf_export("switch_case")
def switch_case(branch_index, branch_fns, default: Optional[Callable] = None,
                name: str = "switch_case"):
    """The result of the callable `branch_index` selects (TF's `tf.switch_case`).

    Exactly one branch runs. TF builds its functional Case op for it (a control flow v2
    op, which tensorweave does not have); here it is a chain of conds on
    `branch_index == key`, with the same results, gradients and side effects.

    Args:
      branch_index: an integer scalar Tensor.
      branch_fns: a dict from int to callable, a list of (int, callable) pairs, or a
        list of callables (keyed by position); the keys must be 0 to len - 1.
      default: the callable for an index outside the keys (None: the callable of the
        largest key).
      name: name scope.

    Returns:
      The selected callable's result.

    Raises:
      TypeError: `branch_index` is not an integer Tensor, or `branch_fns` is malformed.
      ValueError: no branches, or keys that are not 0 to len - 1.
    """
    if not isinstance(branch_index, Tensor):
        raise TypeError("'branch_index' must be a Tensor, got %s" % type(branch_index))
    if not branch_index.dtype.is_integer:
        raise TypeError("'branch_index' must be an integer Tensor, got %s"
                        % branch_index.dtype)
    actions = _indexed_branches(branch_fns)
    if default is not None:
        actions.append(default)
    return switch_case_chain(branch_index, actions, False, name)


def switch_case_chain(branch_index: Tensor, actions: List[Callable], strict: bool,
                      name: str):
    """`actions[branch_index]()`, the last action for an index out of range, as a chain
    of conds (`strict`: as cond's, whether singletons stay lists). Functional Case ops
    of imported graphs lower to it with strict=True (their outputs are always a list)."""
    from tensorweave.ops.math import math_binary
    with _graph.name_scope(name, "switch_case", [branch_index]):
        fn = actions[-1]  # an index matching no key (or the last key) runs this one
        for key in reversed(range(len(actions) - 1)):
            fn = _case_branch(math_binary.equal(branch_index, key), actions[key], fn,
                              strict, _switch_case_mismatch(key))
        return fn()


def _switch_case_mismatch(key: int) -> Callable[[], TypeError]:
    """The error for branches `key` and `key + 1` of a switch_case returning
    different structures or dtypes (TF's wording)."""
    return lambda: TypeError(
        "branches[%d] and branches[%d] arguments to tf.switch_case must have the same "
        "number, type, and overall structure of return values." % (key, key + 1))


def _indexed_branches(branch_fns) -> list:
    """The callables of `switch_case`'s `branch_fns`, in key order (TF's checks)."""
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in 'branch_fns' must be a 2-tuple. Received %s."
                            % (pair,))
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError("key must be a Python `int`, got %s" % type(key))
        if not callable(fn):
            raise TypeError("fn for key %s must be callable." % key)
    keys = [k for k, _ in pairs]
    if min(keys) < 0 or max(keys) >= len(keys) or len(set(keys)) != len(keys):
        raise ValueError("branch indices (keys) must form contiguous range of [0 to %d) "
                         "but found {%s}" % (len(keys), ",".join(map(str, sorted(keys)))))
    return [fn for _, fn in sorted(pairs, key=lambda p: p[0])]


def _stack(ts):
    from tensorweave.ops.array import array_ops
    return array_ops.stack(ts)


def _case_branch(pred, fn, otherwise, strict, mismatch_error=None):
    return lambda: cond_of_callables(pred, fn, otherwise, strict, None, mismatch_error)
