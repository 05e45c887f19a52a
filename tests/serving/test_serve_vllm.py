"""``ServeOnceRunner`` on real vLLM servers (the CPU build): two replicas of the tiny model, in
float32 and greedy, on a demo-sized LV-Eval and Ada-LEval workload, an MRCR conversation and
LongBench v2's chain of thought (two calls, the second served once the first reply is stored),
against the same model run in process by ``LongContextVLLM`` under the local runner. Run this
file alone: each engine holds gigabytes and the machine's cores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from runs import load_config, run_opencompass
from servers import VLLM_ENGINE_KWARGS, VLLM_ENV, VLLM_SIZE, require_vllm

pytestmark = [pytest.mark.slow, pytest.mark.vllm]
KEPT = ('LVEval_factrecall_en_16k', 'LVEval_factrecall_zh_256k', 'LVEval_loogle_SD_mixup_64k')
CONVERSATIONS = ('MRCR_openai_2needle_8k', 'LongBenchV2_cot_short')  # chat messages; two calls
MEASURED = ('latency_s', 'prefix_cached_tokens', 'transport')  # differ between any two runs
REPO = Path(__file__).resolve().parents[2]


def workload_config(root: Path, model: Path, served: bool) -> Path:
    """The demo-serve config on a few LV-Eval subsets, Ada-LEval's four demo files, an MRCR
    conversation and LongBench v2's short chain of thought; served, or in process under the
    local runner (one engine)."""
    cfg = load_config('eval_demo_serve.py')
    cfg.datasets = [
        d for d in cfg.datasets
        if d['abbr'] in KEPT + CONVERSATIONS or 'AdaLEval' in d['abbr']
    ]  # fmt: skip
    for dataset in cfg.datasets:  # read from anywhere: the fault tests plan in this process
        dataset['path'] = str(root / dataset['path'])
    cfg.models[0].update(path=str(model), model_kwargs=dict(VLLM_ENGINE_KWARGS))
    if served:
        # quorum=2: both loaded before the first request, so both serve; with quorum 1 the
        # first ready holds this whole small stage within its KV capacity
        cfg.infer.runner.update(
            replicas=2, quorum=2, replica_env=dict(VLLM_ENV), ready_timeout_s=600
        )
    else:
        cfg.infer.partitioner = dict(type='NumWorkerPartitioner', num_worker=1)
        cfg.infer.runner = dict(
            type='opencompass_lveval.runner.local.CheckedLocalRunner',
            max_num_workers=1,
            task=cfg.infer.runner.task,
        )
    path = root / ('served.py' if served else 'in_process.py')
    cfg.dump(str(path))
    return path


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """(the in-process run's folder, the served run's folder)."""
    require_vllm()
    from opencompass_lveval.cli import main
    from opencompass_lveval.testing import save_tiny_llama

    root = tmp_path_factory.mktemp('serve_vllm')
    assert main(['data', 'synth', str(root / 'data' / 'demo'), '--count', '2']) == 0
    model = save_tiny_llama(root / 'tiny', 4096, **VLLM_SIZE)
    env = {**VLLM_ENV, 'HF_HUB_OFFLINE': '1', 'PYTHONPATH': str(REPO)}
    folders = []
    for served in (False, True):
        work = 'served' if served else 'in_process'
        run_opencompass(workload_config(root, model, served), root, env, '-m', 'infer', work=work)
        folders.append(sorted((root / work).iterdir())[-1])
    return folders


def predictions(run: Path) -> dict[str, dict]:
    files = (run / 'predictions').rglob('*.json')
    return {p.name: json.loads(p.read_text()) for p in files if '.inference.' not in p.name}


def usage_records(entry: dict) -> list[dict]:
    """A prediction's usage record and, for a two-call answer, each call's."""
    return [entry['usage'], *entry['usage'].get('calls', [])]


def test_predictions_are_those_of_the_engine_in_process(runs):
    in_process, served = (predictions(run) for run in runs)
    assert sorted(in_process) == sorted(served)
    assert len(served) == len(KEPT) + 4 + len(CONVERSATIONS)
    cot = served['LongBenchV2_cot_short.json']
    assert [entry['answer_prompt'] is not None for entry in cot.values()].count(True) > 0
    for name, entries in in_process.items():
        assert sorted(entries) == sorted(served[name])
        for index, entry in entries.items():
            other = served[name][index]
            assert {r['transport'] for r in usage_records(other)} == {'served'}
            for record in usage_records(entry) + usage_records(other):
                for field in MEASURED:
                    record.pop(field)
            assert other == entry, f'{name} #{index}'
    # The files differ in nothing else: the bytes, those fields set alike, are the same.
    for run in runs:
        for path in (run / 'predictions').rglob('*.json'):
            if '.inference.' in path.name:
                continue
            entries = json.loads(path.read_text())
            for entry in entries.values():
                for record in usage_records(entry):
                    record.update(latency_s=0, prefix_cached_tokens=None, transport='-')
            path.with_suffix('.normal').write_text(
                json.dumps(entries, indent=4, ensure_ascii=False)
            )
    for path in (runs[0] / 'predictions').rglob('*.normal'):
        twin = runs[1] / path.relative_to(runs[0])
        assert path.read_bytes() == twin.read_bytes()


def test_two_replicas_served_the_stage_within_the_engines_kv_capacity(runs):
    served = runs[1]
    report = json.loads((served / 'serve' / 'tiny-llama-vllm.dispatch.json').read_text())
    assert len(report['sent']) == 2 and all(count > 0 for count in report['sent'].values())
    assert report['requeued'] == 0 and report['dropped'] == []
    logs = sorted((served / 'logs' / 'serve').rglob('*.log'))
    capacities = {}
    for log in logs:  # each replica's room came from its own engine's KV capacity
        found = [line for line in log.read_text().splitlines() if 'KV cache size:' in line]
        size = found[-1].split('KV cache size:')[1].split('tokens')[0]
        capacities[log.stem] = int(size.replace(',', ''))
    assert len(logs) == 2 and report['caps'] == capacities


def replica_processes(root: Path) -> list[str]:
    """vLLM servers of the model under ``root`` still running (not zombies)."""
    import subprocess

    listed = subprocess.run(['ps', '-eo', 'stat,args'], capture_output=True, text=True).stdout
    return [
        line
        for line in listed.splitlines()
        if 'vllm.entrypoints.openai.api_server' in line
        and str(root) in line
        and not line.startswith('Z')
    ]


def test_no_replica_process_is_left(runs):
    assert not replica_processes(runs[1].parents[1])


class Reached:
    """A replica started elsewhere, reached by its URL (for a dispatcher of another process)."""

    def __init__(self, name: str, url: str) -> None:
        self.name, self.url, self.node = name, url, 'localhost'

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        pass

    def log_tail(self, chars: int = 3000) -> str:
        return ''


def fault_cap(requests: list) -> int:
    """Room for the two longest requests at once on each replica: several in flight to lose."""
    return 2 * max(request.cost for request in requests)


def engine_of(model_cfg: dict) -> str:
    """The engine identity the runner gave the served run (its replica_env: VLLM_ENV)."""
    from opencompass_lveval.serving.request import engine_identity

    return engine_identity(model_cfg, None, dict(VLLM_ENV))


def planned_stage(config: Path, folder: Path) -> list:
    """The served run's requests of its LV-Eval and Ada-LEval datasets, planned into ``folder``
    as the runner plans them."""
    from mmengine.config import Config

    from opencompass_lveval.serving.plan import (
        PairJob,
        RenderedPair,
        config_digest,
        plan_stage,
        planned_requests,
    )
    from opencompass_lveval.serving.request import served_model_name

    cfg = Config.fromfile(str(config), format_python_code=False)
    model_cfg, engine = cfg.models[0], engine_of(cfg.models[0])
    jobs = [
        PairJob(RenderedPair(model_cfg, d), str(folder), config_digest(d), engine)
        for d in cfg.datasets
        if d['abbr'] not in CONVERSATIONS
    ]
    plan_stage(jobs)
    return planned_requests([str(folder)], served_model_name(engine))


def dispatch_to(config: str, store: str, names_and_urls: list) -> None:
    """A dispatcher process of its own, to replicas this test holds."""
    from opencompass_lveval.serving.dispatch import dispatch
    from opencompass_lveval.serving.store import ReplyStore

    replicas = [Reached(name, url) for name, url in names_and_urls]
    requests = planned_stage(Path(config), Path(store + '-plan'))
    dispatch(requests, replicas, ReplyStore(store), fault_cap(requests), 120)


@pytest.fixture(scope='module')
def pair(runs):
    """Two replicas of the tiny model that log each request received and answered, with the
    planned stage and the undisturbed run's replies."""
    from mmengine.config import Config

    from opencompass_lveval.serving.placement.local import LocalPlacement
    from opencompass_lveval.serving.replicas import replica_specs, serving
    from opencompass_lveval.serving.request import served_model_name
    from opencompass_lveval.serving.store import ReplyStore

    config = runs[1].parents[1] / 'served.py'
    model_cfg = Config.fromfile(str(config), format_python_code=False).models[0]
    identity = engine_of(model_cfg)
    specs = replica_specs(
        model_cfg,
        served_model_name(identity),
        2,
        {**VLLM_ENV, 'HF_HUB_OFFLINE': '1'},
        use_gpus=False,
    )
    specs = [type(s)(s.name, [*s.argv, '--enable-log-requests'], s.env, 0) for s in specs]
    folder = runs[1].parents[1] / 'faults'
    with serving(LocalPlacement(log_dir=folder / 'logs'), specs, 900) as replicas:
        undisturbed = ReplyStore(runs[1] / 'serve' / 'replies' / identity)
        yield config, planned_stage(config, folder / 'plan'), replicas, undisturbed, folder
    assert not replica_processes(runs[1].parents[1])  # every replica ended, killed ones too


def counts(replica) -> tuple[int, int]:
    """(requests received, requests answered) as the replica's own log says: vLLM's request log
    (``--enable-log-requests``) and its access log."""
    text = replica.log.read_text(errors='replace')
    return text.count('Received request'), text.count('"POST /v1/completions HTTP/1.1" 200')


def text(store, request) -> str:
    reply, problem = store.read(request.expected())
    assert reply is not None, problem
    return reply['text']


def same_replies(requests, store, undisturbed) -> bool:
    return all(text(store, r) == text(undisturbed, r) for r in requests)


def test_a_killed_dispatcher_resumed_gives_the_undisturbed_replies(pair):
    import os
    import signal
    import subprocess
    import time

    from opencompass_lveval.serving.store import ReplyStore

    config, requests, replicas, undisturbed, folder = pair
    store = folder / 'resumed'
    before = [counts(r) for r in replicas]
    here = Path(__file__).parent
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(here), str(here.parent), str(REPO)])}
    targets = [(r.name, r.url) for r in replicas]
    call = (
        f'import test_serve_vllm as t; t.dispatch_to({str(config)!r}, {str(store)!r}, {targets!r})'
    )
    first = subprocess.Popen([sys.executable, '-c', call], env=env)
    while sum(counts(r)[1] - b[1] for r, b in zip(replicas, before)) < 5:
        assert first.poll() is None
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    # In flight for the dispatcher: received by a replica and not stored (an answer may have
    # been on its way back).
    stored = sum(ReplyStore(store).answered(r.expected()) for r in requests)
    in_flight = sum(counts(r)[0] - b[0] for r, b in zip(replicas, before)) - stored
    subprocess.run([sys.executable, '-c', call], env=env, check=True, timeout=900)
    asked = sum(counts(r)[0] - b[0] for r, b in zip(replicas, before))
    assert same_replies(requests, ReplyStore(store), undisturbed)
    assert 0 <= asked - len(requests) <= in_flight


def test_a_replica_killed_mid_run_gives_the_undisturbed_replies(pair):
    import os
    import signal
    import threading
    import time

    from opencompass_lveval.serving.dispatch import dispatch
    from opencompass_lveval.serving.store import ReplyStore

    config, requests, replicas, undisturbed, folder = pair
    store = ReplyStore(folder / 'killed')
    before = [counts(r) for r in replicas]
    caught = []

    def kill_r0() -> None:
        while counts(replicas[0])[1] - before[0][1] < 3:
            time.sleep(0.05)
        os.killpg(replicas[0].process.pid, signal.SIGKILL)
        received, generated = counts(replicas[0])
        caught.append((received - before[0][0]) - (generated - before[0][1]))

    killer = threading.Thread(target=kill_r0)
    killer.start()
    report = dispatch(requests, replicas, store, fault_cap(requests), 120, reprobe_s=1)
    killer.join()
    asked = sum(counts(r)[0] - b[0] for r, b in zip(replicas, before))
    assert same_replies(requests, store, undisturbed)
    assert report.dropped == [replicas[0].name] and 0 <= asked - len(requests) <= caught[0]


def test_a_replica_that_stops_answering_gives_the_undisturbed_replies(pair):
    """After the kill above: the killed replica restarted on its port, the other one stopped
    (SIGSTOP) mid-run: its requests pass their deadline and go to the restarted one."""
    import os
    import signal
    import threading
    import time

    from opencompass_lveval.serving.dispatch import dispatch
    from opencompass_lveval.serving.placement import healthy
    from opencompass_lveval.serving.store import ReplyStore

    config, requests, replicas, undisturbed, folder = pair
    replicas[0].launch()
    deadline = time.monotonic() + 900
    while not healthy(replicas[0].url, 2) and time.monotonic() < deadline:
        time.sleep(0.5)
    store = ReplyStore(folder / 'stopped')
    before = [counts(r) for r in replicas]
    caught = []

    def stop_r1() -> None:
        while counts(replicas[1])[1] - before[1][1] < 2:
            time.sleep(0.05)
        os.killpg(replicas[1].process.pid, signal.SIGSTOP)
        by_r1 = sum(
            (store.read(r.expected())[0] or {}).get('replica') == replicas[1].name for r in requests
        )
        caught.append(counts(replicas[1])[0] - before[1][0] - by_r1)

    stopper = threading.Thread(target=stop_r1)
    stopper.start()
    report = dispatch(requests, replicas, store, fault_cap(requests), 20, probe_timeout_s=5)
    stopper.join()
    asked = sum(counts(r)[0] - b[0] for r, b in zip(replicas, before))
    assert same_replies(requests, store, undisturbed)
    # The stopped replica logged only what it read before it stopped; what it never read was
    # asked again without showing there.
    assert report.dropped == [replicas[1].name] and report.requeued >= 1
    assert 0 <= asked - len(requests) <= caught[0]
