"""``lveval score-adaleval``: extract and judge a file of responses, write them back scored."""

from __future__ import annotations

import json
from pathlib import Path

from ..files.atomic import atomic_open
from ..files.errors import AdaLEvalDataError
from ..files.jsonl import json_objects
from .metrics import judge, summarise
from .tasks import AdaTask, task_named


def read_responses(path: Path, task: AdaTask) -> tuple[list[dict], list, list, list]:
    """(records, predictions, answers, num_choices) of a JSON-lines file; errors name file and
    line, and say what the task's gold answer must look like."""
    records, predictions, answers, num_choices = [], [], [], []
    for where, record in json_objects(path, ('prediction', 'answer'), AdaLEvalDataError):
        try:
            answer, num_choice = task.gold(record)
        except ValueError as exc:
            raise AdaLEvalDataError(f'{where}: {exc}') from exc
        records.append(record)
        predictions.append(record['prediction'])
        answers.append(answer)
        num_choices.append(num_choice)
    if not predictions:
        raise AdaLEvalDataError(f'{path} holds no responses')
    return records, predictions, answers, num_choices


def score_file(path: str | Path, task_name: str, mode: str) -> tuple[Path, dict]:
    """Write ``FILE.scored.jsonl`` (each line plus ``extracted`` and ``hit``); return the
    summary."""
    path, task = Path(path), task_named(task_name)
    records, predictions, answers, num_choices = read_responses(path, task)
    extractions = judge(task, predictions, answers, num_choices, mode)
    out = path.with_name((path.stem if path.suffix == '.jsonl' else path.name) + '.scored.jsonl')
    with atomic_open(out) as scored:
        for record, extraction in zip(records, extractions):
            record.update(extracted=extraction.extracted, hit=extraction.hit)
            if extraction.official_error:
                record['official_error'] = extraction.official_error
            scored.write(json.dumps(record, ensure_ascii=False) + '\n')
    summary = summarise(task, predictions, extractions, num_choices)
    return out, {'task': task.name, 'extraction': mode, **summary}
