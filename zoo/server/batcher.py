"""`Batcher`: requests queued on the event loop, merged into batches, run by one worker
thread.

The event loop never waits on the model: a batch runs in the worker thread (one, so that
one model call runs at a time) while the loop reads, checks and queues other requests.
A batch starts with the oldest queued request and takes the queued requests with the
same key (the same search options) after it, up to `max_batch_size` sentences, waiting
at most `max_wait_s` after the oldest request arrived for more to come, and no longer
once every client of the batch before has sent its next request (clients are told apart
by their connection: a client that sends one request at a time over a kept-alive
connection, alone, never waits). While clients of the batch before are still expected,
it waits for them up to `RETURN_WAIT_SHARE` of that batch's run time after it started
gathering: the clients answered by one batch come back spread over some milliseconds, and
without this wait a busy server's clients split into two half-size batches that take
turns. A request is never
split across batches (one larger than `max_batch_size` runs alone), and a request whose
key is None (sampling) always runs alone. A dropped request (its client left, or it timed
out) is taken out of the queue, and never run.
"""

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses

# How long a batch waits for the clients of the batch before, as a share of its run time.
RETURN_WAIT_SHARE = 0.1


class QueueFull(RuntimeError):
    """The queue holds `max_queue` requests already (also the outcome of a request still
    queued when the server stops)."""


@dataclasses.dataclass(eq=False)
class Job:
    """One queued request: `future` gets its outcome (a response, or the exception)."""

    request: dict
    key: object
    size: int
    future: asyncio.Future
    queued_at: float
    client: object = None
    dropped: bool = False


class Batcher:
    """Batches of `run(requests) -> outcomes` (one outcome per request, in order), run in
    one worker thread. `start()` and `stop()` on the event loop that serves."""

    def __init__(self, run, max_batch_size, max_wait_s, max_queue):
        self.run = run
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_s
        self.max_queue = max_queue
        # So far (for /config): batches and requests run, requests dropped before they ran.
        self.counts = {"batches": 0, "requests": 0, "dropped": 0}
        self._queue = collections.deque()
        # The clients of the last batch run that have not sent a request since (None until
        # a batch has run, or when one of its requests came with no client).
        self._returning = None
        self._last_run_s = 0.0  # how long the last batch took to run
        self._wake = None
        self._task = None
        self._executor = None

    def load(self):
        """The requests waiting now, and the batches, requests run and dropped so far."""
        return {"waiting": len(self._queue), **self.counts}

    async def start(self):
        self._wake = asyncio.Event()
        self._executor = concurrent.futures.ThreadPoolExecutor(1, "zoo-translate")
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def stop(self):
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._executor.shutdown(wait=False, cancel_futures=True)
        while self._queue:
            job = self._queue.popleft()
            if not job.future.done():
                job.future.set_result(QueueFull("the server is stopping"))

    def submit(self, request, key, size, client=None):
        """Queues `request` (`size` sentences) and returns its Job; QueueFull if full.
        `client`: what tells its sender apart (the connection's address and port), or None."""
        if len(self._queue) >= self.max_queue:
            raise QueueFull(f"{len(self._queue)} requests are waiting already")
        loop = asyncio.get_running_loop()
        job = Job(request, key, size, loop.create_future(), loop.time(), client)
        self._queue.append(job)
        if self._returning is not None:
            self._returning.discard(client)
        self._wake.set()
        return job

    def drop(self, job):
        """Takes `job` out of the queue: it will not run (a job running already runs to its
        end, its outcome unread)."""
        job.dropped = True
        with contextlib.suppress(ValueError):
            self._queue.remove(job)
            self.counts["dropped"] += 1  # (one being gathered is counted when gathered)

    async def _serve(self):
        loop = asyncio.get_running_loop()
        while True:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            gathered = await self._gather(loop)
            batch = [job for job in gathered if not job.dropped]
            self.counts["dropped"] += len(gathered) - len(batch)
            if not batch:
                continue
            requests = [job.request for job in batch]
            started = loop.time()
            try:
                outcomes = await loop.run_in_executor(self._executor, self.run, requests)
            except Exception as error:  # `run` answers each request; this is a defect
                outcomes = [error] * len(batch)
            self._last_run_s = loop.time() - started
            self.counts["batches"] += 1
            self.counts["requests"] += len(batch)
            clients = {job.client for job in batch}
            self._returning = None if None in clients else clients
            for job, outcome in zip(batch, outcomes, strict=True):
                if not job.future.done():
                    job.future.set_result(outcome)

    async def _gather(self, loop):
        """The next batch: the oldest request and the ones that may join it."""
        first = self._queue.popleft()
        batch, size = [first], first.size
        if first.key is None:
            return batch
        deadline = first.queued_at + self.max_wait_s
        if self._returning:  # clients of the batch before are expected back
            deadline = max(deadline, loop.time() + RETURN_WAIT_SHARE * self._last_run_s)
        while True:
            for job in list(self._queue):
                if job.key == first.key and size + job.size <= self.max_batch_size:
                    self._queue.remove(job)
                    batch.append(job)
                    size += job.size
            remaining = deadline - loop.time()
            if size >= self.max_batch_size or remaining <= 0 or self._returning == set():
                return batch
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), remaining)
