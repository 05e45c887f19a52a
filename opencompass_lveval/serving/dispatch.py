"""One queue, longest first, over replicas that each hold at most a cap of tokens in flight.

Why this order and this cap: the stage ends when its last request does, so the longest requests
start first and the short ones fill the gaps at the end (longest-processing-time first, within
4/3 of the best schedule); a replica given more tokens at once than its KV cache holds would
preempt and recompute, so each one holds at most ``cap_tokens`` (prompt plus answer tokens of
the requests it is answering). Each request in turn, longest first, goes to the replica with
the fewest tokens in flight among those it fits; one that fits nowhere waits while shorter ones
fill what room there is.

Faults: every request has a deadline (``request_deadline_s``, the whole reply). A request that
fails or passes its deadline goes back to the queue, and its replica gets nothing more until
``GET /health`` answers (``probe_timeout_s``); one that does not is out of the rotation, probed
again every ``reprobe_s`` while its process lives (a restarted replica comes back), and when
every replica is out for ``request_deadline_s`` the dispatch stops with an error naming them and
the end of each one's log. A request refused outright (HTTP 4xx other than 408/409/429) is an
error at once: another replica would refuse it too; one that fails ``MAX_ATTEMPTS`` times
(a 5xx it alone causes, say) is an error naming it, rather than a run that never ends.

Each reply goes to the ``ReplyStore`` once (first writer wins): requests whose key is there are
not sent, so a restarted dispatch asks only what was in flight when the last one stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from .plan import PlannedRequest
from .replicas import Replica, ReplicaError, healthy
from .store import ReplyStore

_LOG = logging.getLogger(__name__)
RETRIED_STATUS = frozenset({408, 409, 429})
MAX_ATTEMPTS = 5  # sends of one request before it stops the dispatch


class RefusedRequest(ReplicaError):
    """A request a replica refused outright (a 4xx): no other replica would take it."""


@dataclass
class DispatchReport:
    """What a dispatch did: requests sent per replica (answered or not), replies written, keys
    found done before it started, requests put back in the queue, replicas out at the end."""

    sent: dict[str, int] = field(default_factory=dict)
    answered: int = 0
    skipped: int = 0
    requeued: int = 0
    dropped: list[str] = field(default_factory=list)  # failed, probing or out at the end
    seconds: float = 0.0


@dataclass
class _Slot:
    """A replica as the dispatcher sees it: tokens it holds, and whether it may get more."""

    replica: Replica
    state: str = 'ready'  # 'ready', 'probing' (after a failure) or 'out' (failed its probe)
    held: int = 0
    out_since: float = 0.0
    next_probe: float = 0.0


def default_progress(done: int, total: int) -> None:
    _LOG.info(f'serving: {done} of {total} requests answered')


class Dispatcher:
    """The state of one dispatch (see the module); ``run`` is the whole of it."""

    def __init__(
        self,
        store: ReplyStore,
        replicas: list[Replica],
        cap_tokens: int,
        request_deadline_s: float,
        progress: Callable[[int, int], None],
        probe_timeout_s: float,
        reprobe_s: float,
    ) -> None:
        self.store, self.cap, self.deadline = store, cap_tokens, request_deadline_s
        self.progress, self.probe_timeout_s, self.reprobe_s = progress, probe_timeout_s, reprobe_s
        self.slots = [_Slot(replica) for replica in replicas]
        self.report = DispatchReport(sent={r.name: 0 for r in replicas})
        self.queue: list[PlannedRequest] = []
        self.in_flight = 0
        self.failures: dict[str, int] = {}  # failed sends per request key
        self.failure: Optional[BaseException] = None
        self.changed = threading.Condition()

    def run(self, requests: list[PlannedRequest]) -> DispatchReport:
        started = time.monotonic()
        unique = {request.key: request for request in requests}
        self.queue = sorted(
            (r for r in unique.values() if not self.store.has(r.key)),
            key=lambda r: (-r.cost, r.key),
        )
        self.report.skipped = len(unique) - len(self.queue)
        too_large = [r for r in self.queue if r.cost > self.cap]
        if too_large:
            raise ReplicaError(
                f'{len(too_large)} requests cost more than cap_tokens={self.cap} tokens in flight '
                f'(the largest, {too_large[0].label}: {too_large[0].cost} prompt and answer '
                'tokens): raise cap_tokens to at least that, within what the engine KV cache holds'
            )
        total = len(self.queue)
        with self.changed:
            while (self.queue or self.in_flight) and self.failure is None:
                self._assign()
                self._probe_the_out()
                self._check_some_replica_serves()
                self.changed.wait(timeout=0.2)
        if self.failure is not None:
            raise self.failure
        self.progress(total, total)
        self.report.dropped = [s.replica.name for s in self.slots if s.state != 'ready']
        self.report.seconds = round(time.monotonic() - started, 3)
        return self.report

    def _assign(self) -> None:
        """The longest requests first, each to the ready replica holding the fewest tokens
        among those it fits (a slower replica keeps its tokens longer and so gets fewer); a
        request that fits nowhere waits while shorter ones fill the room (lock held)."""
        for request in list(self.queue):
            ready = [
                s for s in self.slots if s.state == 'ready' and s.held + request.cost <= self.cap
            ]
            if not ready:
                continue
            slot = min(ready, key=lambda s: s.held)
            self.queue.remove(request)
            slot.held += request.cost
            self.in_flight += 1
            self.report.sent[slot.replica.name] += 1
            threading.Thread(target=self._send, args=(slot, request), daemon=True).start()

    def _send(self, slot: _Slot, request: PlannedRequest) -> None:
        """One request on its own thread: its reply stored, or the request put back."""
        try:
            record = post_completion(slot.replica, request, self.deadline)
        except RefusedRequest as exc:
            self._finish(slot, request, failure=exc)
            return
        except Exception as exc:  # noqa: BLE001 (any failure of a request is a requeue)
            self._finish(slot, request, problem=f'{type(exc).__name__}: {exc}')
            return
        self.store.put_once(request.key, {**record, 'replica': slot.replica.name})
        self._finish(slot, request)

    def _finish(
        self,
        slot: _Slot,
        request: PlannedRequest,
        problem: Optional[str] = None,
        failure: Optional[BaseException] = None,
    ) -> None:
        with self.changed:
            slot.held -= request.cost
            self.in_flight -= 1
            if failure is not None:
                self.failure = self.failure or failure
            elif problem is not None:
                self._requeue(slot, request, problem)
            else:
                self.report.answered += 1
                if self.report.answered % max(1, self._total() // 20) == 0:
                    self.progress(self.report.answered, self._total())
            self.changed.notify_all()

    def _requeue(self, slot: _Slot, request: PlannedRequest, problem: str) -> None:
        """The request back in the queue, its replica probed before it gets more (lock held)."""
        failed = self.failures[request.key] = self.failures.get(request.key, 0) + 1
        if failed >= MAX_ATTEMPTS:
            self.failure = self.failure or ReplicaError(
                f'{request.label} failed {failed} times (MAX_ATTEMPTS), the last on '
                f'{slot.replica.name}: {problem}'
            )
            return
        _LOG.warning(f'{slot.replica.name}: {request.label} failed ({problem}); requeued')
        self.report.requeued += 1
        self.queue.append(request)
        self.queue.sort(key=lambda r: (-r.cost, r.key))
        if slot.state == 'ready':
            slot.state = 'probing'
            threading.Thread(target=self._probe, args=(slot,), daemon=True).start()

    def _total(self) -> int:
        return self.report.answered + len(self.queue) + self.in_flight

    def _probe(self, slot: _Slot) -> None:
        """After a failure: back in the rotation if ``/health`` answers, else out."""
        ok = healthy(slot.replica, self.probe_timeout_s)
        with self.changed:
            if ok:
                slot.state, slot.out_since = 'ready', 0.0
            else:
                if not slot.out_since:  # out since its first failed probe, however many follow
                    _LOG.warning(f'{slot.replica.name} failed its health probe: out of rotation')
                    slot.out_since = time.monotonic()
                slot.state, slot.next_probe = 'out', time.monotonic() + self.reprobe_s
            self.changed.notify_all()

    def _probe_the_out(self) -> None:
        """Replicas out of the rotation whose process lives are probed every ``reprobe_s``."""
        now = time.monotonic()
        for slot in self.slots:
            if slot.state == 'out' and now >= slot.next_probe and slot.replica.alive():
                slot.state = 'probing'
                threading.Thread(target=self._probe, args=(slot,), daemon=True).start()

    def _check_some_replica_serves(self) -> None:
        """Stop (``self.failure``) once every replica has been out for a request's deadline."""
        if any(slot.state != 'out' for slot in self.slots):
            return
        if time.monotonic() - min(s.out_since for s in self.slots) < self.deadline:
            return
        lost = '\n'.join(
            f'- {s.replica.name} on {s.replica.node} ({"running" if s.replica.alive() else "exited"}'
            f'), the end of its log:\n{s.replica.log_tail()[-1000:]}'
            for s in self.slots
        )
        self.failure = ReplicaError(
            f'every replica failed its health probe for {self.deadline:g} s '
            f'(request_deadline_s), {len(self.queue)} requests unanswered; what was answered is '
            f'kept and a rerun asks only the rest:\n{lost}'
        )


def post_completion(replica: Replica, request: PlannedRequest, deadline_s: float) -> dict:
    """The reply record of one request to a replica within ``deadline_s`` seconds (the whole
    reply); raises on any failure."""
    from ..models.api_client import request_payload
    from ..models.deadline import deadline, deadline_session

    started = time.perf_counter()
    with deadline(deadline_s) as limit:
        try:
            response = deadline_session().post(
                f'{replica.url}/completions',
                data=request_payload(request.body),
                headers={'Content-Type': 'application/json'},
                timeout=deadline_s,
            )
        except OSError as exc:
            if limit.passed:
                raise TimeoutError(f'no reply within request_deadline_s={deadline_s:g}') from None
            raise ConnectionError(str(exc)) from None
    status = response.status_code
    if 400 <= status < 500 and status not in RETRIED_STATUS:
        raise RefusedRequest(
            f'{replica.name} refused {request.label}: HTTP {status} {response.text[:300]}'
        )
    response.raise_for_status()
    return reply_record(response.json(), time.perf_counter() - started)


def reply_record(payload: Any, seconds: float) -> dict:
    """The stored fields of an OpenAI completion (those of the API reply cache, ``cache.py``)."""
    choice = payload['choices'][0]
    if not isinstance(choice.get('text'), str):
        raise ValueError(f'the reply has no text: {str(choice)[:200]}')
    usage = payload.get('usage') or {}

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and value >= 0 else -1

    finish = choice.get('finish_reason')
    return {
        'text': choice['text'],
        'prompt_tokens': count('prompt_tokens'),
        'completion_tokens': count('completion_tokens'),
        'latency_s': round(seconds, 4),
        'finish_reason': finish if isinstance(finish, str) else None,
    }


def dispatch(
    requests: list[PlannedRequest],
    replicas: list[Replica],
    store: ReplyStore,
    cap_tokens: int,
    request_deadline_s: float,
    progress: Callable[[int, int], None] = default_progress,
    probe_timeout_s: float = 10.0,
    reprobe_s: float = 5.0,
) -> DispatchReport:
    """Answer every request not in ``store`` on ``replicas`` (see the module)."""
    if not replicas:
        raise ReplicaError('no replicas to dispatch to: replicas must be 1 or more')
    dispatcher = Dispatcher(
        store, replicas, cap_tokens, request_deadline_s, progress, probe_timeout_s, reprobe_s
    )
    return dispatcher.run(requests)
