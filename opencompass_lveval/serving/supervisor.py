"""The replicas of one stage, kept running: started in parallel, restarted when they exit, and
all stopped at the end whatever happened.

Each replica has a thread of its own for its whole life: it launches the replica (the
placement's ``launch``), waits for ``GET /health`` (``ready_timeout_s``), tells the dispatcher it
is ready, then watches that its process lives (``alive()``, a Ray call of up to seconds, so it
is asked here, never by the dispatcher; ``poll_s`` None: not watched, for callers that hold the
replicas as they are). A replica that fails to start, is not ready in time or
exits is restarted after a wait (``restart_backoff_s``, doubled at each attempt, at most a
minute), at most ``max_restarts`` times; then it is given up, with its cause. Every launch,
start, exit, restart, give-up and stop is a line of the journal (``replicas.jsonl``).

The dispatcher hears of each replica that is ready, lost or given up (``Listener``), and asks
``hopeless()``: once every replica is given up, no reply can come and the stage stops at once,
naming each cause. ``stop`` ends every replica in parallel, each stop guarded: one that raises
leaves none of the others running, and the failures are named after all were tried.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

from .journal import ReplicaJournal
from .placement import Placement, Replica, ReplicaError, ReplicaSpec, healthy

_LOG = logging.getLogger(__name__)
MAX_BACKOFF_S = 60.0
CAUSE_LOG_CHARS = 1200  # of a replica's log in the message naming why it ended


@dataclass
class Listener:
    """What the supervisor tells its dispatcher, from its own threads."""

    ready: Callable[[Replica], None] = lambda replica: None
    lost: Callable[[str, str], None] = lambda name, cause: None
    gave_up: Callable[[str, str], None] = lambda name, cause: None


class Supervisor:
    """The replicas of ``specs`` on ``placement`` (see the module)."""

    def __init__(
        self,
        placement: Placement,
        specs: list[ReplicaSpec],
        ready_timeout_s: float,
        max_restarts: int = 3,
        restart_backoff_s: float = 2.0,
        journal: Optional[ReplicaJournal] = None,
        poll_s: Optional[float] = 1.0,
    ) -> None:
        self.placement, self.specs = placement, list(specs)
        self.ready_timeout_s, self.max_restarts = ready_timeout_s, max_restarts
        self.restart_backoff_s, self.poll_s = restart_backoff_s, poll_s
        self.journal = journal or ReplicaJournal(placement.log_dir)
        self.listener = Listener()
        self.current: dict[str, Replica] = {}  # the running instance of each replica
        self.causes: dict[str, str] = {}  # why each replica last ended or failed to start
        self.given_up: set[str] = set()
        self.serving: set[str] = set()  # ready and running now
        self.stopping = threading.Event()
        self.all_stopped = threading.Event()  # a thread outlives its replica (PR_SET_PDEATHSIG)
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    # Starting and watching -----------------------------------------------------------------------

    def start(self, listener: Listener) -> None:
        """Every replica launched at once, each on its thread; the placement refuses first what
        it cannot hold (nothing is started then). Called again (a later round of requests, such
        as two-call answers' second calls), nothing is launched: ``listener`` replaces the last
        one and is told of each replica ready now."""
        with self.lock:
            self.listener = listener
            ready = [self.current[name] for name in sorted(self.serving)]
            again = bool(self.threads)
        if again:
            for replica in ready:
                listener.ready(replica)
            return
        for spec in self.placement.prepare(self.specs):
            thread = threading.Thread(target=self._keep, args=(spec,), name=f'replica {spec.name}')
            self.threads.append(thread)
            thread.start()

    def _keep(self, spec: ReplicaSpec) -> None:
        """One replica's life: launched, ready, watched, restarted, or given up."""
        for attempt in range(self.max_restarts + 1):
            if attempt:
                wait = min(MAX_BACKOFF_S, self.restart_backoff_s * 2 ** (attempt - 1))
                self.journal.note(spec.name, 'restarting', attempt=attempt, wait_s=wait)
                if self.stopping.wait(wait):
                    return
            cause = self._run_once(spec)
            if cause is None:  # stopped by the stage: its replica dies with this thread
                self.all_stopped.wait(60)
                return
            with self.lock:
                self.causes[spec.name] = cause
        with self.lock:
            self.given_up.add(spec.name)
        self.journal.note(spec.name, 'gave up', restarts=self.max_restarts)
        _LOG.error(f'replica {spec.name} given up after {self.max_restarts} restarts: {cause}')
        self.listener.gave_up(spec.name, cause)

    def _run_once(self, spec: ReplicaSpec) -> Optional[str]:
        """Launch, wait ready, watch; why it ended, or None where the stage stopped it."""
        self.journal.note(spec.name, 'launched')
        try:
            replica = self.placement.launch(spec)
        except Exception as exc:  # noqa: BLE001 (any failure to start is a cause, and a restart)
            return f'failed to start: {type(exc).__name__}: {exc}'
        with self.lock:
            self.current[spec.name] = replica
        self.journal.note(spec.name, 'started', **replica.where)
        if self.stopping.is_set():
            return None  # stop() may have missed it: it is stopped there or here, once
        problem = self._wait_ready(replica)
        if problem is None:
            self.journal.note(spec.name, 'ready')
            with self.lock:  # told once: here, or by a later start that finds it serving
                self.serving.add(spec.name)
                listener = self.listener
            listener.ready(replica)
            if self.poll_s is None:  # not watched: the caller holds it as it is
                self.stopping.wait()
                return None
            while replica.alive():
                if self.stopping.wait(self.poll_s):
                    return None
            if self.stopping.is_set():
                return None
            with self.lock:
                self.serving.discard(spec.name)
            cause = self._ended(replica, 'exited')
            self.listener.lost(spec.name, cause)
            return cause
        if self.stopping.is_set():
            return None
        return self._ended(replica, problem)

    def _wait_ready(self, replica: Replica) -> Optional[str]:
        """None once ``/health`` answers; else what kept it from being ready."""
        deadline = time.monotonic() + self.ready_timeout_s
        while not self.stopping.is_set():
            if healthy(replica.url, 2.0):
                return None
            if not replica.alive():
                return 'exited before it was ready'
            if time.monotonic() > deadline:
                return f'not ready after ready_timeout_s={self.ready_timeout_s:g} s'
            self.stopping.wait(0.5)
        return 'stopped'

    def _ended(self, replica: Replica, what: str) -> str:
        """The replica stopped (whatever is left of it) and its cause, with its log's end."""
        code = self._stop_one(replica)
        tail = replica.log_tail(CAUSE_LOG_CHARS).strip()
        return f'{what} (code {code}) on {replica.node}; the end of its log:\n{tail}'

    # What the dispatcher asks ---------------------------------------------------------------------

    def hopeless(self) -> bool:
        """Whether every replica is given up: no reply can come any more."""
        with self.lock:
            return len(self.given_up) == len(self.specs)

    def coming(self) -> int:
        """Replicas not given up (ready, starting, or waiting for a restart)."""
        with self.lock:
            return len(self.specs) - len(self.given_up)

    def pending(self) -> int:
        """Replicas starting or waiting for a restart: they may still join."""
        with self.lock:
            return len(self.specs) - len(self.given_up) - len(self.serving)

    def describe_causes(self) -> str:
        with self.lock:
            causes = dict(self.causes)
        return '\n'.join(
            f'- {spec.name}: {causes.get(spec.name, "no cause recorded")}' for spec in self.specs
        )

    # Stopping ---------------------------------------------------------------------------------

    def _stop_one(self, replica: Replica) -> object:
        """Stop one instance, once; its exit code, or what its stop raised."""
        with self.lock:
            if self.current.get(replica.name) is replica:
                del self.current[replica.name]
        try:
            code = replica.stop()
        except Exception as exc:  # noqa: BLE001 (named by stop(); the others are still stopped)
            self.journal.note(replica.name, 'stop failed', error=f'{type(exc).__name__}: {exc}')
            raise
        self.journal.note(replica.name, 'stopped', code=code)
        return code

    def stop(self) -> None:
        """Every replica stopped, in parallel, each stop guarded; then an error naming each stop
        that raised."""
        self.stopping.set()
        with self.lock:
            running = list(self.current.values())
        failures: list[str] = []
        if running:
            with ThreadPoolExecutor(min(32, len(running))) as pool:
                for replica, outcome in zip(
                    running, pool.map(_guarded(self._stop_one), running), strict=True
                ):
                    if isinstance(outcome, BaseException):
                        failures.append(f'{replica.name}: {type(outcome).__name__}: {outcome}')
        self.all_stopped.set()
        for thread in self.threads:
            thread.join(timeout=30)
        with self.lock:  # an instance a thread launched while this stop began
            late = list(self.current.values())
        for replica in late:
            outcome = _guarded(self._stop_one)(replica)
            if isinstance(outcome, BaseException):
                failures.append(f'{replica.name}: {type(outcome).__name__}: {outcome}')
        try:
            self.placement.close()
        except Exception as exc:  # noqa: BLE001
            failures.append(f'the placement: {type(exc).__name__}: {exc}')
        if failures:
            raise ReplicaError(
                'these replicas could not be stopped cleanly (every other one was): '
                + '; '.join(failures)
            )

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        try:
            self.stop()
        except ReplicaError as exc:
            if value is None:
                raise
            _LOG.error(str(exc))  # the error in flight is the one to show


def _guarded(stop: Callable[[Replica], object]) -> Callable[[Replica], object]:
    def run(replica: Replica) -> object:
        try:
            return stop(replica)
        except Exception as exc:  # noqa: BLE001
            return exc

    return run
