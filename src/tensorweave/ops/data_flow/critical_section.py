"""`tf.CriticalSection`: subgraphs that run one at a time, over a mutex (mutex_ops).

`execute(fn)` builds fn's ops behind a MutexLock of the section's mutex (a control
dependency of every op fn creates) and ends with a ConsumeMutexLock that waits for fn's
results, so among all steps running executions of one section, fn's ops of one
execution run with no other execution's in between. Everything fn's ops read from
outside runs before the lock is taken (a control dependency of the MutexLock), so no
execution holds the mutex while it waits for something that may wait for the mutex.

The graph-construction checks are TF's: a section may not be locked again from inside
its own `execute` (ValueError, it would deadlock), and a resource that fn's ops use
directly may not be used by executions of another section unless both executions pass
`exclusive_resource_access=False` (ValueError): two sections do not exclude each
other.
"""
from __future__ import annotations

import collections
import contextlib
import threading
from typing import Any, Callable, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.framework_lib import init_scope
from tensorweave.framework.graph import (Operation, Tensor, add_to_collections,
                                         colocate_with, control_dependencies,
                                         get_collection, get_default_graph, name_scope)
from tensorweave.ops.control_flow import structure
from tensorweave.ops.data_flow import mutex_ops

# Graph collections (TF's names)
CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"


class _ExecutionSignature(collections.namedtuple(
        "_ExecutionSignature", ("op", "handle", "resources", "exclusive_resource_access"))):
    """One `execute` of a CriticalSection: its MutexLock op, the section's mutex handle,
    the resource tensors fn's ops use, and whether it asked for exclusive access."""


def _identity(x):
    """An identity of a Tensor, TensorArray (its `identity()`) or Operation (a group)."""
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    if isinstance(x, TensorArray):
        return x.identity()
    if isinstance(x, Operation):
        return structure.group(x)
    return structure.identity(x)


def _colocation(op: Operation):
    try:
        return op.get_attr("_class")
    except ValueError:
        return None


def _ops_created_after(g, first_new: int) -> List[Operation]:
    """The ops of `g` created after its id counter was `first_new`, in creation order."""
    created = []
    for op in reversed(g._ops):
        if op._id <= first_new:
            break
        created.append(op)
    created.reverse()
    return created


class _SectionStack(threading.local):
    """The signatures of the sections whose `execute` is building on this thread."""

    def __init__(self):
        self.signatures: List[tuple] = []


_STACK = _SectionStack()


@contextlib.contextmanager
def _push_critical_section_stack(signature):
    """Marks the section `signature` as building an execution on this thread.

    Raises:
      ValueError: it already is (an execute inside its own execute: a deadlock).
      RuntimeError: the stack was changed under this execution.
    """
    stack = _STACK.signatures
    if signature in stack:
        raise ValueError("Attempting to lock a CriticalSection (signature=%s) in which we "
                         "are already running. This is illegal and may cause deadlocks."
                         % (signature,))
    stack.append(signature)
    try:
        yield
    finally:
        received = stack.pop()
        if received != signature:
            raise RuntimeError("CriticalSection stack inconsistency: expected signature %s "
                               "but received %s" % (signature, received))


@tf_export("CriticalSection")
class CriticalSection:
    """Critical section: a resource in the graph that executes subgraphs in serial order.

    A read-modify-write of a variable run by several threads (or by several
    executions in one step) can interleave and lose updates:

        v = tf.get_variable("v", initializer=0.0, use_resource=True)

        def count():
            value = v.read_value()
            with tf.control_dependencies([value]):
                with tf.control_dependencies([v.assign_add(1)]):
                    return tf.identity(value)

    Run through one critical section, the executions never interleave:

        cs = tf.CriticalSection()
        f1 = cs.execute(count)
        f2 = cs.execute(count)
        output = f1 + f2  # 0 + 1: f1 and f2 read different values

    All resources used directly by an executed function, and the section itself, are
    colocated with the section's mutex. Executions of two different sections do not
    exclude each other, so using one resource from two sections raises ValueError unless
    neither execution asks for exclusive access (`exclusive_resource_access=False`, for
    read-only uses).
    """

    def __init__(self, name: Optional[str] = None, shared_name: Optional[str] = None,
                 critical_section_def=None, import_scope: Optional[str] = None):
        """Creates a critical section.

        Args:
          name: the name of the section's mutex op (default "CriticalSection").
          shared_name: the name under which sessions share the mutex (default: the
            op's name scope, so the sections of one graph never share by accident).
          critical_section_def: not supported (as TF).
          import_scope: unused (as TF).

        Raises:
          ValueError: `critical_section_def` is given.
        """
        if critical_section_def and name is not None:
            raise ValueError("Arguments critical_section_def=%s and shared_name=%s are "
                             "mutually exclusive. Please only specify one of them."
                             % (critical_section_def, shared_name))
        if critical_section_def:
            raise ValueError("Argument `critical_section_def` is not supported.")
        with name_scope(name, "CriticalSection", []) as scope:
            with init_scope():
                container = get_default_graph()._container or ""
                if shared_name is None:
                    shared_name = scope
                self._handle = mutex_ops.mutex_v2(shared_name=shared_name,
                                                  container=container, name=scope)
                # what identifies the section: (container, shared name, device)
                self._signature = (container, shared_name or id(self._handle),
                                   self._handle.op.device or _colocation(self._handle.op))
        add_to_collections(CRITICAL_SECTIONS, self)

    @property
    def name(self) -> str:
        """The name of the section's mutex op."""
        return self._handle.op.name

    def execute(self, fn: Callable[[], Any], exclusive_resource_access: bool = True,
                name: Optional[str] = None):
        """Executes `fn()` inside the critical section.

        `fn` takes no arguments (pass them with a lambda: `cs.execute(lambda: fn(x))`)
        and returns a nested structure of Tensors, TensorArrays and Operations.

        Args:
          fn: the function to execute; it builds the ops to run exclusively.
          exclusive_resource_access: whether the resources fn's ops use must not be
            used by executions of other critical sections. Default True; pass False
            in both executions to use a resource read-only from two sections.
          name: name scope of the execution (default "critical_section_execute").

        Returns:
          The structure `fn` returned, each Tensor replaced by one that is available
          once the execution has ended (the mutex is given back).

        Raises:
          ValueError: `fn` locks this section again (directly or through its
            mutex handle), which would deadlock; or a resource fn uses is used by an
            execution of another section and one of the two asked for exclusive access.
        """
        g = get_default_graph()
        with name_scope(name, "critical_section_execute", []):
            # the lock is taken after everything fn reads from outside has run
            with _push_critical_section_stack(self._signature):
                lock = mutex_ops.mutex_lock(self._handle)
                with g._lock:
                    first_new = g._id_counter
                    with control_dependencies([lock]):
                        r = fn()
                    created_ops = _ops_created_after(g, first_new)
            self._add_control_dependencies_to_lock(created_ops, lock.op)
            # the resources that fn's own ops use directly (not through older ops)
            captured = set(t for op in created_ops for t in op.inputs
                           if t.dtype == _dt.resource)
            if any(self._is_self_handle(t) for t in captured):
                raise ValueError("Attempting to lock a CriticalSection in which we are "
                                 "already running (signature=%s). This is illegal and may "
                                 "cause deadlocks." % (self._signature,))
            self._check_multiple_access_to_resources(captured, exclusive_resource_access)
            r_flat = [_identity(x) for x in nest.flatten(r)]
            with control_dependencies(r_flat):
                # the mutex is given back where it lives
                with colocate_with(self._handle):
                    ensure_lock_exists = mutex_ops.consume_mutex_lock(lock)
                # if any element of r is used, all of fn's results are computed
                r = nest.pack_sequence_as(r, structure.tuple(nest.flatten(r)))
            with control_dependencies([ensure_lock_exists]):
                outputs = nest.map_structure(_identity, r)
            add_to_collections(CRITICAL_SECTION_EXECUTIONS, _ExecutionSignature(
                op=lock.op, handle=self._handle,
                resources=sorted(captured, key=lambda t: t.op._id),
                exclusive_resource_access=exclusive_resource_access))
            return outputs

    def _add_control_dependencies_to_lock(self, created_ops: List[Operation],
                                          lock_op: Operation) -> None:
        """Makes `lock_op` wait for every op outside fn whose output or completion fn's
        ops use, so that the mutex is never held while they run."""
        created = set(created_ops)
        args = {}
        for op in created_ops:
            for t in op.inputs:
                args.setdefault(t.op._id, t.op)
            for c in op.control_inputs:
                args.setdefault(c._id, c)
        for op in list(created) + lock_op.control_inputs + [t.op for t in lock_op.inputs] + \
                [lock_op]:
            args.pop(op._id, None)
        if not args:
            return
        # a group, so that ops outside the lock's control-flow context are brought in
        waits = structure.group(*[args[k] for k in sorted(args)])
        lock_op._add_control_input(waits)

    def _is_self_handle(self, x: Tensor) -> bool:
        """Whether the tensor `x` is (a handle of) this section's mutex."""
        mine = self._handle.op
        return (x.op.type == "MutexV2"
                and bool(x.op._get_attr("shared_name"))  # empty: a unique mutex
                and x.op._get_attr("shared_name") == mine._get_attr("shared_name")
                and (x.op.device == mine.device
                     or _colocation(x.op) == _colocation(mine)))

    def _check_multiple_access_to_resources(self, captured_resources: set,
                                            exclusive_resource_access: bool) -> None:
        """Raises ValueError if a resource of `captured_resources` is used by an
        execution of another section and either execution asked for exclusive access."""
        for sg in get_collection(CRITICAL_SECTION_EXECUTIONS):
            if self._is_self_handle(sg.handle):
                continue  # other executions of this section are serialized with this one
            if not (exclusive_resource_access or sg.exclusive_resource_access):
                continue
            both = sorted(captured_resources.intersection(sg.resources),
                          key=lambda t: t.op._id)
            if both:
                raise ValueError(
                    "This execution would access resources: %s. Either this lock "
                    "(CriticalSection: %s) or lock '%s' (CriticalSection: %s) requested "
                    "exclusive resource access of this resource. Did you mean to call "
                    "execute with keyword argument exclusive_resource_access=False?"
                    % (both, self._handle, sg, sg.handle))
