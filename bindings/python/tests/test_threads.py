"""One handle shared by threads (the C API is thread-safe; ctypes drops the
GIL): the answers equal the single-threaded ones, with and without dynamic
batching, and close() waits for the calls in flight."""

import threading

import pytest

import semroute
from conftest import TOLERANCE

TEXTS = [f"Question {i}: what is {i} times {i + 1}?" if i % 2 else f"Is contract {i} binding in court?"
         for i in range(16)]


@pytest.mark.parametrize("max_batch", [0, 8])
def test_threads_agree_with_one_thread(repo, max_batch):
    with semroute.Model(repo / "models/domain", max_batch=max_batch, max_wait_us=2000) as model:
        want = [model.classify(t) for t in TEXTS]
        failures = []

        def worker(offset):
            try:
                for i in range(len(TEXTS)):
                    k = (i + offset) % len(TEXTS)
                    got = model.classify(TEXTS[k])
                    if got.label != want[k].label or abs(got.confidence - want[k].confidence) > TOLERANCE:
                        failures.append((k, got, want[k]))
            except Exception as e:  # reported below
                failures.append(e)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []


def test_close_waits_for_calls_in_flight(repo):
    model = semroute.Model(repo / "models/domain")
    started, results = threading.Event(), []

    def worker():
        started.set()
        try:
            for _ in range(20):
                results.append(model.classify("What is the pH of vinegar?").label)
        except semroute.Closed:
            results.append("closed")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait()
    model.close()  # blocks until the calls running now return; later ones raise Closed
    for t in threads:
        t.join()
    assert results and all(r in ("closed", "chemistry") or r in model.labels for r in results)
    with pytest.raises(semroute.Closed):
        model.classify("x")
