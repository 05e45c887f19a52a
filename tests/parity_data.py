"""Where the tests find official data: ``tests/data`` (in the checkout) and ``../shared`` (beside it).

``tests/data`` holds copies of the parity data the tests need most, so a fresh clone still checks
parity: the official constants, the 600 Ada-LEval golden cases, every tenth LV-Eval golden case
(211, all 55 subsets and 5 metrics) and one official prediction file per metric with its row of
the official result. ``tests/test_parity_data.py`` checks each copy against its source where
``../shared`` is present. The rest (the books, the real ``stackselect_1k.json``, the papers, the
full golden results) is read from ``../shared``; a test that needs it skips, naming it.

``python tests/parity_data.py`` writes the copies again from ``../shared``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / 'shared'
DATA = Path(__file__).resolve().parent / 'data'

# Whole files, byte for byte, at the same path under tests/data as under ../shared.
WHOLE_FILES = (
    'reference/lveval_official.json',
    'reference/adaleval_official.json',
    'golden/adaleval/cases.jsonl',
    # One official prediction file per metric (qa_f1_score_with_gold_ans, qa_f1_score,
    # qa_f1_zh_score, qa_f1_zh_score_with_gold_ans with the answer as keywords, ROUGE-L).
    'golden/lveval/hotpotwikiqa_mixup_16k.jsonl',
    'golden/lveval/factrecall_en_16k.jsonl',
    'golden/lveval/factrecall_zh_16k.jsonl',
    'golden/lveval/cmrc_mixup_16k.jsonl',
    'golden/lveval/dureader_mixup_16k.jsonl',
)
GOLDEN_CASES = 'golden/lveval/cases.jsonl'  # in ../shared: all 2,106 cases
CASES_SLICE = 'golden/lveval/cases_every_10th.jsonl'  # in tests/data: lines 1, 11, 21, ...
RESULT_ROWS = 'golden/lveval/official_result_rows.json'  # the copied files' rows of result.json
OFFICIAL_RESULT = 'golden/lveval/official_result/result.json'
COPIES = (*WHOLE_FILES, CASES_SLICE, RESULT_ROWS)


def need_shared(what: str) -> Path:
    """``../shared``, or a skip that names it and what the test needs from it."""
    if not SHARED.is_dir():
        pytest.skip(f'../shared is absent ({SHARED}): {what}')
    return SHARED


def data_json(relative: str):
    return json.loads((DATA / relative).read_text('utf-8'))


def data_lines(relative: str) -> list[str]:
    return (DATA / relative).read_text('utf-8').splitlines()


def cases_slice(lines: list[str]) -> list[str]:
    """Every tenth golden case, from the first: about 20 per dataset, 3 or 4 per subset."""
    return lines[::10]


def result_rows(official_result: dict) -> dict:
    """The rows of the official result.json for the copied prediction files, in its order."""
    stems = {Path(name).stem for name in WHOLE_FILES if name.startswith('golden/lveval/')}
    return {subset: score for subset, score in official_result.items() if subset in stems}


def refresh(shared: Path = SHARED, data: Path = DATA) -> None:
    """Write every copy again from ``../shared``."""
    for relative in WHOLE_FILES:
        (data / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / relative, data / relative)
    lines = (shared / GOLDEN_CASES).read_text('utf-8').splitlines()
    (data / CASES_SLICE).write_text('\n'.join(cases_slice(lines)) + '\n', 'utf-8')
    rows = result_rows(json.loads((shared / OFFICIAL_RESULT).read_text('utf-8')))
    (data / RESULT_ROWS).write_text(json.dumps(rows, indent=4) + '\n', 'utf-8')


if __name__ == '__main__':
    refresh()
