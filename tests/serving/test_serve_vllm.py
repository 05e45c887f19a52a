"""``ServeOnceRunner`` on real vLLM servers (the CPU build): two replicas of the tiny model, in
float32 and greedy, on a demo-sized LV-Eval and Ada-LEval workload, against the same model run
in process by ``LongContextVLLM`` under the local runner. Run this file alone: each engine holds
gigabytes and the machine's cores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runs import load_config, run_opencompass
from servers import VLLM_ENGINE_KWARGS, VLLM_ENV, VLLM_SIZE, require_vllm

pytestmark = [pytest.mark.slow, pytest.mark.vllm]
KEPT = ('LVEval_factrecall_en_16k', 'LVEval_factrecall_zh_256k', 'LVEval_loogle_SD_mixup_64k')
MEASURED = ('latency_s', 'prefix_cached_tokens', 'transport')  # differ between any two runs
REPO = Path(__file__).resolve().parents[2]


def workload_config(root: Path, model: Path, served: bool) -> Path:
    """The demo-serve config on a few LV-Eval subsets and Ada-LEval's four demo files; served,
    or in process under the local runner (one engine)."""
    cfg = load_config('eval_demo_serve.py')
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in KEPT or 'LVEval' not in d['abbr']]
    cfg.models[0].update(path=str(model), model_kwargs=dict(VLLM_ENGINE_KWARGS))
    if served:
        cfg.infer.runner.update(replicas=2, replica_env=dict(VLLM_ENV), ready_timeout_s=600)
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


def test_predictions_are_those_of_the_engine_in_process(runs):
    in_process, served = (predictions(run) for run in runs)
    assert sorted(in_process) == sorted(served) and len(served) == len(KEPT) + 4
    for name, entries in in_process.items():
        assert sorted(entries) == sorted(served[name])
        for index, entry in entries.items():
            other = served[name][index]
            assert other['usage']['transport'] == 'served'
            for record in (entry['usage'], other['usage']):
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
                entry['usage'].update(latency_s=0, prefix_cached_tokens=None, transport='-')
            path.with_suffix('.normal').write_text(
                json.dumps(entries, indent=4, ensure_ascii=False)
            )
    for path in (runs[0] / 'predictions').rglob('*.normal'):
        twin = runs[1] / path.relative_to(runs[0])
        assert path.read_bytes() == twin.read_bytes()


def test_two_replicas_served_the_stage_within_the_engines_kv_capacity(runs):
    served = runs[1]
    report = json.loads(next((served / 'serve').glob('*.dispatch.json')).read_text())
    assert len(report['sent']) == 2 and all(count > 0 for count in report['sent'].values())
    assert report['requeued'] == 0 and report['dropped'] == []
    logs = list((served / 'logs' / 'serve').rglob('*.log'))
    capacities = set()
    for log in logs:  # the cap came from the engines' own KV capacity
        found = [line for line in log.read_text().splitlines() if 'KV cache size:' in line]
        capacities.add(
            int(found[-1].split('KV cache size:')[1].split('tokens')[0].replace(',', ''))
        )
    assert len(logs) == 2 and report['cap_tokens'] == min(capacities)


def test_no_replica_process_is_left(runs):
    import subprocess

    listed = subprocess.run(['ps', '-eo', 'args'], capture_output=True, text=True).stdout
    assert not [
        line
        for line in listed.splitlines()
        if 'vllm.entrypoints.openai.api_server' in line and str(runs[1].parents[1]) in line
    ]
