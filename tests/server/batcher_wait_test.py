"""How long the batcher waits for more requests: at most max_wait after the oldest, and not
at all once every client of the batch before has sent its next request."""

import asyncio
import time

from zoo.server.batcher import Batcher

WAIT_S = 2.0  # long, so that a wait shows in the timings


def _batches(script):
    """Runs `script(batcher)` on a Batcher whose model answers at once; returns the
    batches it ran (lists of requests) and the script's result."""
    ran = []

    def run(requests):
        ran.append(list(requests))
        return [{"ok": r} for r in requests]

    async def main():
        batcher = Batcher(run, max_batch_size=8, max_wait_s=WAIT_S, max_queue=16)
        await batcher.start()
        try:
            return await script(batcher)
        finally:
            await batcher.stop()

    return ran, asyncio.run(main())


async def _timed(batcher, request, client):
    start = time.perf_counter()
    await batcher.submit(request, "same", 1, client=client).future
    return time.perf_counter() - start


def test_a_lone_client_waits_only_for_its_first_request():
    async def script(batcher):
        return [await _timed(batcher, f"r{i}", ("127.0.0.1", 5000)) for i in range(3)]

    ran, waits = _batches(script)
    assert ran == [["r0"], ["r1"], ["r2"]]
    assert waits[0] >= WAIT_S * 0.9  # nobody is known yet: the full wait
    assert max(waits[1:]) < WAIT_S / 4  # its batch's only client is back: no wait


def test_a_batch_waits_for_the_clients_of_the_batch_before():
    async def script(batcher):
        a, b = ("127.0.0.1", 1), ("127.0.0.1", 2)
        first = await asyncio.gather(_timed(batcher, "a0", a), _timed(batcher, "b0", b))
        # a comes back at once, b a little later: the batch waits for b, and runs both.
        start = time.perf_counter()
        job_a = batcher.submit("a1", "same", 1, client=a)
        await asyncio.sleep(0.2)
        job_b = batcher.submit("b1", "same", 1, client=b)
        await asyncio.gather(job_a.future, job_b.future)
        together = time.perf_counter() - start
        # a client that does not come back: the wait is max_wait, as for unknown clients.
        late = await _timed(batcher, "a2", a)
        return first, together, late

    ran, (first, together, late) = _batches(script)
    assert ran[:2] == [["a0", "b0"], ["a1", "b1"]]
    assert together < WAIT_S / 2  # b's return ended the wait, well before max_wait
    assert ran[2] == ["a2"] and late >= WAIT_S * 0.9  # b still awaited: the full wait


def test_requests_without_a_client_keep_the_full_wait():
    async def script(batcher):
        return [await _timed(batcher, f"r{i}", None) for i in range(2)]

    ran, waits = _batches(script)
    assert ran == [["r0"], ["r1"]] and min(waits) >= WAIT_S * 0.9


def test_a_queued_batch_waits_a_share_of_the_last_run_for_the_clients_of_the_batch_before():
    """Two groups of clients taking turns (one runs while the other's requests queue) merge:
    the queued group waits, a share of the last batch's run time, for the other to return."""
    ran = []

    def run(requests):
        ran.append(list(requests))
        time.sleep(1.0)  # a batch takes 1 s: the wait for returning clients is up to 0.1 s
        return [{"ok": r} for r in requests]

    async def main():
        batcher = Batcher(run, max_batch_size=8, max_wait_s=0.001, max_queue=16)
        await batcher.start()
        try:
            a, b = ("127.0.0.1", 1), ("127.0.0.1", 2)
            job_a = batcher.submit("a0", "same", 1, client=a)
            await asyncio.sleep(0.3)  # a0 runs alone; b0 queues while it runs
            job_b = batcher.submit("b0", "same", 1, client=b)
            await job_a.future
            await asyncio.sleep(0.03)  # a comes back 30 ms after its answer
            job_a = batcher.submit("a1", "same", 1, client=a)
            await asyncio.gather(job_a.future, job_b.future)
        finally:
            await batcher.stop()

    asyncio.run(main())
    assert ran == [["a0"], ["b0", "a1"]]
