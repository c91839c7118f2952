"""tf.train.Coordinator and tf.train.LooperThread: stop requests, exception propagation,
clean stops, the join grace period. Every thread started here is joined with a timeout."""
import sys
import threading

import pytest

import tensorweave as tf

JOIN_TIMEOUT = 10.0


def _start(target, *args, name=None):
    t = threading.Thread(target=target, args=args, name=name, daemon=True)
    t.start()
    return t


def _join_all(threads):
    for t in threads:
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive(), "thread %s did not end" % t.name


def test_stop_flag_and_wait_for_stop():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    assert coord.wait_for_stop(0.01) is False
    coord.request_stop()
    assert coord.should_stop()
    assert coord.wait_for_stop(0.01) is True
    assert coord.wait_for_stop() is True


def test_wait_for_stop_wakes_up_on_request_from_another_thread():
    coord = tf.train.Coordinator()
    woke = []
    t = _start(lambda: woke.append(coord.wait_for_stop()))
    coord.request_stop()
    _join_all([t])
    assert woke == [True]


def test_join_returns_when_threads_end_without_stop():
    coord = tf.train.Coordinator()
    done = []
    threads = [_start(lambda i=i: done.append(i)) for i in range(3)]
    coord.join(threads)
    assert sorted(done) == [0, 1, 2]
    assert coord.joined
    assert not coord.should_stop()


def test_exception_in_thread_is_reraised_by_join():
    coord = tf.train.Coordinator()
    error = ValueError("boom in worker")

    def worker():
        with coord.stop_on_exception():
            raise error

    def waiter():
        while not coord.should_stop():
            coord.wait_for_stop(0.01)

    threads = [_start(worker), _start(waiter)]
    with pytest.raises(ValueError, match="boom in worker") as info:
        coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
    assert info.value is error
    # the traceback reaches back into the worker's frame
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "worker" in frames
    _join_all(threads)


def test_first_exception_wins():
    coord = tf.train.Coordinator()
    coord.request_stop(RuntimeError("first"))
    coord.request_stop(ValueError("second"))
    with pytest.raises(RuntimeError, match="first"):
        coord.join([])


def test_exception_after_a_plain_stop_is_not_recorded():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.request_stop(ValueError("late"))
    assert coord.should_stop()
    coord.join([])  # the stop was already requested without an error: no ValueError
    assert coord.joined
    assert coord.raise_requested_exception() is None  # nothing was recorded to raise
    # the same error without the earlier plain stop is recorded and raised
    recorded = tf.train.Coordinator()
    recorded.request_stop(ValueError("late"))
    with pytest.raises(ValueError, match="late"):
        recorded.join([])


def test_request_stop_accepts_exc_info_tuple():
    coord = tf.train.Coordinator()
    try:
        raise KeyError("from exc_info")
    except KeyError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(KeyError, match="from exc_info"):
        coord.raise_requested_exception()
    with pytest.raises(KeyError):
        coord.join([])


def test_out_of_range_is_a_clean_stop():
    coord = tf.train.Coordinator()

    def worker():
        with coord.stop_on_exception():
            raise tf.errors.OutOfRangeError(None, None, "queue closed")

    threads = [_start(worker)]
    coord.join(threads)  # no exception
    assert coord.should_stop()
    coord.raise_requested_exception()  # nothing stored


def test_custom_clean_stop_exception_types():
    coord = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    coord.request_stop(ValueError("fine"))
    coord.join([])
    coord2 = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    coord2.request_stop(tf.errors.OutOfRangeError(None, None, "now an error"))
    with pytest.raises(tf.errors.OutOfRangeError, match="now an error"):
        coord2.join([])


def test_join_grace_period_with_stuck_thread_raises():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stuck = _start(release.wait, name="stuck-thread")
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError,
                           match="Coordinator stopped with threads still running: "
                                 "stuck-thread"):
            coord.join([stuck], stop_grace_period_secs=0.05)
    finally:
        release.set()
        _join_all([stuck])


def test_join_ignore_live_threads():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stuck = _start(release.wait, name="stuck-2")
    coord.request_stop()
    try:
        coord.join([stuck], stop_grace_period_secs=0.01, ignore_live_threads=True)
        assert coord.joined
    finally:
        release.set()
        _join_all([stuck])


def test_join_waits_for_threads_that_stop_within_grace_period():
    coord = tf.train.Coordinator()
    ended = []

    def worker():
        coord.wait_for_stop()
        ended.append(True)

    threads = [_start(worker) for _ in range(3)]
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
    assert ended == [True] * 3


def test_registered_threads_are_joined():
    coord = tf.train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="registered", daemon=True)
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError, match="registered"):
            coord.join(stop_grace_period_secs=0.01)
    finally:
        release.set()
        _join_all([t])


def test_request_stop_after_join_raises_directly():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.join([])
    with pytest.raises(ValueError, match="after join"):
        coord.request_stop(ValueError("after join"))
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "clean"))  # still clean
    coord.request_stop()


def test_clear_stop_resets_the_coordinator():
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("x"))
    with pytest.raises(ValueError):
        coord.join([])
    coord.clear_stop()
    assert not coord.should_stop()
    assert not coord.joined
    coord.raise_requested_exception()
    coord.request_stop()
    coord.join([])


def test_stop_on_exception_swallows_and_records():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise IndexError("recorded")
    assert coord.should_stop()
    with pytest.raises(IndexError, match="recorded"):
        coord.raise_requested_exception()


def test_stop_on_exception_without_exception_does_not_stop():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        pass
    assert not coord.should_stop()


def test_looper_thread_runs_target_until_stop():
    coord = tf.train.Coordinator()
    calls = []

    def target(tag, extra=None):
        calls.append((tag, extra))
        if len(calls) == 5:
            coord.request_stop()

    looper = tf.train.LooperThread.loop(coord, None, target, args=("t",),
                                        kwargs={"extra": 1})
    assert looper.daemon
    coord.join(stop_grace_period_secs=JOIN_TIMEOUT)  # the looper registered itself
    assert calls == [("t", 1)] * 5


def test_looper_thread_with_timer_interval():
    coord = tf.train.Coordinator()
    calls = []

    def target():
        calls.append(1)
        if len(calls) == 3:
            coord.request_stop()

    tf.train.LooperThread.loop(coord, 0.001, target)
    coord.join(stop_grace_period_secs=JOIN_TIMEOUT)
    assert len(calls) == 3


def test_looper_thread_subclass_and_exception():
    coord = tf.train.Coordinator()
    events = []

    class Looper(tf.train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            raise ValueError("looper failed")

    Looper(coord, None).start()
    with pytest.raises(ValueError, match="looper failed"):
        coord.join(stop_grace_period_secs=JOIN_TIMEOUT)
    assert events == ["start", "run"]


def test_looper_thread_argument_errors():
    with pytest.raises(ValueError, match="'coord' argument must be a Coordinator"):
        tf.train.LooperThread(object(), None)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), None, args=(1,))


def test_reported_error_log_line(caplog):
    """As TF1: an exc_info tuple is logged by its message (with its traceback), an
    exception instance by its type and message."""
    caplog.set_level("INFO", logger="tensorflow")
    coord = tf.train.Coordinator()
    try:
        raise KeyError("as tuple")
    except KeyError:
        coord.request_stop(sys.exc_info())
    instance = tf.train.Coordinator()
    instance.request_stop(ValueError("as instance"))
    records = [r for r in caplog.records if r.name == "tensorflow"]
    assert [r.getMessage() for r in records] == [
        "Error reported to Coordinator: 'as tuple'",
        "Error reported to Coordinator: <class 'ValueError'>, as instance"]
    assert records[0].exc_info[0] is KeyError and records[1].exc_info is None
