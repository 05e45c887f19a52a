"""Find, read and validate Ada-LEval files (``stackselect_1k.json``, ``textsort_2k.json``, ...).

Each file is a JSON array read once. The records a run uses are checked against their task's
schema (the task table's ``record_problem``), and a file of a paper setting that holds fewer
records than the official code uses is refused as truncated. Any size is a setting: files built
at ``256k`` load the same way, with the paper's sample-count rule. Every problem names the file,
the item and how to fix it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.errors import AdaLEvalDataError
from ..framework.benchmarks import is_synthetic
from ..framework.datacheck import folder_from_env, shown, walk_regular
from ..framework.sizes import by_size, is_size
from .tasks import TASKS, AdaTask, official_sample_count, task_named

DATA_DIR_ENV = 'ADALEVAL_DATA_DIR'
GET_DATA_HINT = (
    "Get the official files with the Ada-LEval repository's fetch_data.sh on a "
    'machine with internet, copy its data/ folder to the cluster and point the loader '
    f'at it (config `path=` or ${DATA_DIR_ENV}); files may sit at any depth.'
)
_FILE = re.compile(r'(?P<stem>[a-z]+)_(?P<setting>\w+)\.json')


def default_data_dir() -> str:
    """``$ADALEVAL_DATA_DIR`` or ``./data/AdaLEval``; set but empty is an error naming the
    variable."""
    return folder_from_env(DATA_DIR_ENV, os.path.join('data', 'AdaLEval'), AdaLEvalDataError)


def _check_setting(task: AdaTask, setting: str) -> None:
    if not is_size(setting):
        raise AdaLEvalDataError(
            f'{task.name} setting {setting!r} is not a size: use one of '
            f'{list(task.settings)} or another like 256k'
        )


def locate(root: str | os.PathLike, task: AdaTask, setting: str) -> Path:
    """The one file for (task, setting) under ``root``, at any depth."""
    _check_setting(task, setting)
    root = Path(root)
    if not root.is_dir():
        raise AdaLEvalDataError(
            f'Ada-LEval data folder {shown(root)} does not exist. {GET_DATA_HINT}'
        )
    name = task.file_name(setting)
    found = sorted(folder / name for folder, files in walk_regular(root) if name in files)
    if not found:
        raise AdaLEvalDataError(f'{name} not found under {shown(root)}. {GET_DATA_HINT}')
    if len(found) > 1:
        raise AdaLEvalDataError(
            f'{name} is present {len(found)} times under {shown(root)}: '
            f'{", ".join(map(str, found))}. Keep one copy.'
        )
    return found[0]


def read_file(path: Path) -> list:
    """The JSON array of one file, or an error naming the file and what is wrong with it."""
    try:
        with open(path, encoding='utf-8') as stream:
            records = json.load(stream)
    except FileNotFoundError as exc:
        raise AdaLEvalDataError(f'{path} does not exist. {GET_DATA_HINT}') from exc
    except UnicodeDecodeError as exc:
        raise AdaLEvalDataError(
            f'{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); '
            f'download it again. {GET_DATA_HINT}'
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise AdaLEvalDataError(
            f'{path} is not valid JSON ({exc}); download it again. {GET_DATA_HINT}'
        ) from exc
    if not isinstance(records, list) or not records:
        raise AdaLEvalDataError(f'{path} must hold a non-empty JSON array of records')
    return records


def record_problem(task: AdaTask, record) -> Optional[str]:
    """What is wrong with one record of ``task``, or None."""
    if not isinstance(record, dict):
        return f'expected a JSON object, found {type(record).__name__}'
    missing = [name for name in task.fields if name not in record]
    if missing:
        return f'missing field(s) {missing}'
    return task.record_problem(record)


def _raise_for_problems(path: Path, task: AdaTask, records: list) -> None:
    for index, record in enumerate(records):
        problem = record_problem(task, record)
        if problem:
            raise AdaLEvalDataError(
                f'{path}, item {index}: {problem}. Fix or re-download the file. {GET_DATA_HINT}'
            )


def read_records(
    path: Path, task: AdaTask, setting: str, cheap: bool = False, limit: Optional[int] = None
) -> list[dict]:
    """The records a run uses: the first ``official_sample_count`` (``cheap``: the paper's
    smaller counts), or the first ``limit``; validated.

    A paper setting's file with fewer records than that count is truncated and refused, unless
    ``limit`` asks for a subset on purpose; a file of another setting is used as it is.
    """
    _check_setting(task, setting)
    records = read_file(path)
    count = official_sample_count(setting, cheap)
    used = records[: count if limit is None else limit]
    _raise_for_problems(path, task, used)
    if limit is None and setting in task.settings and len(records) < count:
        raise AdaLEvalDataError(
            f'{path} holds {len(records)} records, but the official code uses the first {count} '
            f'at {setting}{" (cheap mode)" if cheap else ""}: the file looks truncated. Download '
            f'it again, or set limit={len(records)} in the dataset config to use fewer on '
            f'purpose. {GET_DATA_HINT}'
        )
    return used


def load_task(
    task_name: str,
    setting: str,
    path: Optional[str] = None,
    cheap: bool = False,
    limit: Optional[int] = None,
) -> list[dict]:
    task = task_named(task_name)
    return read_records(
        locate(path or default_data_dir(), task, setting), task, setting, cheap, limit
    )


@dataclass
class FileReport:
    """What ``lveval data check`` says about one Ada-LEval file (or a missing paper one)."""

    name: str  # the file name, e.g. stackselect_1k.json
    expected: Optional[int]  # records the official code uses; None for a non-paper setting
    path: Optional[Path] = None
    records: int = 0
    problem: Optional[str] = None
    synthetic: bool = False  # beside the mark of ``lveval data synth``: fewer records on purpose

    @property
    def ok(self) -> bool:
        return self.path is not None and self.problem is None


def check_folder(root: str | os.PathLike) -> Iterator[FileReport]:
    """Every paper file of both tasks (missing ones too, unless the folder holds no paper file) and
    every other setting found under ``root``: record counts against the official ones, and every
    record against its schema."""
    root = Path(root)
    if not root.is_dir():
        raise AdaLEvalDataError(
            f'Ada-LEval data folder {shown(root)} does not exist. {GET_DATA_HINT}'
        )
    found: dict[str, list[Path]] = {}
    for folder, files in walk_regular(root):
        for name in files:
            found.setdefault(name, []).append(folder / name)
    # Missing paper files are reported where the folder holds a release (not synthetic data).
    release = any(
        not is_synthetic(path.parent)
        for task in TASKS
        for setting in task.settings
        for path in found.get(task.file_name(setting), [])
    )
    for task in TASKS:
        present = [
            m['setting']
            for name in found
            if (m := _FILE.fullmatch(name))
            and m['stem'] == task.file_stem
            and is_size(m['setting'])
        ]
        for setting in by_size(set(task.settings) | set(present)):
            name = task.file_name(setting)
            paper = setting in task.settings
            report = FileReport(name, official_sample_count(setting) if paper else None)
            paths = found.get(name, [])
            if len(paths) > 1:
                report.problem = f'present {len(paths)} times: {", ".join(map(str, paths))}'
            elif not paths:
                if not release:
                    continue
                report.problem = 'missing'
            else:
                report.path = paths[0]
                try:
                    records = read_file(report.path)
                    report.records = len(records)
                    _raise_for_problems(report.path, task, records)
                except AdaLEvalDataError as exc:
                    report.problem = str(exc)
                else:
                    report.synthetic = is_synthetic(report.path.parent)
                    if paper and not report.synthetic and report.records < report.expected:
                        report.problem = (
                            f'{report.records} records, the official code uses '
                            f'{report.expected}: truncated'
                        )
            yield report
