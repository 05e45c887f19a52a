"""RULER in runs, each model with data of its own tokenizer: the driver's partitioner builds what
is missing once, before any task (a model sharing a tokenizer builds nothing more), and pairs
each model with its own cells; ``lveval inputs --count-only`` counts them in the model's tokens;
ServeOnceRunner's plan takes them as they are; the conformance kit passes."""

from __future__ import annotations

import re

import pytest
from ruler_files import LLAMA2_SP

from opencompass_lveval.framework.benchmarks import named

pytestmark = pytest.mark.slow
TASKS = ['niah_single_1', 'vt', 'fwe']
VLLM = 'opencompass_lveval.models.vllm.LongContextVLLM'


def tiny_model(abbr: str, folder, window: int) -> dict:
    return dict(
        type=VLLM,
        abbr=abbr,
        path=str(folder),
        max_seq_len=window,
        max_out_len=32,
        batch_size=8,
        model_kwargs=dict(dtype='float32', enforce_eager=True),
        run_cfg=dict(num_gpus=0),
    )


def test_each_models_data_is_built_once_before_any_task_and_read_as_the_run_pairs_it(
    tmp_path, inputs, capsys
):
    from mmengine.config import Config
    from transformers import AutoTokenizer

    from opencompass_lveval.cli import main
    from opencompass_lveval.ruler.tokens import tokenizer_fingerprint
    from opencompass_lveval.runner.prelaunch import CheckedPartitioner
    from opencompass_lveval.serving.plan import RenderedPair
    from opencompass_lveval.testing import save_tiny_llama

    # Llama-2's tokenizer: with the small trained one not even vt's one-shot example fits in its
    # 500 tokens (the official generator would loop forever; here the build stops and says so)
    folder = save_tiny_llama(tmp_path / 'tiny', 4096, AutoTokenizer.from_pretrained(LLAMA2_SP))
    # two models of one tokenizer, the second's window too small for 4k
    models = [tiny_model('tiny-a', folder, 4096), tiny_model('tiny-b', folder, 2048)]
    ruler, data = named('ruler'), tmp_path / 'data'
    datasets, combinations = ruler.model_configs(
        models, sizes=['2k', '4k'], tasks=TASKS, path=str(data), count=3, inputs=str(inputs)
    )
    runner = dict(type='opencompass_lveval.runner.local.CheckedLocalRunner')
    cfg = Config(
        dict(
            models=models,
            datasets=datasets,
            model_dataset_combinations=combinations,
            work_dir=str(tmp_path / 'run'),
            infer=dict(runner=runner),
        )
    )
    partitioner = CheckedPartitioner(out_dir=str(tmp_path / 'run' / 'predictions'), num_worker=1)
    capsys.readouterr()
    tasks = partitioner(cfg)
    built = [line for line in capsys.readouterr().out.splitlines() if line.startswith('built ')]
    assert len(built) == 6  # 3 tasks at 2k and 4k: tiny-b's 2k cells are tiny-a's
    own = data / f'{tokenizer_fingerprint(folder)[:16]}-base-seed42-n3'
    assert sorted(p.relative_to(own).parts[:2] for p in own.rglob('validation.jsonl')) == sorted(
        (str(n), t) for n in (2048, 4096) for t in TASKS
    )
    paired = {t['models'][0]['abbr']: [d['abbr'] for d in t['datasets'][0]] for t in tasks}
    assert paired == {
        'tiny-a': [f'RULER_{t}_{s}' for t in TASKS for s in ('2k', '4k')],
        'tiny-b': [f'RULER_{t}_2k' for t in TASKS],
    }
    partitioner(cfg)  # a second run builds nothing
    assert 'built ' not in capsys.readouterr().out

    path = tmp_path / 'eval_ruler_tiny.py'
    cfg.dump(str(path))
    assert main(['inputs', str(path), '--count-only']) == 0
    printed = capsys.readouterr().out
    counted = re.findall(r'  RULER_(\w+)_(\d)k: 3 records, (\d+)-(\d+) prompt tokens', printed)
    assert len(counted) == 9  # tiny-a's six cells, tiny-b's three
    for task, size, _, longest in counted:  # the budget, and the chat template's few tokens
        assert int(longest) <= int(size) * 1024 - ruler.answer_tokens(task) + 16

    planned = []  # (prompt ids, answer tokens) of each request serving would plan
    for dataset_cfg in combinations[0]['datasets']:
        meta, records = RenderedPair(models[0], dataset_cfg).open()
        planned += [(built.ids, meta['sampling']['max_tokens']) for _, built in records]
    assert len(planned) == 6 * 3
    assert sorted({answer for _, answer in planned}) == [30, 50, 128]
    assert all(len(ids) + answer <= 4096 for ids, answer in planned)


def test_ruler_passes_the_conformance_kit(tmp_path):
    from opencompass_lveval.testing import check_benchmark

    warnings = check_benchmark('ruler', tmp_path)
    assert warnings == []
