"""Find, read and validate official Ada-LEval files (``stackselect_1k.json``, ``textsort_2k.json``).

Each file is a JSON array read once; every record is checked for the task's fields and types, and
a problem names the file, the item and how to fix it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from ..lveval.data import LVEvalDataError
from .tasks import TASKS_BY_NAME, AdaTask, official_sample_count

DATA_DIR_ENV = 'ADALEVAL_DATA_DIR'
GET_DATA_HINT = ('Get the official files with the Ada-LEval repository\'s fetch_data.sh on a '
                 'machine with internet, copy its data/ folder to the cluster and point the loader '
                 f'at it (config `path=` or ${DATA_DIR_ENV}); files may sit at any depth.')


class AdaLEvalDataError(LVEvalDataError):
    """A problem with Ada-LEval data files; the message names the file and the fix."""


def default_data_dir() -> str:
    """``$ADALEVAL_DATA_DIR`` or ``./data/AdaLEval``."""
    return os.environ.get(DATA_DIR_ENV, os.path.join('data', 'AdaLEval'))


def locate(root: str | os.PathLike, task: AdaTask, setting: str) -> Path:
    """The one file for (task, setting) under ``root``, at any depth."""
    if setting not in task.settings:
        raise AdaLEvalDataError(f'{task.name} has no setting {setting!r}; choose from '
                                f'{list(task.settings)}')
    root = Path(root)
    if not root.is_dir():
        raise AdaLEvalDataError(f'Ada-LEval data folder {root} does not exist. {GET_DATA_HINT}')
    name = task.file_name(setting)
    found = sorted(Path(folder) / name for folder, _, files in os.walk(root) if name in files)
    if not found:
        raise AdaLEvalDataError(f'{name} not found under {root}. {GET_DATA_HINT}')
    if len(found) > 1:
        raise AdaLEvalDataError(f'{name} is present {len(found)} times under {root}: '
                                f'{", ".join(map(str, found))}. Keep one copy.')
    return found[0]


def answer_order(value) -> Optional[list[int]]:
    """A TSort answer as a list of ints (files store a list, some a JSON string of one)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and sorted(value) == [1, 2, 3, 4]:
        return value
    return None


def record_problem(task: AdaTask, record) -> Optional[str]:
    """What is wrong with one record, or None."""
    if not isinstance(record, dict):
        return f'expected a JSON object, found {type(record).__name__}'
    missing = [name for name in task.fields if name not in record]
    if missing:
        return f'missing field(s) {missing}'
    if task.name == 'bestanswer':
        answers = record['all_answers']
        if not isinstance(answers, list) or not answers or \
                not all(isinstance(a, str) for a in answers):
            return '"all_answers" must be a non-empty list of strings'
        if not isinstance(record['question'], str):
            return '"question" must be a string'
        label = record['answer']
        if not (isinstance(label, str) and label[:1] == 'A' and label[1:].isdigit()
                and 1 <= int(label[1:]) <= len(answers)):
            return f'"answer" must be a designation A1..A{len(answers)}, found {label!r}'
        return None
    if answer_order(record['answer']) is None:
        return f'"answer" must be a permutation of [1, 2, 3, 4], found {record["answer"]!r}'
    if not isinstance(record.get('prompt'), str) and not all(
            isinstance(record.get(k), t) for k, t in (('before', str), ('parts', list),
                                                       ('after', str))):
        return 'needs a "prompt" string, or "before", "parts" (4 texts) and "after"'
    return None


def read_records(path: Path, task: AdaTask, setting: str, cheap: bool = False,
                 limit: Optional[int] = None) -> list[dict]:
    """The first official-count records of one file (``cheap``: the paper's smaller counts),
    validated; TSort answers normalised to lists of ints."""
    try:
        with open(path, encoding='utf-8') as stream:
            records = json.load(stream)
    except FileNotFoundError as exc:
        raise AdaLEvalDataError(f'{path} does not exist. {GET_DATA_HINT}') from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise AdaLEvalDataError(f'{path} is not valid JSON ({exc}); download it again. '
                                f'{GET_DATA_HINT}') from exc
    if not isinstance(records, list) or not records:
        raise AdaLEvalDataError(f'{path} must hold a non-empty JSON array of records')
    count = limit if limit is not None else official_sample_count(setting, cheap)
    records = records[:count]
    for index, record in enumerate(records):
        problem = record_problem(task, record)
        if problem:
            raise AdaLEvalDataError(f'{path}, item {index}: {problem}. Fix or re-download the '
                                    f'file. {GET_DATA_HINT}')
        if task.name == 'tsort':
            record['answer'] = answer_order(record['answer'])
    return records


def load_task(task_name: str, setting: str, path: Optional[str] = None, cheap: bool = False,
              limit: Optional[int] = None) -> list[dict]:
    task = TASKS_BY_NAME[task_name]
    return read_records(locate(path or default_data_dir(), task, setting), task, setting, cheap,
                        limit)
