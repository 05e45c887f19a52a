"""score_and_write on predictions in the official layout: summary.csv and submission.csv byte
for byte as evaluate.py wrote them, chunked files, one task, and the refusals."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import GOLDEN

from opencompass_lveval.files.errors import RulerDataError
from opencompass_lveval.ruler.score import score_and_write

PRED = GOLDEN / 'scorer' / 'pred'


@pytest.fixture
def pred_dir(tmp_path):
    folder = tmp_path / 'pred'
    shutil.copytree(PRED, folder)
    for name in ('summary.csv', 'submission.csv'):
        (folder / name).unlink()
    return folder


def test_summary_and_submission_are_the_official_bytes(pred_dir):
    lines = score_and_write(pred_dir)
    for name in ('summary.csv', 'submission.csv'):
        assert (pred_dir / name).read_bytes() == (PRED / name).read_bytes(), name
    assert lines[1].split() == ['niah_single_1', '66.67', '4/30']
    assert lines[-1].startswith('wrote ')


def test_chunks_are_joined_in_name_order(pred_dir):
    lines = (pred_dir / 'qa_1.jsonl').read_text().splitlines(True)
    (pred_dir / 'qa_1.jsonl').unlink()
    (pred_dir / 'qa_1-0.jsonl').write_text(''.join(lines[:10]))
    (pred_dir / 'qa_1-1.jsonl').write_text(''.join(lines[10:]))
    score_and_write(pred_dir)
    assert (pred_dir / 'submission.csv').read_bytes() == (PRED / 'submission.csv').read_bytes()


def test_one_task_writes_summary_named_after_it(tmp_path):
    (tmp_path / 'vt.jsonl').write_text(
        json.dumps(
            {'index': 3, 'pred': 'ABCDE, FGHIJ', 'outputs': ['ABCDE', 'XYZWV'], 'others': {}}
        )
        + '\n'
    )
    score_and_write(tmp_path)
    assert (tmp_path / 'summary-vt.csv').read_text() == '0,1\nTasks,vt\nScore,50.0\nNulls,0/1\n'
    assert (tmp_path / 'submission.csv').read_text() == 'Task,ID,Prediction\nvt,3,"ABCDE, FGHIJ"\n'


@pytest.mark.parametrize(
    ('record', 'message'),
    [
        ({'index': 0, 'pred': 'a', 'outputs': ['a']}, 'needs "others"'),
        ({'index': 0, 'pred': None, 'outputs': ['a'], 'others': {}}, '"pred" must be a string'),
        ({'index': 0, 'pred': 'a', 'outputs': [], 'others': {}}, '"outputs" is empty'),
    ],
)
def test_bad_lines_are_named(tmp_path, record, message):
    (tmp_path / 'cwe.jsonl').write_text(json.dumps(record) + '\n')
    with pytest.raises(RulerDataError, match=rf'cwe\.jsonl, line 1: .*{message}'):
        score_and_write(tmp_path)


def test_a_folder_without_prediction_files_is_refused(tmp_path):
    (tmp_path / 'notes.jsonl').write_text('{}\n')
    with pytest.raises(RulerDataError, match='no RULER prediction files'):
        score_and_write(tmp_path)
