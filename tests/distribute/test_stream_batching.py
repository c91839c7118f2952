"""Messages queued on one open request stream travel as one batch message."""
import queue

import numpy as np

from tensorweave.distribute import server, wire


def _stream_with(messages):
    s = object.__new__(server._RequestStream)  # no channel: only its outgoing side
    s._requests = queue.SimpleQueue()
    for m in messages:
        s._requests.put(m)
    return s


def test_queued_messages_go_as_one_batch_and_a_lone_one_as_itself():
    msgs = [wire.pack({"key": "k%d" % i}, [wire.encode_tensor(np.float32(i))])
            for i in range(3)]
    out = _stream_with(msgs + [None])._outgoing()
    batch = next(out)
    meta, parts = wire.unpack(batch)
    assert meta == {"batch": 3}
    assert [wire.unpack(p)[0]["key"] for p in parts] == ["k0", "k1", "k2"]
    assert [float(wire.decode_tensor(wire.unpack(p)[1][0])[0]) for p in parts] == [0, 1, 2]
    assert list(out) == []  # the None after the batch ended the stream

    lone = _stream_with([msgs[0], None])._outgoing()
    assert next(lone) == msgs[0]


def test_a_batch_stops_at_batch_bytes():
    big = wire.pack({"key": "big"}, [b"x" * server.BATCH_BYTES])
    small = wire.pack({"key": "small"})
    out = _stream_with([big, small, None])._outgoing()
    assert next(out) == big  # already over the limit: sent alone
    assert next(out) == small


def test_the_handler_runs_each_message_of_a_batch_in_order():
    seen = []

    def method(worker, meta, tensors, reply):
        seen.append(meta["key"])
        if "id" in meta:
            reply(wire.pack({"id": meta["id"]}))

    handle = server._bidi_handler(None, method, "Test")
    batch = wire.pack({"batch": 2}, [wire.pack({"key": "a"}), wire.pack({"key": "b", "id": 7})])
    answers = handle(iter([batch, wire.pack({"key": "c"})]), None)
    assert [wire.unpack(a)[0] for a in answers] == [{"id": 7}]
    assert seen == ["a", "b", "c"]
