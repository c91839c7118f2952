"""ops/math/split_work.py: chunked elementwise work, shared with a helper thread."""
import threading

import numpy as np

from tensorweave.ops.math import blas, split_work


def _visits(size, monkeypatch, contended=False):
    monkeypatch.setattr(blas, "machine_contended", lambda: contended)
    counts, out = np.zeros(size, np.int64), np.zeros(size, np.float64)
    threads = set()

    def update(c, o, x):
        threads.add(threading.get_ident())
        c += 1
        np.multiply(x, 2.0, out=o)
    x = np.arange(size, dtype=np.float64).reshape(-1, 7) if size % 7 == 0 else \
        np.arange(size, dtype=np.float64)
    assert split_work.in_chunks(update, (counts, out, x))
    return counts, out, threads


def test_every_value_is_visited_once_on_two_threads_when_large(monkeypatch):
    size = split_work.MIN_SPLIT + 5 * split_work.CHUNK + 7 * 3
    counts, out, threads = _visits(size, monkeypatch)
    assert (counts == 1).all() and np.array_equal(out, np.arange(size) * 2.0)
    assert len(threads) == 2


def test_small_or_contended_work_stays_on_this_thread(monkeypatch):
    for size, contended in ((split_work.MIN_SPLIT - 1, False),
                            (split_work.MIN_SPLIT * 2, True)):
        counts, out, threads = _visits(size, monkeypatch, contended)
        assert (counts == 1).all() and threads == {threading.get_ident()}


def test_arrays_it_cannot_split_are_left_to_the_caller():
    a = np.zeros((4, 6))
    calls = []
    assert not split_work.in_chunks(lambda *p: calls.append(p), (a, a[:, ::2]))
    assert not split_work.in_chunks(lambda *p: calls.append(p), (a, np.zeros(5)))
    assert not split_work.in_chunks(lambda *p: calls.append(p), (a, [0.0] * 24))
    assert not calls


def test_an_error_on_the_helper_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(blas, "machine_contended", lambda: False)
    main = threading.get_ident()

    def update(a):
        if threading.get_ident() != main:
            raise ValueError("helper failed")
    x = np.zeros(split_work.MIN_SPLIT * 2)
    try:
        split_work.in_chunks(update, (x,))
    except ValueError as e:
        assert "helper failed" in str(e)
    else:
        raise AssertionError("the helper's error was lost")
