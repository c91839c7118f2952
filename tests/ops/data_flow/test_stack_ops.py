"""Stack ops: StackV2 / StackPushV2 / StackPopV2 / StackCloseV2."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.data_flow import stack_ops
from tensorweave.ops.data_flow.stack_ops import StackResource, stack_close_v2, stack_pop_v2, \
    stack_push_v2, stack_v2
from tensorweave.runtime.devices import Device


def _after(dep, fn):
    with tf.control_dependencies([dep]):
        return fn()


def test_static_shapes_and_types(graph):
    h = stack_v2(-1, tf.float32, stack_name="foo")
    assert h.op.type == "StackV2" and h.dtype == tf.resource
    assert h.shape.as_list() == [2]
    assert h.op.get_attr("stack_name") == b"foo"
    p = stack_push_v2(h, tf.zeros([2, 3]), swap_memory=True)
    assert p.op.type == "StackPushV2" and p.shape.as_list() == [2, 3]
    assert p.op.get_attr("swap_memory") is True
    q = stack_pop_v2(h, tf.float32)
    assert q.dtype == tf.float32 and q.shape.ndims is None
    c = stack_close_v2(h)
    assert c.type == "StackCloseV2"
    assert not hasattr(tf, "stack_v2")


def test_push_pop_lifo_order(sess):
    h = stack_v2(-1, tf.float32)
    p1 = stack_push_v2(h, [1.0, 2.0])
    p2 = _after(p1, lambda: stack_push_v2(h, [3.0, 4.0]))
    a = _after(p2, lambda: stack_pop_v2(h, tf.float32))
    b = _after(a, lambda: stack_pop_v2(h, tf.float32))
    pv, av, bv = sess.run([p2, a, b])
    np.testing.assert_array_equal(pv, [3.0, 4.0])
    np.testing.assert_array_equal(av, [3.0, 4.0])
    np.testing.assert_array_equal(bv, [1.0, 2.0])
    assert av.dtype == np.float32
    # each run creates a new stack: running again works the same
    np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])


def test_pop_empty_raises(sess):
    h = stack_v2(-1, tf.int32, stack_name="foo")
    with pytest.raises(errors.InvalidArgumentError, match=r"Stack\[foo_\d+\] is empty"):
        sess.run(stack_pop_v2(h, tf.int32))


def test_max_size(sess):
    h = stack_v2(1, tf.float32, stack_name="s")
    p1 = stack_push_v2(h, 1.0)
    p2 = _after(p1, lambda: stack_push_v2(h, 2.0))
    with pytest.raises(errors.InvalidArgumentError, match=r"overflowed its max_size \(1\)"):
        sess.run(p2)
    assert sess.run(p1) == 1.0


def test_dtype_mismatch_and_closed(sess):
    h = stack_v2(-1, tf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="Must have type float but got "
                       "int32"):
        sess.run(stack_push_v2(h, 1))
    p = stack_push_v2(h, 1.0)
    bad = _after(p, lambda: stack_pop_v2(h, tf.int32))
    with pytest.raises(errors.InvalidArgumentError, match="does not match declared output"):
        sess.run(bad)
    c = stack_close_v2(h)
    late = _after(c, lambda: stack_push_v2(h, 1.0))
    with pytest.raises(errors.InvalidArgumentError, match="has already been closed"):
        sess.run(late)


def test_byte_accounting_swap_and_prefetch():
    dev = Device("CPU", 0)
    s = StackResource("s", tf.float32, -1, dev)
    a, b, c = (np.full(10, k, np.float32) for k in range(3))
    for v in (a, b):
        s.push(None, v, swap=True)
    s.push(None, c[:5], swap=False)
    assert s.bytes_held == 100 and s.peak_bytes == 100 and s.swapped_bytes == 80
    assert dev.host_allocator.bytes_in_use == 80 and dev.allocator.bytes_in_use == 20
    s.pop(None)  # the next element (b) comes back ahead of its pop
    assert s.swapped_bytes == 40 and s.prefetches == 1 and s.sync_swap_ins == 0
    assert dev.host_allocator.bytes_in_use == 40 and dev.allocator.bytes_in_use == 40
    assert s.pop(None) is b
    assert s.prefetches == 2 and dev.allocator.bytes_in_use == 40
    assert s.pop(None) is a
    assert s.bytes_held == 0 and s.swapped_bytes == 0 and s.peak_bytes == 100
    assert dev.host_allocator.bytes_in_use == 0 and dev.allocator.bytes_in_use == 0
    assert dev.host_allocator.peak_bytes == 80


def test_first_pop_of_a_swapped_element_swaps_it_in_itself():
    dev = Device("CPU", 0)
    s = StackResource("s", tf.float32, -1, dev)
    s.push(None, np.zeros(4, np.float32), swap=True)
    assert s.swapped_bytes == 16 and dev.host_allocator.bytes_in_use == 16
    s.pop(None)
    assert s.sync_swap_ins == 1 and dev.host_allocator.bytes_in_use == 0


def test_dropped_stack_releases_its_memory():
    dev = Device("CPU", 0)
    s = StackResource("s", tf.float32, -1, dev)
    s.push(None, np.zeros(4, np.float32), swap=True)
    s.push(None, np.zeros(2, np.float32), swap=False)
    del s
    assert dev.host_allocator.bytes_in_use == 0 and dev.allocator.bytes_in_use == 0


def test_swap_push_counts_swapped_bytes(sess):
    h = stack_v2(-1, tf.float32)
    p = stack_push_v2(h, tf.zeros([4]), swap_memory=True)
    hv, _ = sess.run([h, p])
    assert isinstance(hv, StackResource)
    assert hv.swapped_bytes == 16 and hv.bytes_held == 16


def test_thread_safe_pushes():
    s = StackResource("t", tf.float32, -1)

    def work():
        for _ in range(500):
            s.push(None, np.float32(1.0), swap=False)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.size() == 2000 and s.bytes_held == 8000


def test_not_differentiable():
    from tensorweave.framework.registry import get_gradient
    for t in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"):
        assert get_gradient(t) == (True, None)
    assert set(stack_ops.__all__) >= {"stack_v2", "stack_push_v2", "stack_pop_v2",
                                      "stack_close_v2"}


def test_closed_stack_refuses_push_and_pop_before_other_checks():
    dev = Device("CPU", 0)
    s = StackResource("s", tf.float32, 1, dev)
    s.push(None, np.zeros(4, np.float32), swap=False)
    assert dev.allocator.bytes_in_use == 16
    s.close()
    assert dev.allocator.bytes_in_use == 0
    # a pop of the empty closed stack says closed, not empty (TF's kernels check it first)
    with pytest.raises(errors.InvalidArgumentError, match=r"Stack\[s\] has already been closed"):
        s.push(None, np.zeros(4, np.float32), swap=False)
    with pytest.raises(errors.InvalidArgumentError, match=r"Stack\[s\] has already been closed"):
        s.pop(None)
    assert dev.allocator.bytes_in_use == 0 and s.bytes_held == 0
