"""The fixed set scored by this package's functions, each family as its official scorer runs:
RULER's post-processing and task metric, LV-Eval's per-file metric and subset score, LongBench
v2's result lines in ``official`` mode (an empty reply drops the record) and result.py's Overall
cell, ``extract_answer`` for the extraction cases, and the two MRCR graders."""

from __future__ import annotations

from opencompass_lveval.longbench_v2.extraction import extract_answer
from opencompass_lveval.longbench_v2.metrics import row_cells
from opencompass_lveval.longbench_v2.results import result_line
from opencompass_lveval.longbench_v2.tasks import setting_named
from opencompass_lveval.lveval.metrics import judge_all, subset_score
from opencompass_lveval.lveval.tasks import split_subset
from opencompass_lveval.mrcr.metrics import gdm_mrcr_v2_metric, openai_mrcr_grade
from opencompass_lveval.ruler.metrics import METRICS, postprocess_pred

from .fixed import EXTRACTION, LONGBENCH_V2, LVEVAL, MRCR, MRCR_V2, RULER, Part, Task


def _ruler(task: Task, part: Part) -> float:
    predictions = [postprocess_pred(record['pred']) for record in part.records]
    return METRICS[task.meta['metric']](predictions, [r['outputs'] for r in part.records])


def _lveval(task: Task, part: Part) -> float:
    dataset, _ = split_subset(part.name)
    judgements = judge_all(
        dataset.metric,
        [record['pred'] for record in part.records],
        [record['answers'] for record in part.records],
        [record['gold_ans'] for record in part.records],
    )
    return subset_score([judgement.score for judgement in judgements])


def _longbench_v2(task: Task, part: Part) -> float:
    if task.meta['setting'] == EXTRACTION:
        right = sum(extract_answer(r['replies'][0]) == r['answer'] for r in part.records)
        return 100 * right / len(part.records)
    setting = setting_named(task.meta['setting'])
    lines = [
        result_line(record, setting, record['replies'], mode='official', rag=task.meta['rag'])
        for record in part.records
    ]
    return float(row_cells([line for line in lines if line is not None])[0])


def _mrcr(task: Task, part: Part) -> float:
    if task.name == MRCR_V2:
        scores = [gdm_mrcr_v2_metric(r['prediction'], r['target']) for r in part.records]
    else:
        scores = [
            openai_mrcr_grade(r['response'], r['answer'], r['random_string_to_prepend'])
            for r in part.records
        ]
    return 100 * sum(scores) / len(scores)


SCORERS = {RULER: _ruler, LVEVAL: _lveval, LONGBENCH_V2: _longbench_v2, MRCR: _mrcr}


def package_scores(tasks: list[Task]) -> dict[str, list[float]]:
    """Each task's part scores (points, as this package's functions give them), by task key."""
    return {task.key: [SCORERS[task.family](task, part) for part in task.parts] for task in tasks}
