"""Scoring a finished run again with the LLM judge, without inference.

OpenCompass's eval stage skips every dataset whose result file exists, so on a finished work
folder it would do nothing. ``JudgePartitioner`` and ``JudgeEvalTask`` count a result as done only
when it holds the keys of the judge the dataset's evaluator names (``judge``, whose settings digest
is this judge's): keyword-only results are scored again (the keyword keys come out unchanged, the
judge's are added), and so are results of another judge, even one under the same name, or of a
judge from before results named their judge's settings; results of this judge are left alone, so
a killed judge run resumes where it stopped (and the judge's own cache spares the samples it had
rated). Result files are written atomically.
"""

from __future__ import annotations

import argparse
import copy
import json
import os.path as osp
import time
from pathlib import Path
from typing import Optional

from mmengine.config import Config
from opencompass.partitioners import NaivePartitioner
from opencompass.registry import PARTITIONERS, TASKS
from opencompass.tasks import openicl_eval
from opencompass.tasks.openicl_eval import OpenICLEvalTask
from opencompass.utils import get_infer_output_path

from opencompass_lveval.evaluators.judge import (
    GPT4_0613_JUDGE,
    MAX_OUT_LEN,
    judge_settings,
    settings_digest,
)
from opencompass_lveval.files.atomic import atomic_open

JUDGED = 'judge'  # the key LVEvalJudgeEvaluator adds to a result


def judge_of(dataset_cfg) -> str:
    """The settings digest of the judge a dataset's evaluator names (the paper's where it names
    none), as ``LVEvalJudgeEvaluator`` builds it."""
    evaluator = (dataset_cfg.get('eval_cfg') or {}).get('evaluator') or {}
    config = evaluator.get('judge')
    config = dict(config) if config is not None else GPT4_0613_JUDGE
    return settings_digest(judge_settings(config, evaluator.get('max_out_len', MAX_OUT_LEN)))


def judged(path: str | Path, digest: Optional[str] = None) -> bool:
    """Whether a result file exists and holds the keys of the judge with settings ``digest``
    (every replica's, where OpenCompass keeps one per replica; any judge's where None)."""
    try:
        result = json.loads(Path(path).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return False
    found = result.get(JUDGED) if isinstance(result, dict) else None
    replicas = found if isinstance(found, list) else [found]
    return bool(replicas) and all(
        isinstance(r, dict) and digest in (None, r.get('settings_digest')) for r in replicas
    )


@PARTITIONERS.register_module()
class JudgePartitioner(NaivePartitioner):
    """``NaivePartitioner`` (``n`` datasets per task) that keeps every dataset whose result is
    not judged yet, where OpenCompass's keeps only those without a result."""

    def partition(self, model_dataset_combinations, work_dir, out_dir, add_cfg={}):  # noqa: B006
        tasks = []
        for combination in model_dataset_combinations:
            for model in combination['models']:
                chunks = [
                    dataset
                    for dataset in combination['datasets']
                    if not judged(get_infer_output_path(model, dataset, out_dir), judge_of(dataset))
                ]
                for start in range(0, len(chunks), self.n):
                    tasks.append(
                        Config(
                            {
                                'models': [model],
                                'datasets': [chunks[start : start + self.n]],
                                'work_dir': work_dir,
                                **add_cfg,
                            }
                        )
                    )
        return tasks


@TASKS.register_module()
class JudgeEvalTask(OpenICLEvalTask):
    """``OpenICLEvalTask`` that scores again every dataset whose result is not judged yet."""

    def get_command(self, cfg_path: str, template: str) -> str:
        return super().get_command(cfg_path, template).replace(openicl_eval.__file__, __file__)

    def run(self):
        for model_cfg, dataset_cfgs in zip(self.model_cfgs, self.dataset_cfgs):
            for dataset_cfg in dataset_cfgs:
                self.model_cfg, self.dataset_cfg = model_cfg, dataset_cfg
                self.eval_cfg = copy.deepcopy(dataset_cfg.get('eval_cfg'))
                self.output_column = copy.deepcopy(dataset_cfg['reader_cfg']['output_column'])
                out_path = get_infer_output_path(
                    model_cfg, dataset_cfg, osp.join(self.work_dir, 'results')
                )
                if not judged(out_path, judge_of(dataset_cfg)):
                    self._score()

    def _save_results(self, result):
        out_path = get_infer_output_path(
            self.model_cfg, self.dataset_cfg, osp.join(self.work_dir, 'results')
        )
        with atomic_open(out_path) as stream:
            json.dump(result, stream, ensure_ascii=False, indent=4, default=_plain)


def _plain(value):
    """numpy numbers (OpenCompass averages replicas with numpy) as Python numbers."""
    if hasattr(value, 'item'):
        return value.item()
    raise TypeError(f'{type(value).__name__} is not JSON serialisable')


if __name__ == '__main__':
    from opencompass.utils import get_logger

    parser = argparse.ArgumentParser(description='Score predictions again with the LLM judge')
    parser.add_argument('config', help='Config file path')
    start = time.time()
    JudgeEvalTask(Config.fromfile(parser.parse_args().config)).run()
    get_logger().info(f'time elapsed: {time.time() - start:.2f}s')
