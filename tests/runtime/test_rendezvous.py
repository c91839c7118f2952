"""runtime/rendezvous.py: keys and the in-process rendezvous of one step."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.rendezvous import LocalRendezvous, ParsedKey, Rendezvous, \
    create_key, parse_key

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


class _Got:
    """A recv callback that records its one call."""

    def __init__(self):
        self.calls = []
        self.event = threading.Event()

    def __call__(self, value, is_dead, error):
        self.calls.append((value, is_dead, error))
        self.event.set()


def test_key_format_and_round_trip():
    key = create_key(CPU0, 0x1f, CPU1, "mul:0", 2, 7)
    assert key == CPU0 + ";1f;" + CPU1 + ";mul:0;2:7"
    assert parse_key(key) == ParsedKey(CPU0, 31, CPU1, "mul:0", 2, 7)
    assert create_key(CPU0, 0, CPU1, "x:0").endswith(";x:0;0:0")


@pytest.mark.parametrize("bad", ["", "a;b;c", CPU0 + ";zz;" + CPU1 + ";t:0;0:0",
                                 CPU0 + ";1;" + CPU1 + ";t:0;0", ";1;b;t:0;0:0"])
def test_parse_rejects_malformed_keys(bad):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid rendezvous key"):
        parse_key(bad)


def test_send_then_recv_passes_the_same_object():
    r = LocalRendezvous()
    value = np.arange(1000.0)
    r.send("k", value)
    got = _Got()
    r.recv_async("k", got)
    assert len(got.calls) == 1
    v, dead, err = got.calls[0]
    assert v is value and dead is False and err is None  # a reference, not a copy
    assert r.pending_keys() == []


def test_recv_then_send_calls_back_from_the_sending_thread():
    r = LocalRendezvous()
    got = _Got()
    r.recv_async("k", got)
    assert got.calls == [] and r.pending_keys() == ["k"]
    def sender():
        r.send("k", 5, is_dead=True)
    t = threading.Thread(target=sender)
    t.start()
    t.join(5)
    assert got.calls == [(5, True, None)]


def test_abort_wakes_pending_receivers_and_fails_later_calls():
    r = LocalRendezvous()
    waiting = [_Got() for _ in range(3)]
    for i, g in enumerate(waiting):
        r.recv_async("k%d" % i, g)
    r.send("unreceived", 1)
    err = tf.errors.CancelledError(None, None, "step cancelled")
    r.abort(err)
    assert all(g.calls == [(None, False, err)] for g in waiting)
    assert r.aborted is err and r.pending_keys() == []
    late = _Got()
    r.recv_async("k9", late)
    assert late.calls == [(None, False, err)]
    with pytest.raises(tf.errors.CancelledError, match="step cancelled"):
        r.send("k9", 1)
    r.abort(tf.errors.InternalError(None, None, "second"))  # the first error stays
    assert r.aborted is err


def test_duplicated_send_and_recv_are_errors():
    r = LocalRendezvous()
    r.send("k", 1)
    with pytest.raises(tf.errors.AbortedError, match="Duplicated send: k"):
        r.send("k", 2)
    r.recv_async("j", _Got())
    dup = _Got()
    r.recv_async("j", dup)
    assert isinstance(dup.calls[0][2], tf.errors.AbortedError)
    got = _Got()
    r.recv_async("k", got)
    assert got.calls[0][0] == 1  # the first send is kept


def test_many_threads_exchange_without_losing_values():
    r = LocalRendezvous()
    n = 400
    got = [_Got() for _ in range(n)]

    def senders(lo):
        for i in range(lo, n, 4):
            r.send("k%d" % i, i)

    def receivers(lo):
        for i in range(lo, n, 4):
            r.recv_async("k%d" % i, got[i])
    threads = [threading.Thread(target=f, args=(lo,)) for lo in range(4)
               for f in (senders, receivers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [g.calls for g in got] == [[(i, False, None)] for i in range(n)]
    assert r.pending_keys() == []


def test_the_interface_names_what_an_implementation_lacks():
    class Half(Rendezvous):
        pass
    with pytest.raises(NotImplementedError, match="Half does not implement send"):
        Half().send("k", 1)
    with pytest.raises(NotImplementedError, match="recv_async"):
        Half().recv_async("k", _Got())
    with pytest.raises(NotImplementedError, match="abort"):
        Half().abort(None)


def test_take_removes_a_sent_value_and_leaves_the_rest_alone():
    r = LocalRendezvous()
    v = np.arange(3)
    assert r.take("k") is None  # nothing sent: nothing changes
    got = []
    r.recv_async("w", lambda *a: got.append(a))
    assert r.take("w") is None  # a waiting receive stays waiting
    r.send("k", v, False)
    r.send("d", None, True)
    entry = r.take("k")
    assert entry[0] is v and entry[1] is False
    assert r.take("k") is None
    assert r.take("d") == (None, True)
    assert r.pending_keys() == ["w"]
    r.send("w", 5)
    assert got == [(5, False, None)]
    r.abort(tf.errors.CancelledError(None, None, "stop"))
    assert r.take("k") is None
