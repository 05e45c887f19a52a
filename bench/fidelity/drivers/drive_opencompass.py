"""The fixed set scored by OpenCompass 0.5.4 as its eval task scores a dataset
(``tasks/openicl_eval.py``, ``OpenICLEvalTask._score``): the dataset config shipped in
``opencompass/configs/datasets`` gives the dataset class, the reader's output column, the
``pred_postprocessor`` and the evaluator; ``build_dataset_from_cfg(cfg).test`` builds the test
set (the class's ``load``, then ``BaseDataset``'s ``subdivision`` and ``idx`` columns), where the
loader's Hugging Face ``load_dataset`` returns the fixed records instead of downloading them
(RULER's ``load``, which generates data with a tokenizer, returns them itself; LongBench v2's reads
them from a JSON-lines file); the predictions file holds ``origin_prompt``, ``prediction`` and
``gold`` (GenInferencer's fields); each prediction goes through the postprocessor; then
``evaluator.evaluate(1, 1, test_set, **the score() arguments)``. A dataset's score is the first
number of the result, the metric OpenCompass's summary shows. No config here sets a
``dataset_postprocessor`` or a model-side postprocessor, and API models skip ``pred_role``.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import sys
import tempfile
from inspect import signature

import opencompass
from common import run
from datasets import Dataset, DatasetDict
from mmengine.config import Config
from opencompass.registry import ICL_EVALUATORS, TEXT_POSTPROCESSORS
from opencompass.utils import build_dataset_from_cfg

CONFIGS = os.path.join(os.path.dirname(opencompass.__file__), 'configs', 'datasets')
# RULER tasks whose abbr in configs/datasets/ruler/ruler_4k_gen.py is not ruler_<task>_4k
RULER_ABBR = {'qa_1': 'ruler_qa_squad', 'qa_2': 'ruler_qa_hotpotqa'}


@functools.cache
def datasets_of(config: str, variable: str) -> dict:
    """A shipped dataset config's datasets, by abbr."""
    return {d['abbr']: d for d in Config.fromfile(os.path.join(CONFIGS, config))[variable]}


def test_set_of(dataset_cfg: dict, rows, whole_load: bool = False) -> Dataset:
    """``build_dataset_from_cfg(cfg).test`` with the loader's ``load_dataset`` returning
    ``rows`` (or, ``whole_load``, the class's ``load`` returning them)."""
    loader = dataset_cfg['type']
    owner, name = (
        (loader, 'load') if whole_load else (sys.modules[loader.__module__], 'load_dataset')
    )
    original = owner.__dict__[name]
    setattr(
        owner,
        name,
        staticmethod(lambda *args, **kwargs: rows)
        if whole_load
        else (lambda *args, **kwargs: rows),
    )
    try:
        return build_dataset_from_cfg(dataset_cfg).test
    finally:
        setattr(owner, name, original)


def evaluated(dataset_cfg: dict, predictions: list, test_set: Dataset) -> float:
    """OpenICLEvalTask's ``_process_predictions`` and ``_evaluate_predictions``."""
    eval_cfg = dataset_cfg['eval_cfg']
    output_column = dataset_cfg['reader_cfg']['output_column']
    golds = test_set[output_column]
    pred_dicts = [
        {'origin_prompt': None, 'prediction': p, 'gold': g} for p, g in zip(predictions, golds)
    ]
    if 'pred_postprocessor' in eval_cfg:
        kwargs = copy.deepcopy(eval_cfg['pred_postprocessor'])
        proc = kwargs.pop('type')
        proc = TEXT_POSTPROCESSORS.get(proc) if isinstance(proc, str) else proc
        predictions = [proc(prediction, **kwargs) for prediction in predictions]
    kwargs = copy.deepcopy(eval_cfg['evaluator'])
    evaluator_type = kwargs.pop('type')
    if isinstance(evaluator_type, str):
        evaluator_type = ICL_EVALUATORS.get(evaluator_type)
    evaluator = evaluator_type(**kwargs)
    preds = {k: [d[k] for d in pred_dicts] for k in pred_dicts[0]}
    preds.update(predictions=predictions, references=golds, test_set=test_set)
    preds = {k: preds[k] for k in signature(evaluator.score).parameters}
    result = evaluator.evaluate(1, 1, copy.deepcopy(test_set), **preds)
    return next(v for k, v in result.items() if k != 'details' and isinstance(v, (int, float)))


def ruler(task: dict) -> list[float]:
    configs = datasets_of('ruler/ruler_4k_gen.py', 'ruler_datasets')
    name = task['meta'].get('as', task['name'])
    abbr = RULER_ABBR.get(name, f'ruler_{name}')
    records = task['parts'][0]['records']
    rows = Dataset.from_list([{'prompt': '', 'answer': r['outputs']} for r in records])
    test_set = test_set_of(configs[abbr + '_4k'], rows, whole_load=True)
    return [evaluated(configs[abbr + '_4k'], [r['pred'] for r in records], test_set)]


def lveval(task: dict) -> list[float]:
    configs = datasets_of('lveval/lveval.py', 'LVEval_datasets')
    scores = []
    for part in task['parts']:
        config = configs[f'LVEval_{part["name"]}']
        rows = [
            {
                'input': '',
                'context': '',
                'answers': r['answers'],
                'confusing_facts': [],
                'answer_keywords': r['gold_ans'],
            }
            for r in part['records']
        ]
        test_set = test_set_of(config, DatasetDict({'test': Dataset.from_list(rows)}))
        try:
            scores.append(evaluated(config, [r['pred'] for r in part['records']], test_set))
        except Exception as exc:  # name the level that stopped the dataset
            raise RuntimeError(f'{part["name"]}: {type(exc).__name__}: {exc}') from exc
    return scores


def longbench_v2(task: dict) -> list[float]:
    config = datasets_of('longbenchv2/longbenchv2_gen.py', 'LongBenchv2_datasets')['LongBenchv2']
    records = task['parts'][0]['records']
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, 'data.jsonl')
        with open(path, 'w', encoding='utf-8') as stream:
            for r in records:
                kept = {k: v for k, v in r.items() if k not in ('replies', 'reply')}
                stream.write(json.dumps(kept) + '\n')
        test_set = build_dataset_from_cfg({**config, 'path': path}).test
        return [evaluated(config, [r['reply'] for r in records], test_set)]


def mrcr(task: dict) -> list[float] | None:
    if task['name'] != 'mrcr_v2':
        return None  # OpenCompass 0.5.4 has MRCR v2 only
    config = next(
        iter(datasets_of('mrcr/mrcr_v2_8k_rawprompt_gen.py', 'mrcr_8k_datasets').values())
    )
    records = task['parts'][0]['records']
    rows = [{'context': '', 'question': r['question'], 'answers': [r['target']]} for r in records]
    test_set = test_set_of(config, rows)
    return [evaluated(config, [r['prediction'] for r in records], test_set)]


if __name__ == '__main__':
    run(
        {'RULER': ruler, 'LV-Eval': lveval, 'LongBench v2': longbench_v2, 'MRCR': mrcr},
        ['opencompass', 'datasets', 'jieba', 'rouge'],
    )
