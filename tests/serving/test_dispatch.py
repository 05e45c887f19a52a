"""The dispatcher over real local HTTP replicas (``testing/paced_server``, started by
``LocalPlacement``): what each server received, as its own log says, is checked against the
dispatcher's rules."""

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

from opencompass_lveval.serving.dispatch import dispatch
from opencompass_lveval.serving.placement import ReplicaError, ReplicaSpec
from opencompass_lveval.serving.placement.local import LocalPlacement
from opencompass_lveval.serving.replicas import kv_capacity, serving
from opencompass_lveval.serving.request import planned_request
from opencompass_lveval.serving.store import ReplyStore
from opencompass_lveval.testing.paced_server import body_key, paced_answer

PACED = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port', '{port}']


def paced_specs(folder: Path, speeds: list[float], kv_tokens: int = 0) -> list[ReplicaSpec]:
    specs = []
    for index, speed in enumerate(speeds):
        argv = [*PACED, '--tokens-per-s', str(speed), '--log', str(folder / f'r{index}.jsonl')]
        argv += ['--kv-tokens', str(kv_tokens)] if kv_tokens else []
        specs.append(ReplicaSpec(f'r{index}', argv, {}, 0))
    return specs


def planned(costs: list[int], answer: int = 8) -> list:
    """Requests of these costs (prompt ids of cost - answer tokens), each a distinct body."""
    sampling = {'temperature': 0, 'max_tokens': answer, 'stop': []}
    return [
        planned_request('engine', [index] * (cost - answer), sampling, f'#{index}')
        for index, cost in enumerate(costs)
    ]


def asked(request) -> str:
    """How a paced server's log names a request: its body's digest."""
    return body_key(json.loads(request.body()))


def stored_text(store: ReplyStore, request) -> str:
    reply, problem = store.read(request.expected())
    assert reply is not None, problem
    return reply['text']


def answered_all(store: ReplyStore, requests) -> bool:
    """Every request's reply stored, and it is that request's answer."""
    return all(stored_text(store, r) == paced_answer(json.loads(r.body())) for r in requests)


def log_lines(log: Path) -> list[dict]:
    """A paced server's log lines, but a last one it is still writing."""
    lines = log.read_text().split('\n')
    return [json.loads(line) for line in lines[:-1]]


def received(folder: Path) -> dict[str, list[dict]]:
    """Each replica's 'received' lines, in the order its log has them."""
    lines = {}
    for log in sorted(folder.glob('r*.jsonl')):
        lines[log.stem] = [e for e in log_lines(log) if e['event'] == 'received']
    return lines


def placement(tmp_path: Path) -> LocalPlacement:
    return LocalPlacement(log_dir=tmp_path / 'logs', num_cpus=0.25)


@pytest.mark.slow  # seconds: paced replicas answer in real time
def test_longest_first_and_the_cap_held_as_the_servers_saw_it(tmp_path):
    costs = [60 + (i * 37) % 400 for i in range(40)]
    requests, cap = planned(costs), 900
    store = ReplyStore(tmp_path / 'store')
    with serving(placement(tmp_path), paced_specs(tmp_path, [4000, 4000]), 60) as replicas:
        report = dispatch(requests, replicas, store, cap, 30)
    seen = received(tmp_path)
    assert max(e['tokens_in_flight'] for lines in seen.values() for e in lines) <= cap
    assert sum(report.sent.values()) == len(requests) == report.answered
    assert answered_all(store, requests)  # each reply stored, and it is that request's
    # The first wave arrived first: longest first, each to the replica holding the fewest
    # tokens among those it fits.
    wave, held = [], [0] * len(seen)
    for cost in sorted(costs, reverse=True):
        fits = [i for i in range(len(held)) if held[i] + cost <= cap]
        if fits:
            held[min(fits, key=held.__getitem__)] += cost
            wave.append(cost)
    assert wave == sorted(costs)[-4:][::-1]
    order = sorted((e for lines in seen.values() for e in lines), key=lambda e: e['time'])
    assert sorted(e['prompt_tokens'] + e['max_tokens'] for e in order[: len(wave)]) == sorted(wave)


@pytest.mark.slow  # seconds: paced replicas answer in real time
def test_one_request_at_a_time_each_replica_takes_them_longest_first(tmp_path):
    costs = [300 + (i * 53) % 290 for i in range(16)]  # all above half the cap
    with serving(placement(tmp_path), paced_specs(tmp_path, [5000, 5000]), 60) as replicas:
        dispatch(planned(costs), replicas, ReplyStore(tmp_path / 'store'), 600, 30)
    seen = received(tmp_path)
    for lines in seen.values():  # each replica: strictly as planned
        sent = [e['prompt_tokens'] + e['max_tokens'] for e in lines]
        assert sorted(sent, reverse=True) == sent and len(sent) >= 4
    # Across both: any request began no later than every request at least 2 places smaller
    # (the two replicas' sends of one moment may arrive in either order).
    order = sorted((e for lines in seen.values() for e in lines), key=lambda e: e['time'])
    sent = [e['prompt_tokens'] + e['max_tokens'] for e in order]
    ranks = sorted(range(len(sent)), key=lambda i: -sent[i])
    assert all(abs(at - rank) <= 1 for rank, at in enumerate(ranks))


@pytest.mark.slow  # seconds: paced replicas answer in real time
def test_a_restarted_dispatch_asks_only_what_is_not_stored(tmp_path):
    requests = planned([100 + i for i in range(20)])
    store = ReplyStore(tmp_path / 'store')
    with serving(placement(tmp_path), paced_specs(tmp_path, [50000]), 60) as replicas:
        dispatch(requests[:12], replicas, store, 1000, 30)
        again = dispatch(requests, replicas, store, 1000, 30)
    keys = [e['key'] for e in received(tmp_path)['r0']]
    assert sorted(keys) == sorted(asked(r) for r in requests)  # each asked exactly once
    assert (again.skipped, again.answered) == (12, 8)


def killed_mid_run(replicas, folder: Path, after: int) -> dict:
    """Kill replica r0 once its log shows ``after`` requests received; what it held then."""
    log = folder / 'r0.jsonl'
    while len(received(folder).get('r0', [])) < after:
        time.sleep(0.01)
    os.killpg(replicas[0].process.pid, signal.SIGKILL)
    replicas[0].process.wait()
    held = [e['key'] for e in received(folder)['r0']]
    answered = [line['key'] for line in log_lines(log) if line['event'] == 'answered']
    return {'unanswered': set(held) - set(answered)}


@pytest.mark.slow  # a replica killed mid-run, then the rest answered: seconds
def test_a_killed_replica_loses_only_what_it_held(tmp_path):
    requests = planned([200 + (i * 31) % 300 for i in range(30)])
    store = ReplyStore(tmp_path / 'store')
    with serving(placement(tmp_path), paced_specs(tmp_path, [3000, 3000]), 60) as replicas:
        outcome = {}
        killer = threading.Thread(
            target=lambda: outcome.update(killed_mid_run(replicas, tmp_path, 4))
        )
        killer.start()
        report = dispatch(requests, replicas, store, 1200, 30, reprobe_s=0.5)
        killer.join()
    assert answered_all(store, requests)
    sent = [e['key'] for lines in received(tmp_path).values() for e in lines]
    twice = {key for key in sent if sent.count(key) > 1}
    assert twice and twice <= outcome['unanswered']  # only what it held was asked again
    assert report.requeued >= len(twice) and report.dropped == ['r0']


@pytest.mark.slow  # waits out a stopped replica's deadline
def test_a_replica_that_stops_answering_is_probed_out(tmp_path):
    requests = planned([300] * 12)
    store = ReplyStore(tmp_path / 'store')
    with serving(placement(tmp_path), paced_specs(tmp_path, [2000, 2000]), 60) as replicas:
        os.killpg(replicas[0].process.pid, signal.SIGSTOP)
        report = dispatch(requests, replicas, store, 700, 2, probe_timeout_s=1, reprobe_s=30)
        stopped_pid = replicas[0].process.pid
    assert answered_all(store, requests)
    assert report.dropped == ['r0'] and report.requeued == report.sent['r0'] >= 1
    assert ended(stopped_pid)  # stopped, and still ended at the block's end


@pytest.mark.slow  # waits for every replica to be given up
def test_every_replica_lost_is_an_error_naming_them(tmp_path):
    with serving(placement(tmp_path), paced_specs(tmp_path, [1000, 1000]), 60) as replicas:
        for replica in replicas:
            os.killpg(replica.process.pid, signal.SIGKILL)
        with pytest.raises(ReplicaError, match=r'every replica failed') as caught:
            dispatch(planned([100, 200]), replicas, ReplyStore(tmp_path / 's'), 500, 1)
    assert '- r0 on' in str(caught.value) and '- r1 on' in str(caught.value)


def test_a_request_over_the_cap_is_refused_before_any_is_sent(tmp_path):
    refused = pytest.raises(ReplicaError, match='raise cap_tokens to at least that')
    with serving(placement(tmp_path), paced_specs(tmp_path, [1000]), 60) as replicas, refused:
        dispatch(planned([100, 900]), replicas, ReplyStore(tmp_path / 's'), 500, 5)
    assert received(tmp_path)['r0'] == []


def test_the_default_cap_is_the_engines_kv_capacity(tmp_path):
    with serving(placement(tmp_path), paced_specs(tmp_path, [1000], kv_tokens=4096), 60) as r:
        assert kv_capacity(r[0]) == 4096


class Recording(LocalPlacement):
    """LocalPlacement that keeps the process ids it started."""

    pids: list[int] = []

    def launch(self, spec):
        started = super().launch(spec)
        self.pids = [*self.pids, started.process.pid]
        return started


def test_a_replica_that_exits_before_it_is_ready_is_named_with_its_log(tmp_path):
    crash = [sys.executable, '-c', 'print("weights not found: /nowhere"); raise SystemExit(3)']
    specs = [*paced_specs(tmp_path, [1000]), ReplicaSpec('broken', crash, {}, 0)]
    recording = Recording(log_dir=tmp_path / 'logs', num_cpus=0.25)
    refused = pytest.raises(
        ReplicaError, match=r'(?s)broken: exited before it was ready.*weights not found'
    )
    with refused, serving(recording, specs, 60):
        pass
    assert all(ended(pid) for pid in recording.pids)  # the healthy one too


def test_the_replicas_are_stopped_on_ctrl_c(tmp_path):
    specs = paced_specs(tmp_path, [1000, 1000])
    with pytest.raises(KeyboardInterrupt), serving(placement(tmp_path), specs, 60) as replicas:
        pids = [replica.process.pid for replica in replicas]
        raise KeyboardInterrupt
    assert all(ended(pid) for pid in pids)


def dispatch_main(folder: str, count: int) -> None:
    """A dispatcher process of its own: two paced replicas it starts, ``count`` requests."""
    folder = Path(folder)
    specs = paced_specs(folder, [1500, 1500])
    with serving(LocalPlacement(log_dir=folder / 'logs', num_cpus=0.25), specs, 60) as replicas:
        dispatch(
            planned([100 + (i * 41) % 300 for i in range(count)]),
            replicas,
            ReplyStore(folder / 'store'),
            800,
            30,
        )


def events(folder: Path, kind: str) -> list[dict]:
    lines = [line for log in folder.glob('r*.jsonl') for line in log_lines(log)]
    return [line for line in lines if line['event'] == kind]


@pytest.mark.slow  # a dispatcher process of its own, twice: seconds of imports
def test_a_killed_dispatcher_resumed_asks_again_only_what_was_in_flight(tmp_path):
    import subprocess

    here = Path(__file__).parent
    env = {
        **os.environ,
        'PYTHONPATH': os.pathsep.join(map(str, [here, here.parent, here.parents[1]])),
    }
    command = [
        sys.executable,
        '-c',
        f'import test_dispatch as t; t.dispatch_main({str(tmp_path)!r}, 40)',
    ]
    first = subprocess.Popen(command, env=env)
    while len(events(tmp_path, 'answered')) < 10:
        assert first.poll() is None
        time.sleep(0.02)
    first.kill()
    first.wait()
    time.sleep(1)  # the replicas die with it (PR_SET_PDEATHSIG)
    assert all(ended(started['pid']) for started in events(tmp_path, 'started'))
    # In flight for the dispatcher: asked and not stored (a reply may be on its way back).
    store = ReplyStore(tmp_path / 'store')
    requests = planned([100 + (i * 41) % 300 for i in range(40)])
    stored = {asked(r) for r in requests if store.answered(r.expected())}
    held = {e['key'] for e in events(tmp_path, 'received')} - stored
    subprocess.run(command, env=env, check=True, timeout=300)
    sent = [e['key'] for e in events(tmp_path, 'received')]
    twice = {key for key in sent if sent.count(key) > 1}
    assert len(set(sent)) == 40 and twice <= held
    assert answered_all(store, requests)


def held_at_kill(replica, log: Path) -> set[str]:
    """SIGKILL a replica's process group; the keys its log shows received and not answered."""
    os.killpg(replica.process.pid, signal.SIGKILL)
    replica.process.wait()
    lines = log_lines(log)
    asked = {x['key'] for x in lines if x['event'] == 'received'}
    return asked - {x['key'] for x in lines if x['event'] == 'answered'}


@pytest.mark.slow  # three kills and restarts: seconds
def test_three_kills_in_one_run_with_restarts_lose_only_what_was_held(tmp_path):
    requests = planned([150 + (i * 29) % 250 for i in range(90)])
    store = ReplyStore(tmp_path / 'store')
    held: list[str] = []  # what each kill caught in flight (a request may be caught twice)
    finished = threading.Event()

    def kill_alternately(replicas) -> None:
        """Three kills, each replica restarted by this thread, which then waits for the end:
        a process started with PR_SET_PDEATHSIG dies with the thread that started it."""
        for victim in (0, 1, 0):
            log = tmp_path / f'r{victim}.jsonl'
            before = len(received(tmp_path).get(f'r{victim}', []))
            while len(received(tmp_path).get(f'r{victim}', [])) < before + 3:
                time.sleep(0.01)
            held.extend(held_at_kill(replicas[victim], log))
            replicas[victim].launch()  # restarted on its port; the dispatcher probes it back
        finished.wait()

    with serving(placement(tmp_path), paced_specs(tmp_path, [4000, 4000]), 60) as replicas:
        killer = threading.Thread(target=kill_alternately, args=(replicas,))
        killer.start()
        try:
            report = dispatch(requests, replicas, store, 1000, 30, reprobe_s=0.2)
        finally:
            finished.set()
            killer.join()
    assert answered_all(store, requests)
    sent = [e['key'] for lines in received(tmp_path).values() for e in lines]
    again = len(sent) - len(set(sent))  # asks beyond the first
    assert 3 <= again <= len(held) and {k for k in sent if sent.count(k) > 1} <= set(held)
    assert report.sent['r0'] > 0 and report.sent['r1'] > 0 and report.dropped == []


@pytest.mark.slow  # waits out a request's deadline and the probes
def test_replicas_that_all_stop_answering_end_the_dispatch_with_an_error(tmp_path):
    started = time.monotonic()
    with serving(placement(tmp_path), paced_specs(tmp_path, [1000, 1000]), 60) as replicas:
        for replica in replicas:
            os.killpg(replica.process.pid, signal.SIGSTOP)
        with pytest.raises(ReplicaError, match=r'(?s)every replica failed.*r0 on .* \(running\)'):
            dispatch(
                planned([100] * 4),
                replicas,
                ReplyStore(tmp_path / 's'),
                500,
                2,
                probe_timeout_s=0.5,
                reprobe_s=0.2,
            )
    assert time.monotonic() - started < 30  # re-probing a stopped replica does not go on for ever


class Failing:
    """A replica on 127.0.0.1 that is healthy and answers every completion with HTTP 500."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int) -> None:
                self.send_response(status)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def do_GET(self):
                self._answer(200)

            def do_POST(self):
                self.rfile.read(int(self.headers['Content-Length']))
                self._answer(500)

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.name, self.node = 'failing', 'localhost'
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/v1'

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        self.server.shutdown()

    def log_tail(self, chars: int = 3000) -> str:
        return ''


def test_a_request_that_always_fails_ends_the_dispatch_naming_it(tmp_path):
    from opencompass_lveval.serving.dispatch import MAX_ATTEMPTS

    replica = Failing()
    try:
        with pytest.raises(ReplicaError, match=rf'#0 failed {MAX_ATTEMPTS} times .*HTTP 500'):
            dispatch(planned([100]), [replica], ReplyStore(tmp_path / 's'), 500, 5)
    finally:
        replica.stop()


# In-process stand-ins (``testing/stand_in``): the dispatcher's rules without servers ----------


def stand_in_dispatch(requests, stand_ins, store, cap, deadline=30, **settings):
    from opencompass_lveval.serving.dispatch import Dispatcher, DispatchSettings, Fixed
    from opencompass_lveval.testing.stand_in import stand_in_transport

    chosen = DispatchSettings(deadline, cap, progress=lambda done, total: None, **settings)
    return Dispatcher(requests, store, Fixed(stand_ins), chosen, stand_in_transport).run()


def test_the_cap_holds_tokens_not_the_ordering_cost(tmp_path):
    """A 128k prompt whose quadratic cost is 2.5 times its tokens fits a 200k-token cache (it
    was refused: the cost was charged against the cap)."""
    from opencompass_lveval.testing.stand_in import PacedStandIn

    sampling = {'temperature': 0, 'max_tokens': 64, 'stop': []}
    long = planned_request('e', [1] * 131072, sampling, '#long', cost=131072 + 349525 + 64)
    short = planned_request('e', [2] * 16000, sampling, '#short')
    store = ReplyStore(tmp_path)
    report = stand_in_dispatch([short, long], [PacedStandIn('r0', 10**9)], store, 200_000)
    assert report.answered == 2 and store.answered(long.expected())


def mangled(kind: str):
    """A stand-in's replies made wrong as a replica's may be (``testing/paced_server``'s kinds)."""
    previous = []

    def reply(answer: dict) -> dict:
        previous.append(answer)
        if kind == 'previous':
            return previous[-2] if len(previous) > 1 else {**answer, 'model': 'm0'}
        if kind == 'other-model':
            return {**answer, 'model': 'another'}
        if kind == 'long':
            return {**answer, 'usage': {**answer['usage'], 'completion_tokens': 3200}}
        if kind == 'two-choices':
            return {**answer, 'choices': answer['choices'] * 2}
        return {**answer, 'choices': []}

    return reply


@pytest.mark.parametrize(
    ('kind', 'said'),
    [
        ('previous', 'it answers another prompt'),
        ('other-model', "names the model 'another'"),
        ('long', '3200 completion tokens, more than max_tokens=8'),
        ('two-choices', 'holds 2 choices'),
        ('no-choices', 'holds 0 choices'),
    ],
)
def test_a_reply_not_of_its_request_is_asked_again_and_its_replica_named(
    tmp_path, caplog, kind, said
):
    from opencompass_lveval.serving.schedule import MAX_FAULTS
    from opencompass_lveval.testing.stand_in import PacedStandIn

    requests = planned([100 + i for i in range(20)])
    wrong, right = PacedStandIn('wrong', 10**8, mangled(kind)), PacedStandIn('right', 10**7)
    store = ReplyStore(tmp_path)
    report = stand_in_dispatch(requests, [wrong, right], store, 400)
    assert report.answered == len(requests) and report.faults == {'wrong': MAX_FAULTS}
    for request in requests:  # every stored reply is the right replica's answer to it
        reply = store.read(request.expected())[0]
        assert reply['replica'] == 'right' and reply['text'] == f'stand-in {request.key[:12]}'
    assert report.dropped == ['wrong']
    assert (
        said in caplog.text and 'wrong: 3 wrong replies, taken out of the rotation' in caplog.text
    )


def test_a_store_that_cannot_be_written_stops_the_stage_at_once(tmp_path):
    from opencompass_lveval.serving.store import ReplyStoreError
    from opencompass_lveval.testing.stand_in import PacedStandIn

    (tmp_path / 'full').write_text('')
    store = ReplyStore(tmp_path / 'full' / 'store')
    started = time.monotonic()
    with pytest.raises(ReplyStoreError, match='cannot be written.*full/store'):
        stand_in_dispatch(planned([100] * 30), [PacedStandIn('r0', 10**6)], store, 400)
    assert time.monotonic() - started < 5
