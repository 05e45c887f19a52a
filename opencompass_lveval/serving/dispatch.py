"""One queue over the replicas of a stage: the policy's decisions (``schedule.py``) carried out
over HTTP, every reply checked and written to the store once.

The I/O is one event loop: each request in flight is a task on it, sent over a replica's pool of
kept-alive connections (``http.py``), bounded in time by ``request_deadline_s`` (the whole reply;
``asyncio.wait_for``, no thread per request) and in size by ``max_reply_bytes``. What blocks runs
elsewhere: store writes and large prompts' bodies on a small pool of threads; starting,
watching and restarting replicas on the supervisor's threads (``supervisor.py``), which tell
this loop when one is ready, lost or given up. Dispatch begins once ``quorum`` replicas are
ready; the others join as they come, with their own room (``cap_tokens``, else each one's KV
capacity).

Faults:
- A request that fails (no whole reply in time, a dropped connection, an HTTP 5xx, 408, 409 or
  429) goes back to the queue, and its replica gets nothing until ``GET /health`` answers
  (``probe_timeout_s``); one that does not is out of the rotation, probed again every
  ``reprobe_s`` while it runs. When every replica is out for ``request_deadline_s`` the stage
  stops, naming them with the end of each one's log.
- A reply that is not its request's answer (``request.check_reply``: not one choice, another
  model, other prompt tokens, more than ``max_tokens``, past ``max_reply_bytes``, not JSON) is
  not stored; the request is asked again and the replica named; after ``MAX_FAULTS`` such
  replies the replica is out of rotation for good.
- A request refused outright (HTTP 4xx other than 408/409/429) stops the stage at once: another
  replica would refuse it too; one that fails ``MAX_ATTEMPTS`` times (a 5xx it alone causes)
  stops it naming the request, rather than a run that never ends.
- A store that cannot be written (``ReplyStoreError``) stops the stage at once.
- Once every replica is given up by the supervisor (its restarts spent), the stage stops at
  once, naming each cause.

Requests whose reply is in the store are not sent, so a restarted dispatch asks only what was in
flight when the last one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from .http import ConnectionPool, ProtocolError, ReplyTooLarge, Response, health, shown
from .placement import Replica, ReplicaError
from .request import PlannedRequest, ReplyFault, check_reply
from .schedule import MAX_ATTEMPTS, MAX_FAULTS, Schedule
from .store import ReplyStore, ReplyStoreError
from .supervisor import Listener

_LOG = logging.getLogger(__name__)
RETRIED_STATUS = frozenset({408, 409, 429})
DEFAULT_MAX_REPLY_BYTES = 16 * 2**20
INLINE_IDS = 8192  # a body of more ids is built on a thread, off the loop
IO_THREADS = 4


class RefusedRequestError(ReplicaError):
    """A request a replica refused outright (a 4xx): no other replica would take it."""


@dataclass
class DispatchSettings:
    """How a dispatch runs (see the module); ``cap_tokens`` None: each replica's KV capacity."""

    request_deadline_s: float
    cap_tokens: Optional[int] = None
    quorum: int = 1
    senders: int = 64
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    probe_timeout_s: float = 10.0
    reprobe_s: float = 5.0
    progress: Callable[[int, int], None] = lambda done, total: _LOG.info(
        f'serving: {done} of {total} requests answered'
    )


@dataclass
class DispatchReport:
    """What a dispatch did: requests sent per replica (answered or not), replies written, keys
    found answered before it started, requests put back in the queue, wrong replies per replica,
    replicas not in the rotation at the end, seconds in all and deciding; each replica's room in
    tokens when it last joined (``cap_tokens``, else its engine's KV capacity)."""

    sent: dict[str, int] = field(default_factory=dict)
    caps: dict[str, int] = field(default_factory=dict)
    answered: int = 0
    skipped: int = 0
    requeued: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    seconds: float = 0.0
    scheduling_s: float = 0.0


class Transport(Protocol):
    """How the dispatcher talks to one replica: ``payload`` is ``request``'s body as sent."""

    async def complete(self, request: PlannedRequest, payload: bytes) -> Response: ...

    async def healthy(self, timeout_s: float) -> bool: ...

    def close(self) -> None: ...


class HttpTransport:
    """``/v1/completions`` and ``/health`` of a replica's server."""

    def __init__(self, replica: Replica, settings: DispatchSettings) -> None:
        self.pool = ConnectionPool(replica.url, settings.max_reply_bytes)

    async def complete(self, request: PlannedRequest, payload: bytes) -> Response:
        return await self.pool.post('/completions', payload)

    async def healthy(self, timeout_s: float) -> bool:
        return await health(self.pool, timeout_s)

    def close(self) -> None:
        self.pool.close()


class ReplicaSource(Protocol):
    """Where replicas come from: a ``Supervisor``, or ``Fixed`` ones."""

    def start(self, listener: Listener) -> None: ...

    def hopeless(self) -> bool: ...

    def coming(self) -> int: ...

    def pending(self) -> int: ...

    def describe_causes(self) -> str: ...


class Fixed:
    """Replicas started elsewhere, all ready now, never restarted here."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = list(replicas)

    def start(self, listener: Listener) -> None:
        for replica in self.replicas:
            listener.ready(replica)

    def hopeless(self) -> bool:
        return False

    def coming(self) -> int:
        return len(self.replicas)

    def pending(self) -> int:
        return 0

    def describe_causes(self) -> str:
        return ''


@dataclass
class _Slot:
    replica: Replica
    transport: Any
    cap: int
    out_since: float = 0.0
    next_probe: float = 0.0


class Dispatcher:
    """The state of one dispatch (see the module); ``run`` is the whole of it."""

    def __init__(
        self,
        requests: list[PlannedRequest],
        store: ReplyStore,
        source: ReplicaSource,
        settings: DispatchSettings,
        transport: Callable[[Replica, DispatchSettings], Any] = HttpTransport,
        capacity: Optional[Callable[[Replica], Optional[int]]] = None,
    ) -> None:
        self.store, self.source, self.settings = store, source, settings
        self.make_transport, self.capacity = transport, capacity
        unique = {request.key: request for request in requests}
        waiting = [r for r in unique.values() if not store.answered(r.expected())]
        self.report = DispatchReport(skipped=len(unique) - len(waiting))
        self.total = len(waiting)
        self.schedule = Schedule(waiting)
        self.slots: dict[int, _Slot] = {}
        self.latest: dict[str, int] = {}  # each replica's newest slot
        self.failure: Optional[BaseException] = None
        self.tasks: set[asyncio.Task] = set()  # sends and probes
        self.sending: set[asyncio.Task] = set()
        self.next_progress = 0

    # The loop -----------------------------------------------------------------------------------

    def run(self) -> DispatchReport:
        started = time.monotonic()
        if self.total:
            if self.settings.cap_tokens is not None:
                self._refuse_what_fits_nowhere(self.settings.cap_tokens)
            asyncio.run(self._main())
        self.report.seconds = round(time.monotonic() - started, 3)
        return self.report

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.io = ThreadPoolExecutor(IO_THREADS, thread_name_prefix='dispatch-io')
        try:
            await self.loop.run_in_executor(self.io, self.source.start, self._listener())
            await self._dispatch()
        finally:
            for task in list(self.tasks):
                task.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            self.io.shutdown(wait=True)
            for slot in self.slots.values():
                slot.transport.close()
        if self.failure is not None:
            raise self.failure
        self.settings.progress(self.report.answered, self.total)
        self.report.dropped = sorted(
            name
            for name, slot in self.latest.items()
            if self.schedule.replicas[slot].state != 'ready'
        )

    async def _dispatch(self) -> None:
        started = False
        while self.failure is None:
            if not started:
                started = self._quorum_reached()
            if started:
                self._assign()
                if self.schedule.done() and not self.sending:
                    return
            self._check_progress_possible()
            self._probe_the_out()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), 0.2)
            self.wake.clear()

    def _decide(self, call, *args):
        """A policy call, its time counted as deciding."""
        begun = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.report.scheduling_s += time.perf_counter() - begun

    def _assign(self) -> None:
        for request, slot in self._decide(self.schedule.assign):
            name = self.slots[slot].replica.name
            self.report.sent[name] = self.report.sent.get(name, 0) + 1
            task = self.loop.create_task(self._send(request, slot))
            self.tasks.add(task)
            self.sending.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        self.sending.discard(task)
        self.wake.set()

    # Replicas joining and leaving ---------------------------------------------------------------

    def _listener(self) -> Listener:
        def post(call, *args) -> None:  # from a supervisor thread; nothing once the loop ended
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(call, *args)

        def ready(replica: Replica) -> None:  # on a supervisor thread: may block
            cap = self.settings.cap_tokens
            if cap is None and self.capacity is not None:
                cap = self.capacity(replica)
            post(self._join, replica, cap)

        return Listener(
            ready=ready,
            lost=lambda name, cause: post(self._gone, name, cause),
            gave_up=lambda name, cause: post(self.wake.set),
        )

    def _join(self, replica: Replica, cap: Optional[int]) -> None:
        if cap is None:
            from ..files.errors import ModelConfigError

            self._fail(
                ModelConfigError(
                    f'ServeOnceRunner: the KV capacity of {replica.name} is neither on its '
                    '/metrics nor in its log: set cap_tokens (tokens in flight per replica)'
                )
            )
            return
        previous = self.latest.get(replica.name)
        if previous is not None:
            self.schedule.set_state(previous, 'gone')
        slot = self.schedule.add_replica(replica.name, cap, self.settings.senders)
        self.slots[slot] = _Slot(replica, self.make_transport(replica, self.settings), cap)
        self.latest[replica.name] = slot
        self.report.sent.setdefault(replica.name, 0)
        self.report.caps[replica.name] = cap
        _LOG.info(f'replica {replica.name} joins, {cap} tokens in flight at most')
        self.wake.set()

    def _gone(self, name: str, cause: str) -> None:
        slot = self.latest.get(name)
        if slot is not None:
            self.schedule.set_state(slot, 'gone')
        _LOG.warning(f'replica {name} {cause.splitlines()[0]}: its requests go to the others')
        self.wake.set()

    def _quorum_reached(self) -> bool:
        """Whether ``quorum`` replicas are ready; a stop naming the causes once fewer than that
        can still come."""
        ready = [r for r in self.schedule.replicas.values() if r.state == 'ready']
        quorum = self.settings.quorum
        if len(ready) >= quorum:
            if self.settings.cap_tokens is None:
                self._refuse_what_fits_nowhere(max(r.cap for r in ready))
            return True
        if self.source.coming() < quorum:
            self._fail(
                self._none_left(
                    f'only {self.source.coming()} replicas can still come up, fewer than '
                    f'quorum={quorum}'
                )
            )
        return False

    def _refuse_what_fits_nowhere(self, cap: int) -> None:
        largest = self.schedule.largest_waiting()
        if largest is not None and largest.tokens > cap:
            self._fail(
                ReplicaError(
                    f'requests hold more than cap_tokens={cap} tokens in flight (the largest, '
                    f'{largest.label}: {largest.tokens} prompt and answer tokens): raise '
                    'cap_tokens to at least that, within what the engine KV cache holds'
                )
            )
            if self.settings.cap_tokens is not None:
                raise self.failure

    def _check_progress_possible(self) -> None:
        """Stop once no reply can come: every replica given up, or every one that runs out of
        the rotation for a request's deadline (or answering wrongly) with none coming."""
        if self.source.hopeless():
            self._fail(self._none_left('every replica was given up'))
            return
        states = [r for r in self.schedule.replicas.values() if r.state != 'gone']
        if any(r.state in ('ready', 'probing') for r in states) or self.source.pending():
            return
        outs = [self.slots[r.slot] for r in states if r.state == 'out']
        if states and not outs:
            self._fail(self._none_left('every replica that runs answers wrongly'))
            return
        if (
            outs
            and time.monotonic() - min(s.out_since for s in outs)
            >= self.settings.request_deadline_s
        ):
            self._fail(
                self._none_left(
                    f'every replica failed its health probe for '
                    f'{self.settings.request_deadline_s:g} s (request_deadline_s)'
                )
            )

    def _none_left(self, what: str) -> ReplicaError:
        lines = []
        for name, slot in sorted(self.latest.items()):
            replica, state = self.slots[slot].replica, self.schedule.replicas[slot]
            running = 'running' if state.state != 'gone' and replica.alive() else 'exited'
            problems = (
                f'; wrong replies: {"; ".join(state.problems[-2:])}' if state.problems else ''
            )
            lines.append(
                f'- {name} on {replica.node} ({running}), {state.state}{problems}; the end of '
                f'its log:\n{replica.log_tail()[-1000:]}'
            )
        causes = self.source.describe_causes()
        return ReplicaError(
            f'{what}: {self.schedule.waiting + self.schedule.in_flight} requests unanswered; '
            'what was answered is kept and a rerun asks only the rest:\n'
            + '\n'.join(lines)
            + (f'\nwhy each replica ended:\n{causes}' if causes else '')
        )

    # Requests -----------------------------------------------------------------------------------

    async def _send(self, request: PlannedRequest, slot: int) -> None:
        try:
            await self._exchange(request, slot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (never a request lost silently: the stage stops)
            self._fail(exc)

    async def _exchange(self, request: PlannedRequest, slot: int) -> None:
        transport = self.slots[slot].transport
        if request.prompt_tokens <= INLINE_IDS:
            payload = request.body()
        else:
            payload = await self.loop.run_in_executor(self.io, request.body)
        started = time.perf_counter()
        deadline = self.settings.request_deadline_s
        try:
            response = await self._within(deadline, transport.complete(request, payload))
        except asyncio.TimeoutError:
            self._retry(request, slot, f'no whole reply within request_deadline_s={deadline:g}')
            return
        except ReplyTooLarge as exc:
            self._retry(request, slot, str(exc), fault=True)
            return
        except (OSError, ProtocolError, ValueError, asyncio.IncompleteReadError) as exc:
            self._retry(request, slot, f'{type(exc).__name__}: {exc}')
            return
        status = response.status
        if 400 <= status < 500 and status not in RETRIED_STATUS:
            self._decide(self.schedule.failed, request, slot)
            self._fail(
                RefusedRequestError(
                    f'{self.slots[slot].replica.name} refused {request.label}: HTTP {status} '
                    f'{shown(response.body)}'
                )
            )
            return
        if not 200 <= status < 300:
            self._retry(request, slot, f'HTTP {status} {shown(response.body, 200)}')
            return
        try:
            record = check_reply(json.loads(response.body), request)
        except (ValueError, ReplyFault) as exc:
            self._retry(request, slot, str(exc), fault=True)
            return
        record['latency_s'] = round(time.perf_counter() - started, 4)
        record['replica'] = self.slots[slot].replica.name
        self._decide(self.schedule.answered_by, request, slot)
        self.wake.set()
        try:
            await self.loop.run_in_executor(self.io, self.store.put_once, record)
        except ReplyStoreError as exc:
            self._fail(exc)
            return
        self.report.answered += 1
        if self.report.answered >= self.next_progress:
            self.settings.progress(self.report.answered, self.total)
            self.next_progress += max(1, self.total // 20)

    async def _within(self, seconds: float, exchange):
        """``exchange`` awaited until ``seconds`` have passed, then cancelled (its connection
        closed) and a ``TimeoutError``: one timer on the loop, no task or thread of its own."""
        task, expired = asyncio.current_task(), []

        def expire() -> None:
            expired.append(True)
            task.cancel()

        timer = self.loop.call_later(seconds, expire)
        try:
            return await exchange
        except asyncio.CancelledError:
            if not expired:
                raise
            if hasattr(task, 'uncancel'):
                task.uncancel()
            raise asyncio.TimeoutError from None
        finally:
            timer.cancel()

    def _retry(self, request: PlannedRequest, slot: int, problem: str, fault: bool = False) -> None:
        """The request back in the queue; its replica probed, or named for a wrong reply."""
        again = self._decide(self.schedule.failed, request, slot, fault)
        state = self.schedule.replicas[slot]
        name = state.name
        if fault:
            self.report.faults[name] = self.report.faults.get(name, 0) + 1
            state.problems.append(problem)
            _LOG.warning(
                f'{name} answered {request.label} with a reply that is not its answer ({problem}):'
                ' not stored, asked again'
            )
            if state.state == 'faulty':
                _LOG.error(f'{name}: {MAX_FAULTS} wrong replies, taken out of the rotation')
        else:
            _LOG.warning(f'{name}: {request.label} failed ({problem}); requeued')
            if state.state == 'probing':
                self._start_probe(slot)
        if not again:
            self._fail(
                ReplicaError(
                    f'{request.label} failed {MAX_ATTEMPTS} times (MAX_ATTEMPTS), the last on '
                    f'{name}: {problem}'
                )
            )
            return
        self.report.requeued += 1
        self.wake.set()

    # Probes -------------------------------------------------------------------------------------

    def _start_probe(self, slot: int) -> None:
        task = self.loop.create_task(self._probe(slot))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _probe(self, slot: int) -> None:
        """Back in the rotation if ``/health`` answers, else out until probed again."""
        ok = await self.slots[slot].transport.healthy(self.settings.probe_timeout_s)
        state, kept = self.schedule.replicas[slot], self.slots[slot]
        if state.state != 'probing':
            return
        if ok:
            kept.out_since = 0.0
            self._decide(self.schedule.set_state, slot, 'ready')
        else:
            if not kept.out_since:
                _LOG.warning(f'{state.name} failed its health probe: out of rotation')
                kept.out_since = time.monotonic()
            kept.next_probe = time.monotonic() + self.settings.reprobe_s
            self._decide(self.schedule.set_state, slot, 'out')
        self.wake.set()

    def _probe_the_out(self) -> None:
        now = time.monotonic()
        for slot, kept in self.slots.items():
            if self.schedule.replicas[slot].state == 'out' and now >= kept.next_probe:
                kept.next_probe = now + self.settings.reprobe_s
                self._decide(self.schedule.set_state, slot, 'probing')
                self._start_probe(slot)

    def _fail(self, failure: BaseException) -> None:
        if self.failure is None:
            self.failure = failure
        if hasattr(self, 'wake'):
            self.wake.set()


def dispatch(
    requests: list[PlannedRequest],
    replicas: list[Replica],
    store: ReplyStore,
    cap_tokens: Optional[int],
    request_deadline_s: float,
    **settings,
) -> DispatchReport:
    """Answer every request not in ``store`` on replicas started elsewhere (see the module)."""
    if not replicas:
        raise ReplicaError('no replicas to dispatch to: replicas must be 1 or more')
    chosen = DispatchSettings(request_deadline_s, cap_tokens, **settings)
    return Dispatcher(requests, store, Fixed(replicas), chosen).run()
