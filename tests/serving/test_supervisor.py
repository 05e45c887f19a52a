"""A stage that survives its replicas: real paced replicas (``testing/paced_server``) started by
``LocalPlacement`` under the ``Supervisor``, fed by the ``Dispatcher``: a replica that fails to
load, one killed mid-run, all of them dead, a stop that raises, starts in parallel."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from servers import ended

from opencompass_lveval.files.jsonl import journal_records
from opencompass_lveval.serving.dispatch import Dispatcher, DispatchSettings
from opencompass_lveval.serving.journal import ReplicaJournal
from opencompass_lveval.serving.placement import ReplicaError, ReplicaSpec
from opencompass_lveval.serving.placement.local import LocalPlacement
from opencompass_lveval.serving.request import planned_request
from opencompass_lveval.serving.store import ReplyStore
from opencompass_lveval.serving.supervisor import Listener, Supervisor

PACED = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port', '{port}']
SAMPLING = {'temperature': 0, 'max_tokens': 8, 'stop': []}


def paced(folder: Path, name: str, *extra: str, speed: int = 20000) -> ReplicaSpec:
    argv = [*PACED, '--tokens-per-s', str(speed), '--log', str(folder / f'{name}.jsonl'), *extra]
    return ReplicaSpec(name, argv, {}, 0)


def requests(count: int, size: int = 200) -> list:
    return [planned_request('e', [i] * size, SAMPLING, f'#{i}') for i in range(count)]


def supervised(folder: Path, specs: list, **settings) -> Supervisor:
    placement = LocalPlacement(log_dir=folder / 'logs', num_cpus=0.25)
    chosen = {'max_restarts': 1, 'restart_backoff_s': 0.1, 'poll_s': 0.2, **settings}
    return Supervisor(placement, specs, 60, **chosen)


def run(asked: list, supervisor: Supervisor, store: ReplyStore, **settings):
    chosen = DispatchSettings(30, 1000, progress=lambda done, total: None, **settings)
    with supervisor:
        return Dispatcher(asked, store, supervisor, chosen).run()


def events(folder: Path, name: str) -> list[str]:
    records, _ = journal_records(folder / 'logs' / 'replicas.jsonl')
    return [e['event'] for e in records if e['replica'] == name]


def lines(folder: Path, name: str) -> list[dict]:
    """A paced server's log lines, but a last one it is still writing (none before it starts)."""
    log = folder / f'{name}.jsonl'
    text = log.read_text().split('\n') if log.is_file() else ['']
    return [json.loads(line) for line in text[:-1]]


@pytest.mark.slow  # a replica that never loads, restarted once: seconds
def test_a_quorum_of_three_serves_while_the_fourth_fails_to_load(tmp_path):
    broken = ReplicaSpec(
        'broken', [sys.executable, '-c', 'print("weights not found: /nowhere"); exit(3)'], {}, 0
    )
    specs = [paced(tmp_path, f'r{i}', speed=3000) for i in range(3)] + [broken]
    supervisor, store, asked = supervised(tmp_path, specs), ReplyStore(tmp_path / 's'), requests(30)
    report = run(asked, supervisor, store, quorum=3)
    assert report.answered == 30 and sorted(report.sent) == ['r0', 'r1', 'r2']
    assert supervisor.given_up == {'broken'} and 'weights not found' in supervisor.causes['broken']
    attempt = ['launched', 'started', 'stopped']
    assert events(tmp_path, 'broken') == [*attempt, 'restarting', *attempt, 'gave up']


@pytest.mark.slow  # a replica killed and restarted mid-run: seconds
def test_a_replica_killed_mid_run_is_restarted_and_serves_again(tmp_path):
    specs = [paced(tmp_path, name, speed=4000) for name in ('r0', 'r1')]
    supervisor, store, asked = (
        supervised(tmp_path, specs),
        ReplyStore(tmp_path / 's'),
        requests(120),
    )

    def kill_r0() -> None:
        while sum(line['event'] == 'received' for line in lines(tmp_path, 'r0')) < 3:
            time.sleep(0.02)
        os.killpg(supervisor.current['r0'].process.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_r0)
    killer.start()
    report = run(asked, supervisor, store)
    killer.join()
    assert report.answered == 120 and all(store.answered(r.expected()) for r in asked)
    assert events(tmp_path, 'r0').count('ready') == 2 and 'restarting' in events(tmp_path, 'r0')
    logged = lines(tmp_path, 'r0')
    restarted = max(i for i, line in enumerate(logged) if line['event'] == 'started')
    assert any(line['event'] == 'answered' for line in logged[restarted:])  # serves again
    assert report.dropped == []


@pytest.mark.slow  # every replica dies, each restart too: seconds
def test_every_replica_dead_stops_the_stage_naming_each_cause(tmp_path):
    specs = [paced(tmp_path, name, '--exit-after', '2') for name in ('r0', 'r1')]
    supervisor = supervised(tmp_path, specs)
    started = time.monotonic()
    with pytest.raises(ReplicaError, match='every replica was given up') as caught:
        run(requests(40), supervisor, ReplyStore(tmp_path / 's'))
    assert time.monotonic() - started < 30
    for name in ('r0', 'r1'):
        assert f'- {name}: exited (code 3)' in str(caught.value)


class OneStopRaises(LocalPlacement):
    """Local replicas, of which r1's stop raises (and leaves it running)."""

    def launch(self, spec):
        replica = super().launch(spec)
        if spec.name == 'r1':
            replica.stop = self.raising
        return replica

    @staticmethod
    def raising():
        raise RuntimeError('scancel: Socket timed out on send/recv operation')


@pytest.mark.slow
def test_a_stop_that_raises_leaves_none_of_the_others_running(tmp_path):
    specs = [paced(tmp_path, f'r{i}') for i in range(3)]
    placement = OneStopRaises(log_dir=tmp_path / 'logs', num_cpus=0.25)
    supervisor = Supervisor(placement, specs, 60, journal=ReplicaJournal(tmp_path), poll_s=None)
    ready = threading.Semaphore(0)
    supervisor.start(Listener(ready=lambda replica: ready.release()))
    for _ in specs:
        assert ready.acquire(timeout=60)
    pids = {name: replica.process.pid for name, replica in supervisor.current.items()}
    with pytest.raises(ReplicaError, match=r'r1: RuntimeError: scancel: Socket timed out'):
        supervisor.stop()
    assert ended(pids['r0']) and ended(pids['r2'])
    os.killpg(pids['r1'], signal.SIGKILL)


@pytest.mark.slow
def test_replicas_start_at_once(tmp_path):
    """Three replicas that take 1.5 s each to load are all ready well before 4.5 s, the least
    one after another would take."""
    late = [sys.executable, '-c', 'import runpy, sys, time; time.sleep(1.5); '
            "sys.argv[0] = 'paced'; runpy.run_module('opencompass_lveval.testing.paced_server', "
            "run_name='__main__')"]  # fmt: skip
    specs = [
        ReplicaSpec(f'r{i}', [*late, *paced(tmp_path, f'r{i}').argv[3:]], {}, 0) for i in range(3)
    ]
    supervisor = supervised(tmp_path, specs, poll_s=None)
    ready = threading.Semaphore(0)
    started = time.monotonic()
    with supervisor:
        supervisor.start(Listener(ready=lambda replica: ready.release()))
        for _ in specs:
            assert ready.acquire(timeout=30)
        assert time.monotonic() - started < 3.5


@pytest.mark.slow  # two replicas over two rounds: a second
def test_a_second_round_is_served_by_the_replicas_of_the_first(tmp_path):
    """Two-call answers' second calls are dispatched after the first replies are stored, to the
    replicas already running: nothing is launched again, and the second round's dispatcher is
    told of each ready replica (it waited for a quorum no one announced)."""
    specs = [paced(tmp_path, name) for name in ('r0', 'r1')]
    supervisor, store = supervised(tmp_path, specs), ReplyStore(tmp_path / 's')
    first, second = requests(6), requests(10)[6:]
    chosen = DispatchSettings(30, 1000, quorum=2, progress=lambda done, total: None)
    with supervisor:
        rounds = [Dispatcher(asked, store, supervisor, chosen).run() for asked in (first, second)]
    assert [report.answered for report in rounds] == [6, 4]
    assert sorted(rounds[1].sent) == ['r0', 'r1']
    for name in ('r0', 'r1'):
        assert events(tmp_path, name).count('launched') == 1
    asked = [line['key'] for name in ('r0', 'r1') for line in lines(tmp_path, name)
             if line['event'] == 'received']  # fmt: skip
    assert len(asked) == len(set(asked)) == 10
