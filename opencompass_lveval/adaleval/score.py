"""``lveval score-adaleval``: extract and judge a file of responses, write them back scored."""
from __future__ import annotations

import json
from pathlib import Path

from ..jsonl import json_objects
from .data import AdaLEvalDataError, answer_order
from .metrics import judge, summarise


def read_responses(path: Path, task: str) -> tuple[list[dict], list, list, list]:
    """(records, predictions, answers, num_choices) of a JSON-lines file; errors name file and
    line."""
    records, predictions, answers, num_choices = [], [], [], []
    for where, record in json_objects(path, ('prediction', 'answer'), AdaLEvalDataError):
        answer = record['answer']
        if task == 'bestanswer':
            choices = record.get('num_choice')
            if not isinstance(choices, int) or choices < 1:
                raise AdaLEvalDataError(f'{where}: BestAnswer needs "num_choice", a positive '
                                        'integer (the number of candidate answers)')
            if not isinstance(answer, str):
                raise AdaLEvalDataError(f'{where}: "answer" must be a designation like "A3"')
            num_choices.append(choices)
        else:
            answer = answer_order(answer)
            if answer is None:
                raise AdaLEvalDataError(f'{where}: "answer" must be a permutation of '
                                        '[1, 2, 3, 4]')
        records.append(record)
        predictions.append(record['prediction'])
        answers.append(answer)
    if not predictions:
        raise AdaLEvalDataError(f'{path} holds no responses')
    return records, predictions, answers, num_choices


def score_file(path: str | Path, task: str, mode: str) -> tuple[Path, dict]:
    """Write ``FILE.scored.jsonl`` (each line plus ``extracted`` and ``hit``); return the
    summary."""
    path = Path(path)
    records, predictions, answers, num_choices = read_responses(path, task)
    extractions = judge(task, predictions, answers, num_choices or None, mode)
    out = path.with_name((path.stem if path.suffix == '.jsonl' else path.name) + '.scored.jsonl')
    with open(out, 'w', encoding='utf-8') as scored:
        for record, extraction in zip(records, extractions):
            record.update(extracted=extraction.extracted, hit=extraction.hit)
            if extraction.official_error:
                record['official_error'] = extraction.official_error
            scored.write(json.dumps(record, ensure_ascii=False) + '\n')
    summary = summarise(task, predictions, extractions, num_choices or None)
    return out, {'task': task, 'extraction': mode, **summary}
