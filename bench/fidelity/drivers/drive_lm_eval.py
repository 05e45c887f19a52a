"""The fixed set scored by lm-evaluation-harness's RULER tasks (``lm_eval/tasks/ruler``), as its
``ConfigurableTask`` scores a ``generate_until`` task: each task's YAML (read with lm-eval's own
loader, includes followed) names ``process_results`` and the aggregation of the metric named
after the sample's length; with no ``filter_list`` the filter is ``take_first`` (the only reply);
``process_results(doc, [reply])`` gives ``{"4096": score}`` per sample (``doc`` holds
``max_length`` and ``outputs``, as the task's generated documents do), and the aggregation
averages them. Scores are fractions there; here x100. lm-eval 0.4.13 has no LV-Eval and no MRCR
task, and scores LongBench v2 by log-likelihood, so only RULER is scored.
"""

from __future__ import annotations

import importlib
import os

import lm_eval
from common import run
from lm_eval.tasks._yaml_loader import load_yaml

RULER_DIR = os.path.join(os.path.dirname(lm_eval.__file__), 'tasks', 'ruler')
# RULER task -> its YAML in lm_eval/tasks/ruler (the niah tasks keep their names)
YAML = {'vt': 'vt', 'cwe': 'cwe', 'fwe': 'fwe', 'qa_1': 'qa_squad', 'qa_2': 'qa_hotpot'}


def named_function(spec: str):
    """The function a YAML ``!function`` names (``<folder>/module.function``), imported as
    lm-eval's loader would, without importing the data-generating modules of other tags."""
    module, _, function = os.path.basename(spec).rpartition('.')
    return getattr(importlib.import_module(f'lm_eval.tasks.ruler.{module}'), function)


def ruler(task: dict) -> list[float]:
    name = task['meta'].get('as', task['name'])
    config = load_yaml(os.path.join(RULER_DIR, f'{YAML.get(name, name)}.yaml'), resolve_func=False)
    length = str(task['meta']['length'])
    process_results = named_function(config['process_results'])
    aggregation = next(
        named_function(m['aggregation']) for m in config['metric_list'] if m['metric'] == length
    )
    records = task['parts'][0]['records']
    values = [
        process_results(
            {'max_length': task['meta']['length'], 'outputs': r['outputs']}, [r['pred']]
        )[length]
        for r in records
    ]
    return [100 * aggregation(values)]


if __name__ == '__main__':
    run({'RULER': ruler}, ['lm_eval', 'transformers'])
