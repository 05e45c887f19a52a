"""``ServeOnceRunner`` in whole OpenCompass runs, with paced stand-in replicas in place of vLLM
(``server_argv``): the requests planned before any replica starts are the ones the inferencer's
tasks then look up, each asked once; a resumed run asks nothing answered; settings are refused
when the runner is built."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from runs import load_config, run_opencompass

from opencompass_lveval.files.errors import ModelConfigError
from opencompass_lveval.runner.serve_once import ServeOnceRunner
from opencompass_lveval.testing.paced_server import paced_answer

KEPT = ('LVEval_factrecall_en_16k', 'LVEval_factrecall_zh_256k', 'LVEval_loogle_SD_mixup_64k')
TASK = dict(type='opencompass_lveval.runner.infer_task.LongContextInferTask')


@pytest.mark.parametrize(
    ('settings', 'message'),
    [
        (dict(replica=2), "unknown setting 'replica'; did you mean 'replicas'?"),
        (dict(replicas=0), 'replicas must be a whole number >= 1'),
        (dict(placement='kubernetes'), "placement must be one of ['local', 'ray', 'slurm']"),
        (dict(cap_tokens=1.5), 'cap_tokens must be None'),
        (dict(request_deadline_s=0), 'request_deadline_s must be a number of seconds > 0'),
        (dict(cost_model='cubic'), "cost_model must be one of ('linear', 'quadratic')"),
        (dict(replica_env={'A': 1}), 'replica_env must be a dict of str to str'),
    ],
)
def test_settings_are_refused_when_the_runner_is_built(settings, message):
    with pytest.raises(ModelConfigError, match=f'^ServeOnceRunner: {re.escape(message)}'):
        ServeOnceRunner(task=TASK, **settings)


def served_config(root: Path, model: Path, replicas: int = 2) -> Path:
    """The demo-serve config (its data in ``root``/data/demo), the paced server standing in for
    vLLM."""
    cfg = load_config('eval_demo_serve.py')
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in KEPT or 'LVEval' not in d['abbr']]
    cfg.models[0]['path'] = str(model)
    paced = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port', '{port}']
    paced += ['--tokens-per-s', '200000', '--log', str(root / 'paced-{port}.jsonl')]
    runner = cfg.infer.runner
    runner.update(
        replicas=replicas,
        server_argv=paced,
        cap_tokens=20000,
        ready_timeout_s=60,
        placement_settings=dict(num_cpus=0.5),
        plan_workers=2,
    )
    path = root / 'config.py'
    cfg.dump(str(path))
    return path


def received(root: Path) -> list[dict]:
    lines = [
        json.loads(x) for log in root.glob('paced-*.jsonl') for x in log.read_text().splitlines()
    ]
    return [line for line in lines if line['event'] == 'received']


@pytest.mark.slow
def test_predictions_are_the_replies_to_the_planned_requests_each_asked_once(tmp_path, monkeypatch):
    from mmengine.config import Config

    from opencompass_lveval.cli import main
    from opencompass_lveval.serving.plan import RenderedPair
    from opencompass_lveval.serving.request import engine_identity, served_model_name
    from opencompass_lveval.testing import save_tiny_llama

    monkeypatch.chdir(tmp_path)  # the demo's datasets read data/demo
    assert main(['data', 'synth', 'data/demo', '--count', '2']) == 0
    model = save_tiny_llama(tmp_path / 'tiny', 4096)
    config = served_config(tmp_path, model)
    env = {'PYTHONPATH': str(Path(__file__).parents[2])}
    run_opencompass(config, tmp_path, env, '-m', 'infer')
    run = sorted((tmp_path / 'out').iterdir())[-1]
    cfg = Config.fromfile(str(config), format_python_code=False)
    model_cfg, runner = cfg.models[0], cfg.infer.runner
    served = served_model_name(engine_identity(model_cfg, runner.server_argv))
    planned = 0
    for dataset_cfg in cfg.datasets:
        path = run / 'predictions' / model_cfg['abbr'] / f'{dataset_cfg["abbr"]}.json'
        predictions = json.loads(path.read_text())
        meta, records = RenderedPair(model_cfg, dataset_cfg).open()
        bodies = [{'model': served, 'prompt': b.ids, **meta['sampling']} for _, b in records]
        assert len(predictions) == len(bodies) > 0
        for index, body in enumerate(bodies):
            entry = predictions[str(index)]
            assert entry['prediction'] == paced_answer(body)
            assert entry['usage']['transport'] == 'served'
            assert entry['usage']['prompt_tokens'] == len(body['prompt'])
        planned += len(bodies)
    keys = [line['key'] for line in received(tmp_path)]
    assert len(keys) == len(set(keys)) == planned  # every request asked once
    report = json.loads((run / 'serve' / f'{model_cfg["abbr"]}.dispatch.json').read_text())
    assert report['answered'] == planned and sum(report['sent'].values()) == planned
    # A resumed run whose prediction files are gone writes them again, byte for byte, from the
    # replies: nothing is asked again.
    files = (run / 'predictions').rglob('*.json')
    before = {p: p.read_bytes() for p in files if not p.name.endswith('.inference.json')}
    assert len(before) == len(cfg.datasets) == len(KEPT) + 4  # and Ada-LEval's four
    for path in before:
        path.unlink()
    run_opencompass(config, tmp_path, env, '-m', 'infer', '-r')
    assert {p: p.read_bytes() for p in before} == before
    assert len(received(tmp_path)) == planned
