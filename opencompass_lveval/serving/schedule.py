"""What goes where: the dispatcher's policy, apart from any I/O (tested in microseconds).

The order: the stage ends when its last request does, so the longest requests start first and
the short ones fill the gaps at the end (longest-processing-time first, within 4/3 of the best
schedule). The room: a replica given more tokens at once than its KV cache holds would preempt
and recompute, so each holds at most its ``cap`` of tokens in flight (prompt plus answer tokens,
``tokens``, whatever the ``cost`` the order uses). Each decision gives the replica with the most
room left the costliest waiting request that fits there (if none fits the roomiest replica,
none fits any); one that fits nowhere waits while smaller ones fill what room there is. A
replica also holds at most ``senders`` requests at once (its pool of connections).

The cost of a decision does not grow with the queue. Requests wait in one ``FitQueue`` per
answer length (a handful: 16 and 64 tokens for LV-Eval): within one, a longer prompt is both
more tokens and more cost, so "the costliest that fits" is "the most tokens that fit", found in
a Fenwick tree over the tokens the stage's requests hold, in O(log n); the replicas are a heap
keyed by their room, which each assignment and reply updates in O(log r).

A replica is 'ready', 'probing' (after a failed request: it gets nothing until the dispatcher's
health probe says), 'out' (failed its probe; probed again later), 'faulty' (``MAX_FAULTS`` replies
that were not its requests' answers: out of rotation for good) or 'gone' (its process ended; a
restarted one joins as a new replica).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional, Protocol

MAX_ATTEMPTS = 5  # sends of one request before it stops the stage
MAX_FAULTS = 3  # wrong replies from one replica before it is taken out of rotation


class Schedulable(Protocol):
    key: str
    cost: int  # the order: more first
    tokens: int  # the room it takes: prompt plus answer tokens
    max_tokens: int  # its answer length: which queue it waits in


class FitQueue:
    """Requests of one answer length, by tokens: the most tokens at most a room, in O(log n).

    The tokens any request may have are fixed when it is built (a request put back has tokens
    seen before), so the tree is over their ranks."""

    def __init__(self, requests: list) -> None:
        self.values = sorted({r.tokens for r in requests})
        self.rank = {value: index for index, value in enumerate(self.values)}
        self.buckets: list[list] = [[] for _ in self.values]
        self.tree = [0] * (len(self.values) + 1)
        self.size, self.top = 0, -1
        self._log = 1 << max(0, len(self.values).bit_length() - 1) if self.values else 0
        for request in sorted(requests, key=lambda r: r.key, reverse=True):
            self.add(request)

    def add(self, request) -> None:
        at = self.rank[request.tokens]
        self.buckets[at].append(request)
        self._change(at, 1)
        self.top = max(self.top, at)

    def _change(self, at: int, by: int) -> None:
        self.size += by
        at += 1
        while at < len(self.tree):
            self.tree[at] += by
            at += at & -at

    def _prefix(self, at: int) -> int:
        """Requests at ranks 0..at."""
        total, at = 0, at + 1
        while at > 0:
            total += self.tree[at]
            at -= at & -at
        return total

    def _kth(self, count: int) -> int:
        """The rank holding the count-th request (1-based) in rank order."""
        at, step = 0, self._log
        while step:
            ahead = at + step
            if ahead < len(self.tree) and self.tree[ahead] < count:
                at, count = ahead, count - self.tree[ahead]
            step >>= 1
        return at  # 0-based rank

    def best(self, room: int) -> int:
        """The rank of the most tokens at most ``room`` that waits, or -1."""
        if self.top < 0:
            return -1
        if self.values[self.top] <= room:
            return self.top
        limit = bisect_right(self.values, room) - 1
        if limit < 0:
            return -1
        below = self._prefix(limit)
        return self._kth(below) if below else -1

    def peek(self, at: int):
        return self.buckets[at][-1]

    def take(self, at: int):
        request = self.buckets[at].pop()
        self._change(at, -1)
        if at == self.top and not self.buckets[at]:
            self.top = self._kth(self.size) if self.size else -1
        return request


@dataclass
class ReplicaState:
    """A replica as the policy sees it; ``slot``: this instance (a restarted replica is a new
    slot under the same name)."""

    slot: int
    name: str
    cap: int
    senders: int
    held: int = 0
    in_flight: int = 0
    state: str = 'ready'
    faults: int = 0
    version: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def eligible(self) -> bool:
        return self.state == 'ready' and self.in_flight < self.senders


class Schedule:
    """The waiting requests and the replicas' room (see the module)."""

    def __init__(self, requests: Iterable) -> None:
        waiting = list(requests)
        lengths = sorted({r.max_tokens for r in waiting})
        self.queues = {
            length: FitQueue([r for r in waiting if r.max_tokens == length]) for length in lengths
        }
        self.replicas: dict[int, ReplicaState] = {}
        self.heap: list[tuple[int, int, int]] = []  # (-room, slot, version)
        self.attempts: dict[str, int] = {}
        self.answered = 0
        self.in_flight = 0

    # Replicas -----------------------------------------------------------------------------------

    def add_replica(self, name: str, cap: int, senders: int) -> int:
        """A replica ready for requests; its slot."""
        slot = len(self.replicas)
        self.replicas[slot] = ReplicaState(slot, name, cap, senders)
        self._touch(self.replicas[slot])
        return slot

    def set_state(self, slot: int, state: str) -> None:
        replica = self.replicas[slot]
        if replica.state not in ('gone', 'faulty') or state == 'gone':
            replica.state = state
            self._touch(replica)

    def _touch(self, replica: ReplicaState) -> None:
        replica.version += 1
        if replica.eligible:
            heapq.heappush(self.heap, (replica.held - replica.cap, replica.slot, replica.version))

    def _roomiest(self) -> Optional[ReplicaState]:
        while self.heap:
            _, slot, version = self.heap[0]
            replica = self.replicas[slot]
            if version == replica.version and replica.eligible:
                return replica
            heapq.heappop(self.heap)
        return None

    # Requests -----------------------------------------------------------------------------------

    @property
    def waiting(self) -> int:
        return sum(queue.size for queue in self.queues.values())

    def largest_waiting(self) -> Optional[Schedulable]:
        """The request of the most tokens that waits (for the check against every cap)."""
        found = [q.peek(q.top) for q in self.queues.values() if q.top >= 0]
        return max(found, key=lambda r: (r.tokens, r.cost), default=None)

    def _costliest_fitting(self, room: int):
        best, best_queue, best_at = None, None, -1
        for queue in self.queues.values():
            at = queue.best(room)
            if at < 0:
                continue
            request = queue.peek(at)
            if best is None or (request.cost, request.tokens) > (best.cost, best.tokens):
                best, best_queue, best_at = request, queue, at
        return None if best is None else best_queue.take(best_at)

    def assign(self) -> list[tuple[Schedulable, int]]:
        """As many (request, slot) as fit now, costliest first, each to the roomiest replica."""
        chosen = []
        while True:
            replica = self._roomiest()
            if replica is None:
                break
            request = self._costliest_fitting(replica.cap - replica.held)
            if request is None:
                break
            replica.held += request.tokens
            replica.in_flight += 1
            self.in_flight += 1
            self._touch(replica)
            chosen.append((request, replica.slot))
        return chosen

    def _release(self, request: Schedulable, slot: int) -> ReplicaState:
        replica = self.replicas[slot]
        replica.held -= request.tokens
        replica.in_flight -= 1
        self.in_flight -= 1
        self._touch(replica)
        return replica

    def answered_by(self, request: Schedulable, slot: int) -> None:
        self._release(request, slot)
        self.answered += 1

    def failed(self, request: Schedulable, slot: int, fault: bool = False) -> bool:
        """A request back in the queue (False once it has failed ``MAX_ATTEMPTS`` times: the
        caller stops the stage). ``fault``: the replica answered wrongly (a reply not of the
        request); after ``MAX_FAULTS`` it is out of rotation. Otherwise (no answer in time, a
        dropped connection, an error status) it is 'probing' until the caller's probe says."""
        replica = self._release(request, slot)
        if fault:
            replica.faults += 1
            if replica.faults >= MAX_FAULTS:
                self.set_state(slot, 'faulty')
        elif replica.state == 'ready':
            self.set_state(slot, 'probing')
        attempts = self.attempts[request.key] = self.attempts.get(request.key, 0) + 1
        if attempts >= MAX_ATTEMPTS:
            return False
        self.queues[request.max_tokens].add(request)
        return True

    def done(self) -> bool:
        return self.waiting == 0 and self.in_flight == 0
