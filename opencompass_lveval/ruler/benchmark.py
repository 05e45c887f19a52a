"""RULER as a registered benchmark, minimal for now: its ``lveval build`` kinds, its data check
(the official layout ``<length>/<task>/validation.jsonl``) and seeded synthetic data. It has no
OpenCompass datasets yet, so no run result is its own and its report and board parts are
empty; the declaration with its levels in the model's tokens, categories, configs and evaluator
comes on top of this class."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..framework.benchmarks import Benchmark, mark_synthetic
from .tasks import TASKS_BY_NAME

FIELDS = ('index', 'input', 'outputs', 'length', 'length_w_model_temp', 'answer_prefix')
# What ``lveval data synth`` writes: the tasks that need no downloaded input, at 4096 tokens of
# GPT-4's tokenizer (RULER's ``--tokenizer_type openai``), a few samples each.
SYNTHETIC_TASKS = ('niah_single_1', 'niah_multikey_2', 'niah_multikey_3', 'vt', 'fwe')
SYNTHETIC_LENGTH, SYNTHETIC_COUNT = 4096, 4


def data_files(root: Path) -> list[Path]:
    """``<length>/<task>/validation.jsonl`` files anywhere below ``root``."""
    return sorted(
        path
        for path in Path(root).rglob('validation.jsonl')
        if path.is_file()
        and path.parent.name in TASKS_BY_NAME
        and path.parent.parent.name.isdigit()
    )


def file_problem(path: Path) -> tuple[int, Optional[str]]:
    """(records, the first problem or None) of one data file: every line an object with the
    official fields, its answers strings, its length within the folder's budget."""
    budget, records = int(path.parent.parent.name), 0
    with open(path, encoding='utf-8') as stream:
        for number, line in enumerate(stream, 1):
            try:
                record = json.loads(line)
            except ValueError as exc:
                return records, f'line {number}: not JSON ({exc})'
            if not isinstance(record, dict) or any(f not in record for f in FIELDS):
                return records, f'line {number}: lacks one of {", ".join(FIELDS)}'
            outputs = record['outputs']
            if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
                return records, f'line {number}: "outputs" is not a list of strings'
            if not isinstance(record['length'], int) or record['length'] > budget:
                return records, f'line {number}: length {record["length"]!r} over {budget}'
            records += 1
    return records, None if records else 'no records'


class Ruler(Benchmark):
    name, title = 'ruler', 'RULER'
    data_looked_for = '<length>/<task>/validation.jsonl files (the official layout)'

    def split_abbr(self, abbr: str):
        """None: no OpenCompass dataset is RULER's yet."""
        return None

    def has_data(self, root: Path) -> bool:
        return bool(data_files(root))

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        lines, bad = [], 0
        for path in data_files(root):
            records, problem = file_problem(path)
            where = path.relative_to(root)
            lines.append(f'{where}: {records} records, {problem or "ok"}')
            bad += problem is not None
        found = len(lines)
        lines.append(f'{found - bad} of {found} RULER files ok')
        return lines, bad == 0

    def write_synthetic(self, out_dir: Path, *, seed: int) -> str:
        from .build import build
        from .tokens import tiktoken_counter

        folder = Path(out_dir) / 'ruler'
        counter = tiktoken_counter()
        paths = build(
            None,
            SYNTHETIC_TASKS,
            [SYNTHETIC_LENGTH],
            folder,
            seed=seed,
            count=SYNTHETIC_COUNT,
            counter=counter,
        )
        mark_synthetic(folder)
        return (
            f'wrote {len(paths)} RULER files ({", ".join(SYNTHETIC_TASKS)} at '
            f'{SYNTHETIC_LENGTH} {counter.name} tokens; {SYNTHETIC_COUNT} samples each) to {folder}'
        )

    def report(self, results, out: Path):
        return [], []

    def board_sizes(self, rows: list, with_published: bool) -> list:
        return []

    def board_tables(self, rows: list, sizes) -> list:
        return []

    def tidy(self, row, sizes) -> Iterator:
        return iter(())

    def published(self) -> Iterator:
        return iter(())

    def build_kinds(self):
        from .commands import BUILD_KINDS

        return BUILD_KINDS
