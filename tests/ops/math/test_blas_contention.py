"""ops/math/blas.py: BLAS runs on one thread while other processes take the CPU."""
import threading

import pytest

from tensorweave.ops.math import blas


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _fake_blas(monkeypatch, threads: int = 2):
    """blas with a fake OpenBLAS (starting at `threads` threads) and a contention check
    that polls nothing: returns (the thread counts set, in order; the contention, whose
    `contended` the test sets; the large-product lock)."""
    calls = []

    class FakeLib:
        def get_num_threads(self):
            return threads

        def set_num_threads(self, n):
            calls.append(n)

    switch = blas._ThreadSwitch()
    switch.looked, switch.lib = True, FakeLib()
    contention = blas._Contention(clock=_Clock(), sample=lambda: (0.0, 0.0))
    lock = threading.Lock()
    monkeypatch.setattr(blas, "_SWITCH", switch)
    monkeypatch.setattr(blas, "_CONTENTION", contention)
    monkeypatch.setattr(blas, "_LOCK", lock)
    monkeypatch.setattr(blas, "_ONE_POOL", False)  # oneDNN may have been loaded already
    return calls, contention, lock


def test_contention_is_what_other_processes_used_over_the_interval():
    clock, samples = _Clock(), []
    state = {"busy": 1000.0, "own": 50.0}
    c = blas._Contention(interval=0.5, threshold=1 / 3, clock=clock,
                         sample=lambda: (samples.append(1), (state["busy"], state["own"]))[1])
    assert c.poll() is False and len(samples) == 1  # the first reading sets the baseline
    clock.now += 0.1
    state["busy"] += 5.0
    assert c.poll() is False and len(samples) == 1  # within the interval: no reading
    clock.now += 0.5  # 0.6 s since the baseline: others used 0.3 s, 0.5 cores
    state["busy"] += 0.3 - 5.0 + 0.4
    state["own"] += 0.4
    assert c.poll() is True and len(samples) == 2
    clock.now += 0.3
    assert c.poll() is True and len(samples) == 2  # the reading stays until the next
    clock.now += 0.3  # only this process ran
    state["busy"] += 0.6
    state["own"] += 0.6
    assert c.poll() is False


def test_no_proc_stat_means_no_contention():
    c = blas._Contention(clock=_Clock(), sample=lambda: (None, 1.0))
    assert c.poll() is False and c.poll() is False


def test_large_product_switches_blas_threads_with_contention(monkeypatch):
    # 3: a limit the program set, restored when contention ends
    calls, contention, lock = _fake_blas(monkeypatch, threads=3)
    assert blas.large_product(1 << 10) is blas._NO_WAIT  # BLAS never splits it
    # OpenBLAS splits only products of more than 64^3 multiply-adds (interface/gemm.c)
    assert blas.large_product(64 ** 3) is blas._NO_WAIT
    assert blas.large_product(64 ** 3 + 1) is not blas._NO_WAIT
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        assert lock.locked() and calls == []  # a large product takes its turn
    assert not lock.locked()
    contention.contended, contention.next_poll = True, float("inf")
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        assert not lock.locked()  # one BLAS thread each: products run side by side
        with blas.large_product(blas.LARGE_PRODUCT_MACS):
            pass
    assert calls == [1]  # switched once
    contention.contended = False
    with blas.large_product(blas.SPLIT_MACS):
        # another product is in flight: the count changes only when none runs
        contention.contended = True
        with blas.large_product(blas.SPLIT_MACS):
            pass
        contention.contended = False
    assert calls == [1, 3] and blas._IN_FLIGHT == 0


def test_no_switch_while_a_product_runs(monkeypatch):
    calls, contention, _ = _fake_blas(monkeypatch)
    with blas.large_product(blas.SPLIT_MACS):
        contention.contended, contention.next_poll = True, float("inf")
        with blas.large_product(blas.SPLIT_MACS):
            assert calls == []  # the outer product is still running
    with blas.large_product(blas.SPLIT_MACS):
        assert calls == [1]


@pytest.mark.skipif(blas._machine_busy_seconds() is None, reason="no /proc/stat")
def test_proc_stat_reading_grows_with_time():
    first = blas._machine_busy_seconds()
    sum(i * i for i in range(200000))  # some CPU work
    assert blas._machine_busy_seconds() >= first > 0


def test_matmul_that_blas_splits_goes_to_one_thread_under_contention(monkeypatch):
    """A float32 product below LARGE_PRODUCT_MACS that OpenBLAS still splits (a DNN's
    gradient product) takes the contention check too: split while a core is busy
    elsewhere, it waited a time slice for its late share (1-12 ms against 25 us)."""
    import numpy as np

    import tensorweave as tf
    from tensorweave.ops import onednn
    # NumPy's product (where oneDNN's kernels outrun OpenBLAS's, they take it instead)
    if onednn.library() is not None:
        monkeypatch.setattr(onednn.library(), "one_thread_sgemm", None)
    calls, contention, _ = _fake_blas(monkeypatch)
    contention.contended, contention.next_poll = True, float("inf")
    rs = np.random.RandomState(0)
    a, b = rs.randn(64, 172).astype(np.float32), rs.randn(172, 64).astype(np.float32)
    assert blas.SPLIT_MACS <= 64 * 172 * 64 < blas.LARGE_PRODUCT_MACS
    with tf.Graph().as_default():
        small = tf.matmul(tf.constant(a[:8, :8]), tf.constant(b[:8, :8]))
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(small), a[:8, :8] @ b[:8, :8], rtol=1e-5)
            assert calls == []  # a product BLAS runs on one thread checks nothing
            got = sess.run(tf.matmul(tf.constant(a), tf.constant(b)))
    assert calls == [1]
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_onednn_leaves_blas_on_one_thread(monkeypatch):
    # once oneDNN's pool does the large products, OpenBLAS's threads stay at one even
    # without contention, and no large product waits for the shared lock
    calls, contention, lock = _fake_blas(monkeypatch, threads=2)
    blas.leave_threads_to_onednn()
    assert calls == [1]
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        assert not lock.locked()
    contention.contended = False
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        pass
    assert calls == [1] and blas._IN_FLIGHT == 0


def test_helper_work_counts_as_contention_at_once_and_for_a_while(monkeypatch):
    """An input worker's batch makes BLAS contended without a reading of /proc/stat;
    it lasts HELPER_WORK_SECONDS, and a report that the helpers wait ends it."""
    clock, samples = _Clock(), []
    c = blas._Contention(interval=0.5, clock=clock,
                         sample=lambda: (samples.append(1), (1000.0, 50.0))[1])
    monkeypatch.setattr(blas, "_CONTENTION", c)
    assert c.poll() is False and len(samples) == 1
    blas.note_helper_work()
    clock.now += 0.01
    assert c.poll() is True and len(samples) == 1   # no reading needed
    clock.now += blas.HELPER_WORK_SECONDS
    assert c.poll() is False                        # it lapsed; the reading says idle
    blas.note_helper_work()
    assert c.poll() is True
    blas.note_helper_work(busy=False)
    assert c.poll() is False


def test_helper_work_switches_blas_to_one_thread(monkeypatch):
    calls, contention, lock = _fake_blas(monkeypatch)
    contention.next_poll = float("inf")             # no reading: only the helpers' word
    blas.note_helper_work()
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        assert calls == [1] and not lock.locked()
    blas.note_helper_work(busy=False)
    with blas.large_product(blas.LARGE_PRODUCT_MACS):
        assert calls == [1, 2] and lock.locked()
