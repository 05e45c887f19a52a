"""The dispatcher's policy without any server: which request goes where, checked against the rule
it follows (costliest first, each to the replica with the most room where it fits), in
microseconds."""

from __future__ import annotations

import random
from dataclasses import dataclass

from opencompass_lveval.serving.schedule import MAX_ATTEMPTS, MAX_FAULTS, Schedule


@dataclass(frozen=True)
class Asked:
    key: str
    cost: int
    tokens: int
    max_tokens: int


def asked(tokens: list[int], answer: int = 64) -> list[Asked]:
    return [Asked(f'k{i:04d}', t, t, answer) for i, t in enumerate(tokens)]


def by_the_rule(requests: list[Asked], caps: list[int]) -> list[tuple[str, int]]:
    """The rule, written plainly: requests costliest first (ties by key); each to the replica
    holding the fewest tokens among those it fits (ties: the first), else it waits."""
    held, chosen = [0] * len(caps), []
    for request in sorted(requests, key=lambda r: (-r.cost, r.key)):
        fits = [i for i in range(len(caps)) if held[i] + request.tokens <= caps[i]]
        if fits:
            at = min(fits, key=lambda i: held[i])
            held[at] += request.tokens
            chosen.append((request.key, at))
    return chosen


def test_one_wave_follows_the_rule():
    draw = random.Random(7)
    for _ in range(300):
        requests = asked([draw.randint(1, 500) for _ in range(draw.randint(1, 60))])
        caps = [1000] * draw.randint(1, 5)
        schedule = Schedule(requests)
        for index, cap in enumerate(caps):
            schedule.add_replica(f'r{index}', cap, senders=10**6)
        got = [(request.key, slot) for request, slot in schedule.assign()]
        assert sorted(got) == sorted(by_the_rule(requests, caps))


def test_a_request_that_fits_nowhere_waits_while_smaller_ones_fill_the_room():
    schedule = Schedule(asked([900, 600, 300, 250]))
    schedule.add_replica('r0', 1000, senders=8)
    first = schedule.assign()
    assert [r.tokens for r, _ in first] == [900]  # 600 waits: only 100 left
    schedule.answered_by(*first[0])
    assert [r.tokens for r, _ in schedule.assign()] == [600, 300]
    assert schedule.waiting == 1  # 250 waits for room


def test_cost_orders_and_tokens_fill():
    """A quadratic cost is far above the cap; the room each takes is its tokens."""
    requests = [Asked('long', 10**9, 131_136, 64), Asked('short', 10**6, 16_016, 16)]
    schedule = Schedule(requests)
    schedule.add_replica('r0', 200_000, senders=8)
    assert [r.key for r, _ in schedule.assign()] == ['long', 'short']


def test_answer_lengths_share_one_order():
    """Two queues (answers of 16 and 64 tokens): the costliest of both goes first."""
    requests = [Asked('a', 500, 500, 16), Asked('b', 700, 700, 64), Asked('c', 600, 600, 16)]
    schedule = Schedule(requests)
    schedule.add_replica('r0', 10_000, senders=1)
    order = []
    while not schedule.done():
        (request, slot), *_ = schedule.assign()
        order.append(request.key)
        schedule.answered_by(request, slot)
    assert order == ['b', 'c', 'a']


def test_a_replica_holds_at_most_its_senders():
    schedule = Schedule(asked([10] * 20))
    schedule.add_replica('r0', 10_000, senders=3)
    assert len(schedule.assign()) == 3
    assert schedule.assign() == []


def test_the_roomiest_replica_gets_the_next_request():
    schedule = Schedule(asked([400, 300, 200]))
    small, large = schedule.add_replica('small', 500, 8), schedule.add_replica('large', 1000, 8)
    assert [(r.tokens, slot) for r, slot in schedule.assign()] == [
        (400, large),
        (300, large),
        (200, small),
    ]


def test_a_failed_request_comes_back_and_its_replica_waits_for_a_probe():
    schedule = Schedule(asked([100, 90]))
    slot = schedule.add_replica('r0', 1000, 8)
    (first, _), (second, _) = schedule.assign()
    assert schedule.failed(first, slot)
    assert schedule.replicas[slot].state == 'probing' and schedule.assign() == []
    schedule.set_state(slot, 'ready')
    assert [r.key for r, _ in schedule.assign()] == [first.key]
    for _ in range(MAX_ATTEMPTS - 2):
        schedule.failed(first, slot)
        schedule.set_state(slot, 'ready')
        schedule.assign()
    assert not schedule.failed(first, slot)  # the last attempt: the caller stops the stage


def test_wrong_replies_take_a_replica_out_for_good():
    schedule = Schedule(asked([10] * 5))
    slot = schedule.add_replica('r0', 1000, 8)
    taken = schedule.assign()
    for request, _ in taken[:MAX_FAULTS]:
        schedule.failed(request, slot, fault=True)
    assert schedule.replicas[slot].state == 'faulty'
    schedule.set_state(slot, 'ready')  # a probe that answers does not bring it back
    assert schedule.replicas[slot].state == 'faulty' and schedule.assign() == []


def test_a_gone_replica_takes_nothing_and_its_requests_come_back():
    schedule = Schedule(asked([100, 100]))
    old = schedule.add_replica('r0', 1000, 8)
    (request, _), _ = schedule.assign()
    schedule.set_state(old, 'gone')
    schedule.failed(request, old)
    assert schedule.replicas[old].state == 'gone'
    new = schedule.add_replica('r0', 1000, 8)  # the restarted replica
    assert [slot for _, slot in schedule.assign()] == [new]


def test_room_is_kept_by_replies_not_recounted():
    """A long stage: every request answered once, room back to the full cap at the end."""
    draw = random.Random(3)
    requests = asked([draw.randint(10, 900) for _ in range(5000)]) + [
        Asked(f's{i}', t, t, 16) for i, t in enumerate(draw.randint(10, 900) for _ in range(500))
    ]
    schedule = Schedule(requests)
    slots = [schedule.add_replica(f'r{i}', 1000 + 100 * i, 4) for i in range(8)]
    answered = set()
    while not schedule.done():
        for request, slot in schedule.assign():
            assert request.key not in answered
            answered.add(request.key)
            schedule.answered_by(request, slot)
    assert len(answered) == len(requests)
    assert all(
        schedule.replicas[s].held == 0 and schedule.replicas[s].in_flight == 0 for s in slots
    )
