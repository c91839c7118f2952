"""Device placement: the device of every node of a pruned step graph (OSDI §3.3; white
paper §3.2 and §4.3). A pure pass: `place(step graph, devices, options)` sets each
node's `device` to a Device of the DeviceManager and changes nothing else.

The pass, in order:
  1. Colocation groups (union-find over Operations). One group holds
       * a resource-producing op (any op with a `resource` output: VarHandleOp, queues,
         TensorArrays, stacks, readers) and every op that consumes its handle, followed
         through ops that pass the handle on (Identity, Enter, Switch, ...);
       * the ops built under `tf.colocate_with(x)` or carrying `_class: ["loc:@x"]`
         (Operation._colocation) and x itself.
     Groups are followed through the whole graph, not only the pruned step, so that
     every step of a session puts a resource on the same device (TF1 places the full
     graph for the same reason).
  2. The group's request: the (possibly partial) device specs of its members merged
     field by field. Two members asking for different values of one field is an
     InvalidArgumentError naming both ops, their requests and their source lines; with
     allow_soft_placement the earlier op's device type and index win instead (members
     are taken in creation order, so a resource keeps the device it was created on).
  3. The group's candidates: the devices matching the request whose type has a kernel
     for every member (`registry.has_kernel`; Const and fed values run anywhere; an op
     with no kernel at all is left to the kernel binder, which names what is missing).
     None: InvalidArgumentError naming the op, the request and the device types that
     have its kernel; with allow_soft_placement the request's device type and index
     are dropped (and its job/replica/task too if still nothing fits) and a feasible
     device is taken.
  4. The choice among the candidates (`strategy`):
       "default"     TF1's rule: the first device of the preferred type, an
                     accelerator when it has a kernel for every member, else CPU.
       "cost_model"  white paper §3.2: a greedy earliest-finish-time simulation
                     (CostModel, _CostModelPlacer). Opt in with
                     ConfigProto(experimental={'placement': 'cost_model'}). Groups
                     holding a resource keep the default rule (a variable never
                     moves between steps); so do steps with control flow, which
                     partitions do not run split across devices yet.
  5. log_device_placement: one line per placed op, "name: (Type): device", as TF1.
"""
from __future__ import annotations

import heapq
from typing import Dict, List, Optional, Sequence, Set

import logging

from tensorweave.framework import device_spec as _dev
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import registry as _reg
from tensorweave.runtime.devices import Device, DeviceManager, format_placement
from tensorweave.runtime.optimizer import Node, StepGraph
from tensorweave.runtime.policy import CONTROL_FLOW_OPS, static_cost

DEFAULT, COST_MODEL = "default", "cost_model"
STRATEGIES = (DEFAULT, COST_MODEL)

# Ops whose "kernel" is the plan itself: a value already in hand, usable on any device.
_RUN_ANYWHERE = frozenset({"_Feed", "Const"})
_FIELDS = ("job", "replica", "task", "device_type", "device_index")
_FIELD_WORDS = {"job": "jobs", "replica": "replicas", "task": "tasks",
                "device_type": "types", "device_index": "ids"}
_RESOURCE = _dtypes.resource
logger = logging.getLogger("tensorflow")


def place(sg: StepGraph, devices: DeviceManager, allow_soft_placement: bool,
          log_device_placement: bool = False, strategy: str = DEFAULT,
          cost_model: Optional["CostModel"] = None) -> None:
    """Assigns each node of `sg` a Device of `devices` (see the module docstring).

    Args:
      sg: the pruned step graph; each node's `device` holds its requested spec string.
      devices: the session's devices.
      allow_soft_placement: relax requests no device can meet instead of failing.
      log_device_placement: print each op's device (once per call).
      strategy: "default" or "cost_model".
      cost_model: the estimates of the "cost_model" strategy (default: CostModel()).

    Raises:
      InvalidArgumentError: conflicting requests within a colocation group, or a request
        no device meets (without soft placement), or a group whose ops have no device
        type in common.
      ValueError: an unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError("Unknown placement strategy %r: expected one of %s"
                         % (strategy, ", ".join(STRATEGIES)))
    groups, group_of = colocation_groups(sg)
    kernels = _KernelTypes(devices)
    for g in groups:
        g.constrain(devices, kernels, allow_soft_placement)
        g.keep_stateful_placement(devices, kernels)
    if strategy == COST_MODEL and len(devices.devices) > 1 and \
            not any(n.type in CONTROL_FLOW_OPS for n in sg.nodes):
        _CostModelPlacer(sg, groups, group_of, cost_model or CostModel()).run()
    generators = _generators(sg, groups)
    for g in groups:
        if g.device is None and id(g) not in generators:
            g.device = _default_choice(g)
    for g in groups:
        if g.device is None:
            g.device = _generator_choice(g, generators[id(g)], group_of)
    for n in sg.nodes:
        n.device = group_of[id(n)].device
        if n.op is not None and n.type != "_Feed" and _produces_resource(n.op):
            devices.stateful_placements.setdefault(n.op._name, n.device.name)
    if log_device_placement:
        _log(sg)


class ColocationGroup:
    """Ops that must share one device.

    `nodes`: the members in the step graph; `ops`: every member Operation, including
    ops outside the step (their requests and kernels count, so that each step agrees);
    `request`: the merged DeviceSpec; `candidates`: the devices it may take (set by
    `constrain`); `device`: the choice; `holds_resource`: whether it holds state.
    """

    __slots__ = ("nodes", "ops", "request", "requested_by", "candidates", "device",
                 "holds_resource")

    def __init__(self):
        self.nodes: List[Node] = []
        self.ops: list = []
        self.request = _dev.DeviceSpec()
        self.requested_by: Dict[str, object] = {}  # field -> the op (or Node) that set it
        self.candidates: List[Device] = []
        self.device: Optional[Device] = None
        self.holds_resource = False

    def names(self, limit: int = 6) -> str:
        names = [_name(o) for o in self.ops[:limit]]
        return ", ".join(names) + (", ..." if len(self.ops) > limit else "")

    def merge_requests(self, allow_soft_placement: bool) -> None:
        """Merges the members' device specs into `request` (see the module docstring)."""
        for o in self.ops:
            requested = _requested(o)
            if not requested:
                continue
            spec = _dev.DeviceSpec.from_string(requested)
            if _uses_resource(o) and not _produces_resource(o) and any(
                    getattr(spec, f) is not None and getattr(self.request, f)
                    not in (None, getattr(spec, f)) for f in _FIELDS):
                # TF1: across a resource edge the consumer's request gives way to the
                # resource's ("Ignoring device specification ... because the input
                # edge from ... is a reference connection"), e.g. an assign or an
                # enqueue built under another device scope than its variable or queue
                logger.info("Ignoring device specification %s for node '%s' because its "
                            "input is a resource placed by %s", requested, _name(o),
                            self.request.to_string())
                continue
            for field in _FIELDS:
                value = getattr(spec, field)
                if value is None:
                    continue
                have = getattr(self.request, field)
                if have is None:
                    setattr(self.request, field, value)
                    self.requested_by[field] = o
                elif have != value:
                    other = self.requested_by[field]
                    if allow_soft_placement and field in ("device_type", "device_index"):
                        continue  # the earlier member (the resource) keeps its device
                    raise errors.InvalidArgumentError(
                        None, _op(o), _conflict_message(other, o, field, self))

    def keep_stateful_placement(self, devices: DeviceManager,
                                kernels: "_KernelTypes") -> None:
        """Fixes `device` where an earlier step of the session made a resource of the
        group: the resource lives there, so later steps may not move it.

        Raises:
          InvalidArgumentError: a member has no kernel on that device (the op was added
            after the resource was made; moving the resource would lose its state).
        """
        if not self.holds_resource:
            return
        earlier = devices.stateful_placements
        placed = next((devices.by_name.get(earlier[o._name]) for o in self.ops
                       if _produces_resource(o) and o._name in earlier), None)
        if placed is None:
            return
        if placed in self.candidates:
            self.device = placed
            return
        resource = next(o for o in self.ops if _produces_resource(o)
                        and o._name in devices.stateful_placements)
        lacking = next((o for o in self.ops if placed.device_type not in kernels.of(o)
                        and _has_any_kernel(_type(o))), None)
        why = ("Op %s (%s) has kernels for: %s" % (
            _name(lacking), _type(lacking), ", ".join(_registered_types(_type(lacking))))
            if lacking is not None else
            "the ops using it asked for [ %s ]" % ", ".join(d.name for d in self.candidates))
        raise errors.InvalidArgumentError(None, _op(lacking or self.ops[-1]), (
            "Cannot assign a device for operation %s: it uses the resource made by %s, "
            "which an earlier step placed on %s, and it cannot run there (%s). A resource "
            "keeps its device for the life of the session; build the ops that use it "
            "before the first step that runs it, or place it where they can run.%s" % (
                _name(lacking or self.ops[-1]), _name(resource), placed.name, why,
                self._context(lacking or self.ops[-1]))))

    def constrain(self, devices: DeviceManager, kernels: "_KernelTypes",
                  allow_soft_placement: bool) -> None:
        """Sets `candidates` from the merged request and the kernel registry."""
        self.merge_requests(allow_soft_placement)
        feasible = kernels.common(self.ops)
        if not feasible:
            raise errors.InvalidArgumentError(None, _op(self.ops[-1]),
                                              self._no_common_type(devices))
        matching = _matching(devices.devices, self.request) if self.requested_by \
            else devices.devices
        self.candidates = [d for d in matching if d.device_type in feasible]
        if self.candidates:
            return
        if allow_soft_placement:
            # TF's soft placement relaxes the device type and index only: a job, replica
            # or task that no device has stays an error
            relaxed = _dev.DeviceSpec(self.request.job, self.request.replica,
                                      self.request.task)
            self.candidates = [d for d in _matching(devices.devices, relaxed)
                               if d.device_type in feasible]
            if self.candidates:
                return
        who = self.requested_by.get("device_type") or self.requested_by.get(
            "device_index") or next(iter(self.requested_by.values()))
        request = self.request.to_string()
        if not matching:
            raise errors.InvalidArgumentError(None, _op(who), (
                "Cannot assign a device for operation %s: Operation was explicitly "
                "assigned to %s but available devices are [ %s ]. Make sure the device "
                "specification refers to a valid device.%s" % (
                    _name(who), request, _device_list(devices), self._context(who))))
        types = sorted({d.device_type for d in matching})
        lacking = next((o for o in self.ops if not set(types) & kernels.of(o)
                        and _has_any_kernel(_type(o))), self.ops[0])
        raise errors.InvalidArgumentError(None, _op(lacking), (
            "Cannot assign a device for operation %s: Could not satisfy explicit device "
            "specification '%s' because no supported kernel for %s devices is "
            "available. Op %s (%s) has kernels for: %s.%s" % (
                _name(lacking), request, "/".join(types), _name(lacking), _type(lacking),
                ", ".join(_registered_types(_type(lacking))) or "no device",
                self._context(who, lacking))))

    def _no_common_type(self, devices: DeviceManager) -> str:
        kernels = "; ".join("%s (%s) has kernels for: %s, defined at %s" % (
            _name(o), _type(o), ", ".join(_registered_types(_type(o))) or "no device",
            _where(o)) for o in self.ops if _type(o) not in _RUN_ANYWHERE)
        if len(self.ops) == 1:
            head = "Cannot assign a device for operation %s: no device of this session " \
                "has a kernel for it" % _name(self.ops[0])
        else:
            head = "Cannot colocate nodes %s: no device type has a kernel for all of " \
                "them" % self.names()
        return "%s (%s). Available devices: [ %s ]" % (head, kernels, _device_list(devices))

    def _context(self, who, lacking=None) -> str:
        """Where the request comes from, and the group it binds."""
        out = "\n  %s (%s) requested %s, defined at %s" % (
            _name(who), _type(who), _requested(who) or "no device", _where(who))
        if lacking is not None and lacking is not who:
            out += "\n  %s (%s) is colocated with it, defined at %s" % (
                _name(lacking), _type(lacking), _where(lacking))
        if len(self.ops) > 1:
            out += "\n  colocation group: %s" % self.names()
        return out


def _colocated_with(graph) -> Dict[str, list]:
    """{op name: the ops of `graph` that ask to be colocated with it}, cached on the
    graph until it changes."""
    stamp = (graph._version, graph._mutations)  # ops added, ops changed
    cached = getattr(graph, "_tw_colocated_with", None)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    out: Dict[str, list] = {}
    for op in graph._ops_by_name.values():
        if op._colocation or "_class" in op._attrs:
            for name in _colocation_names(op):
                out.setdefault(name, []).append(op)
    graph._tw_colocated_with = (stamp, out)
    return out


def colocation_groups(sg: StepGraph):
    """(groups, {id(node): group}) of the step graph (module docstring, step 1). Keys of
    the union-find are Operations (feed nodes: the Node itself) and "loc:@name" for a
    colocation name no op of the graph has; a key absent from `parent` is a root."""
    parent: dict = {}

    def find(k):
        root = k
        while parent.get(root, root) is not root:
            root = parent[root]
        while k is not root:
            parent[k], k = root, parent[k]
        return root

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra is not rb:
            parent[rb] = ra
            parent.setdefault(ra, ra)

    stack = [n.op for n in sg.nodes if n.type != "_Feed" and n.op is not None]
    named_by = _colocated_with(stack[0]._graph) if stack else {}
    seen: Set[int] = set()
    while stack:  # follow resource edges and colocation names through the whole graph
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        for c in named_by.get(op._name, ()):  # ops colocated with this one, both ways,
            union(op, c)                       # so every step sees the same group
            stack.append(c)
        if op._colocation or "_class" in op._attrs:
            for name in _colocation_names(op):
                target = op._graph._ops_by_name.get(name)
                union(op, target if target is not None else "loc:@" + name)
                if target is not None:
                    stack.append(target)
        for t in op._outputs:
            if t._dtype is _RESOURCE:
                for c in t._consumers:
                    union(op, c)
                    stack.append(c)
        for t in op._inputs:
            if t._dtype is _RESOURCE:
                union(t._op, op)
                stack.append(t._op)
    groups: List[ColocationGroup] = []
    group_at: Dict[int, ColocationGroup] = {}
    group_of: Dict[int, ColocationGroup] = {}
    for n in sg.nodes:
        key = n if n.type == "_Feed" or n.op is None else n.op
        root = find(key)
        g = group_at.get(id(root))
        if g is None:
            g = group_at[id(root)] = ColocationGroup()
            groups.append(g)
            if root not in parent:
                g.ops.append(key)  # a group of one
        g.nodes.append(n)
        group_of[id(n)] = g
    for k in parent:  # members of larger groups, in or out of the step
        if not isinstance(k, str):
            g = group_at.get(id(find(k)))
            if g is not None:
                g.ops.append(k)
    for g in groups:
        if len(g.ops) > 1:
            g.ops.sort(key=_order)
        g.holds_resource = any(_produces_resource(o) for o in g.ops)
    return groups, group_of


class CostModel:
    """The estimates of the cost-model placer (white paper §3.2): compute seconds of a
    node and transfer seconds of an edge, from static shapes.

    compute = op_overhead_s + FLOPs / flops_per_second for the ops policy.static_cost
    counts (matmuls, convolutions), else op_overhead_s + output elements /
    elements_per_second (elementwise work, bound by memory, not by FLOPs);
    transfer between two host devices (CPU to CPU in one process: references pass) =
    host_transfer_latency_s; an edge with an accelerator end (its values cross by
    copies) = device_transfer_latency_s + bytes / device_bytes_per_second per
    accelerator end. Bytes come from the static shape and dtype (unknown dimensions
    count `unknown_dim` elements).
    An op is cheap when its compute costs less than the cheapest transfer's latency:
    the placer never moves a cheap op away from its inputs' device.

    The defaults are fitted on the 2-core development machine (OpenBLAS, NumPy 2.x) by
    `python benchmarks/calibrate_cost_model.py OUT_JSON`, through Session.run (best of
    repetitions, warm): the per-op slope of a chain of small adds; the one-BLAS-thread
    float32 matmul rate (the simulated devices run side by side, one core each; the
    library's default threads measured 0.9e11 to 2.2e11 FLOP/s); the rate of an add of
    4M float32 elements; the Send/Recv cost between CPU:0 and CPU:1 (the same for 4 B
    and 4 MB); the copy to the simulated accelerator SIM:0 (4 B and 4 MB).
    """

    def __init__(self, flops_per_second: float = 1.27e11, op_overhead_s: float = 4.1e-7,
                 elements_per_second: float = 5.3e9,
                 host_transfer_latency_s: float = 3.2e-6,
                 device_transfer_latency_s: float = 8.2e-6,
                 device_bytes_per_second: float = 2.4e10, unknown_dim: int = 32):
        self.flops_per_second = flops_per_second
        self.op_overhead_s = op_overhead_s
        self.elements_per_second = elements_per_second
        self.host_transfer_latency_s = host_transfer_latency_s
        self.device_transfer_latency_s = device_transfer_latency_s
        self.device_bytes_per_second = device_bytes_per_second
        self.unknown_dim = unknown_dim

    @property
    def cheap_below_s(self) -> float:
        """The compute time under which an op is cheap: the cheapest transfer."""
        return min(self.host_transfer_latency_s, self.device_transfer_latency_s)

    def compute_seconds(self, n: Node) -> float:
        if n.type in _RUN_ANYWHERE or n.op is None:
            return 0.0
        flops = static_cost(n)
        if flops:
            return self.op_overhead_s + flops / self.flops_per_second
        elements = sum(self._elements(t) for t in n.op._outputs[:n.n_out])
        return self.op_overhead_s + elements / self.elements_per_second

    def edge_bytes(self, producer: Node, index: int) -> int:
        t = _tensor_of(producer, index)
        return self._elements(t) * max(1, t._dtype.size) if t is not None else 0

    def transfer_seconds(self, nbytes: int, src_type: str = "CPU",
                         dst_type: str = "CPU") -> float:
        """Seconds to move `nbytes` from a device of type `src_type` to `dst_type`."""
        copies = (src_type != "CPU") + (dst_type != "CPU")
        if not copies:
            return self.host_transfer_latency_s
        return copies * (self.device_transfer_latency_s +
                         nbytes / self.device_bytes_per_second)

    def _elements(self, t) -> int:
        dims = t.shape.as_list() if t.shape.rank is not None else None
        if dims is None:
            return self.unknown_dim
        count = 1
        for d in dims:
            count *= self.unknown_dim if d is None else d
        return count


class _CostModelPlacer:
    """Greedy earliest-finish-time list scheduling over the candidates of each group.

    Nodes are simulated when all their inputs have finished, earliest-ready first. A
    node whose group is undecided takes the candidate where it would finish first
    (device free time, inputs' arrival with a transfer for each input on another
    device, its compute), which decides its whole group. Cheap
    nodes with no placed input float: they cost nothing and join the device of their
    first placed consumer (a generator follows its consumer, as TF's placer does);
    a cheap node stays on its inputs' device. Groups holding a resource are placed by
    the default rule beforehand, so a resource keeps its device across steps.
    """

    def __init__(self, sg: StepGraph, groups: List[ColocationGroup], group_of: dict,
                 model: CostModel):
        self.sg, self.group_of, self.model = sg, group_of, model
        self.free: Dict[str, float] = {}     # device name -> when it is next idle
        self.finish: Dict[int, float] = {}   # id(node) -> simulated finish time
        self.floating: Set[int] = set()      # ids of cheap nodes waiting for a consumer
        for g in groups:
            if g.device is None and (g.holds_resource or len(g.candidates) == 1):
                g.device = _default_choice(g)

    def run(self) -> None:
        nodes = self.sg.nodes
        index = {id(n): k for k, n in enumerate(nodes)}
        preds: List[list] = []
        for n in nodes:
            ps = [p for p, _ in n.inputs] + list(n.control_inputs)
            preds.append([index[id(p)] for p in ps])
        pending = [len(set(p)) for p in preds]
        succ: List[list] = [[] for _ in nodes]
        for k, ps in enumerate(preds):
            for p in set(ps):
                succ[p].append(k)
        ready = [(0.0, k) for k in range(len(nodes)) if pending[k] == 0]
        heapq.heapify(ready)
        while ready:
            _, k = heapq.heappop(ready)
            n = nodes[k]
            self._simulate(n)
            for s in succ[k]:
                pending[s] -= 1
                if pending[s] == 0:
                    at = max([self.finish[id(nodes[p])] for p in preds[s]] or [0.0])
                    heapq.heappush(ready, (at, s))

    def _simulate(self, n: Node) -> None:
        g = self.group_of[id(n)]
        cost = self.model.compute_seconds(n)
        cheap = cost < self.model.cheap_below_s
        placed = [(p, i) for p, i in n.inputs if self._device_of(p) is not None]
        if g.device is None and cheap and not placed:
            self.floating.add(id(n))
            self.finish[id(n)] = 0.0
            return
        if g.device is None:
            options = g.candidates
            if cheap:  # stay with the inputs: never add a transfer for a cheap op
                near = {self._device_of(p).name for p, _ in placed}
                options = [d for d in options if d.name in near] or options
            g.device = min(options, key=lambda d: self._finish_on(n, d, cost))
        d = g.device
        end = self._finish_on(n, d, cost)[0]
        self.free[d.name] = end
        self.finish[id(n)] = end
        self._pin_inputs(n, d)

    def _finish_on(self, n: Node, d: Device, cost: float):
        """(finish time, bytes moved) of `n` on `d`: the sort key of the choice."""
        start = self.free.get(d.name, 0.0)
        moved = 0
        for p, i in n.inputs:
            at = self.finish[id(p)]
            where = self._device_of(p)
            joins = where is None and d in self.group_of[id(p)].candidates
            if where is not d and not joins:
                nbytes = self.model.edge_bytes(p, i)
                moved += nbytes
                src = where or self.group_of[id(p)].candidates[0]
                at += self.model.transfer_seconds(nbytes, src.device_type, d.device_type)
            start = max(start, at)
        for c in n.control_inputs:
            start = max(start, self.finish.get(id(c), 0.0))
        return start + cost, moved

    def _device_of(self, p: Node) -> Optional[Device]:
        if id(p) not in self.finish:
            return None
        return self.group_of[id(p)].device

    def _pin_inputs(self, n: Node, d: Device) -> None:
        """Floating producers of `n` (and theirs) join `d` where their group may."""
        stack = [p for p, _ in n.inputs]
        while stack:
            p = stack.pop()
            g = self.group_of[id(p)]
            if id(p) not in self.floating or g.device is not None:
                continue
            if d in g.candidates:
                g.device = d
                stack.extend(q for q, _ in p.inputs)


class _KernelTypes:
    """The device types with a kernel for each op type (cached for one placement)."""

    def __init__(self, devices: DeviceManager):
        self.present = tuple(dict.fromkeys(d.device_type for d in devices.devices))
        self._cache: Dict[str, frozenset] = {}

    def of(self, o) -> frozenset:
        """Device types (of this session) with a kernel for `o`; every type for ops that
        run anywhere; empty for an op with no kernel at all."""
        op_type = _type(o)
        r = self._cache.get(op_type)
        if r is None:
            if op_type in _RUN_ANYWHERE:
                r = frozenset(self.present)
            else:
                r = frozenset(t for t in self.present if _reg.has_kernel(op_type, t))
            self._cache[op_type] = r
        return r

    def common(self, ops: Sequence) -> frozenset:
        """The device types with a kernel for all of `ops`; an op with no kernel on any
        device does not constrain (the kernel binder reports it)."""
        out = frozenset(self.present)
        for o in ops:
            types = self.of(o)
            if types or _has_any_kernel(_type(o)):
                out &= types
        return out


def _registered_types(op_type: str) -> List[str]:
    """Every device type with a kernel for `op_type`, this session's or not."""
    return _reg.kernel_device_types(op_type)


def _has_any_kernel(op_type: str) -> bool:
    return op_type in _RUN_ANYWHERE or bool(_registered_types(op_type))


def _generators(sg: StepGraph, groups: Sequence[ColocationGroup]) -> Dict[int, list]:
    """{id(group): the consumers of its node} for the groups TF's placer calls
    generators: one unconstrained node with no inputs and one output (a constant, a
    feed), which follows its consumers (TF1 placer's "heuristic A")."""
    out: Dict[int, list] = {}
    for g in groups:
        if g.device is None and len(g.nodes) == 1 and len(g.ops) <= 1 and \
                not g.requested_by:
            n = g.nodes[0]
            if not n.inputs and not n.control_inputs and n.n_out == 1:
                out[id(g)] = []
    if out:
        by_node = {id(g.nodes[0]): g for g in groups if id(g) in out}
        for n in sg.nodes:
            for p in [p for p, _ in n.inputs] + list(n.control_inputs):
                g = by_node.get(id(p))
                if g is not None:
                    out[id(g)].append(n)
    return out


def _generator_choice(g: ColocationGroup, consumers: list, group_of) -> Device:
    """The device of a generator's consumers when they all share one it may take;
    otherwise the default choice."""
    devices = {id(group_of[id(c)].device): group_of[id(c)].device for c in consumers}
    if len(devices) == 1:
        (d,) = devices.values()
        if d in g.candidates:
            return d
    return _default_choice(g)


def _default_choice(g: ColocationGroup) -> Device:
    """TF1's rule: the first candidate of the most preferred type (an accelerator
    before the CPU; every candidate type has a kernel for every member)."""
    types = list(dict.fromkeys(d.device_type for d in g.candidates))
    if len(types) == 1:
        return g.candidates[0]
    best = _preferred_types(types, g.ops)[0]
    return next(d for d in g.candidates if d.device_type == best)


def _preferred_types(types: List[str], ops: Sequence) -> List[str]:
    """`types` in the registry's order of preference (a group of Consts and feeds only,
    which the registry has no kernels for: accelerators before the CPU)."""
    op_type = next((_type(o) for o in ops if _type(o) not in _RUN_ANYWHERE), None)
    if op_type is not None:
        order = _reg.preferred_device_types(op_type, types)
        if set(order) == set(types):
            return order
    return [t for t in types if t != "CPU"] + [t for t in types if t == "CPU"]


def _matching(devices: Sequence[Device], want) -> List[Device]:
    return [d for d in devices if all(
        getattr(want, f) is None or getattr(want, f) == getattr(d.spec, f) for f in _FIELDS)]


def placement_options(config) -> tuple:
    """(log_device_placement, strategy) of a session's ConfigProto (None: defaults)."""
    if config is None:
        return False, DEFAULT
    experimental = getattr(config, "experimental", None)
    strategy = getattr(experimental, "placement", "") if experimental is not None else ""
    return bool(config.log_device_placement), strategy or DEFAULT


def _log(sg: StepGraph) -> None:
    """TF1's log_device_placement lines, on stdout (TF1 printf()s them)."""
    lines = [format_placement(n.name, n.type, n.device.name) for n in sg.nodes
             if n.type != "_Feed"]
    if lines:
        print("\n".join(lines), flush=True)


# --- members: Operations, or Nodes for feeds ------------------------------------------

def _op(o):
    return o.op if isinstance(o, Node) else o


def _name(o) -> str:
    return o.name


def _type(o) -> str:
    return o.type


def _requested(o) -> str:
    return o.device if isinstance(o, Node) else o._device


def _where(o) -> str:
    op = _op(o)
    return errors.op_location(op) if op is not None else "<unknown>"


def _order(o) -> int:
    op = _op(o)
    return op._id if op is not None else -1


def _uses_resource(o) -> bool:
    return not isinstance(o, Node) and any(t._dtype is _RESOURCE for t in o._inputs)


def _produces_resource(o) -> bool:
    return not isinstance(o, Node) and any(t._dtype is _RESOURCE for t in o._outputs)


def _colocation_names(op) -> List[str]:
    names = list(op._colocation)
    for c in op._attrs.get("_class", ()) or ():
        c = c.decode() if isinstance(c, bytes) else str(c)
        if c.startswith("loc:@"):
            names.append(c[len("loc:@"):])
    return [n for n in names if n != op._name]


def _tensor_of(n: Node, index: int):
    if n.op is None:
        return None
    if n.type == "_Feed":
        index = int(n.name.rsplit(":", 1)[1])
    return n.op._outputs[index]


def _device_list(devices: DeviceManager) -> str:
    return ", ".join(d.name for d in devices.devices)


def _conflict_message(first, second, field: str, group: ColocationGroup) -> str:
    a, b = _requested(first), _requested(second)
    return ("Cannot colocate nodes %s and %s: Cannot merge devices with incompatible %s: "
            "'%s' and '%s'\n  %s (%s) requested %s, defined at %s\n  %s (%s) requested %s,"
            " defined at %s\n  colocation group: %s (a resource and every op using its "
            "handle, tf.colocate_with and the _class attr put ops on one device)" % (
                _name(first), _name(second), _FIELD_WORDS[field], _dev.canonical(a),
                _dev.canonical(b), _name(first), _type(first), a, _where(first),
                _name(second), _type(second), b, _where(second), group.names()))
