"""The LLM judge's score beside the keyword score: in `lveval report` and `lveval leaderboard`,
per dataset and level, with Spearman per dataset and the model order per level; nothing changes
where no result holds a judge score."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opencompass_lveval.leaderboard import write_leaderboard
from opencompass_lveval.lveval.tasks import LEVELS, TASKS
from opencompass_lveval.report import write_report

# Keyword scores fall with the level and differ by model; the judge scores higher (the paper's
# finding) and keeps the model order, except that it swaps b and c at 256k.
BASE = {'model-a': 40.0, 'model-b': 30.0, 'model-c': 20.0}


def keyword(model: str, task_index: int, depth: int) -> float:
    return BASE[model] - 4 * depth + task_index


def judge(model: str, task_index: int, depth: int) -> float:
    value = BASE[model] + 20 - 4 * depth + 0.5 * task_index
    if depth == 4 and model != 'model-a':
        value += 15 if model == 'model-c' else 0
    return value


def judged_run(work: Path, judged=('model-a', 'model-b', 'model-c')) -> Path:
    run = work / '20260101_000000'
    (run / 'configs').mkdir(parents=True)
    abbrs = [task.abbr(level) for task in TASKS for level in LEVELS]
    (run / 'configs' / '20260101_000000_1.py').write_text(
        f'models = {json.dumps([{"abbr": m} for m in BASE])}\n'
        f'datasets = {json.dumps([{"abbr": a} for a in abbrs])}\n'
    )
    for model in BASE:
        folder = run / 'results' / model
        folder.mkdir(parents=True)
        for index, task in enumerate(TASKS):
            for depth, level in enumerate(LEVELS):
                result = {'score': keyword(model, index, depth), 'diagnostics': ['...']}
                if model in judged:
                    result['judge_score'] = judge(model, index, depth)
                    result['judge'] = [{'rated': 10, 'unparseable': 0}]  # a list per replica
                (folder / f'{task.abbr(level)}.json').write_text(json.dumps(result))
    return run


def rows(path: Path) -> dict[str, list[str]]:
    with open(path, newline='') as stream:
        return {row[0]: row[1:] for row in csv.reader(stream)}


def test_the_report_shows_the_judge_beside_the_keyword_score(tmp_path):
    run = judged_run(tmp_path)
    write_report(tmp_path)
    summary = run / 'summary'
    table = rows(summary / 'lveval_judge_model-a.csv')
    assert table['dataset'][:4] == ['16k', '16k judge', '32k', '32k judge']
    assert [float(v) for v in table['cmrc_mixup'][:4]] == [
        keyword('model-a', 8, 0),
        judge('model-a', 8, 0),
        keyword('model-a', 8, 1),
        judge('model-a', 8, 1),
    ]
    # Spearman per dataset over its 15 (model, level) cells.
    from opencompass_lveval.evaluators.judge import spearman

    agreement = rows(summary / 'lveval_judge_agreement.csv')
    cells = [(m, d) for m in BASE for d in range(5)]
    expected = spearman([keyword(m, 0, d) for m, d in cells], [judge(m, 0, d) for m, d in cells])
    assert agreement[TASKS[0].name] == ['15', str(round(expected, 2))]
    order = rows(summary / 'lveval_judge_order.csv')
    assert order['16k'] == [
        'model-a > model-b > model-c',
        'model-a > model-b > model-c',
        'yes',
        '1.0',
    ]
    assert order['256k'][:3] == [
        'model-a > model-b > model-c',
        'model-a > model-c > model-b',
        'no',
    ]
    assert float(order['256k'][3]) == pytest.approx(0.5)
    report = (summary / 'long_context_report.md').read_text()
    assert '### LV-Eval keyword vs LLM judge: model order per level (Overall)' in report
    # The keyword tables are as before.
    assert rows(summary / 'lveval_model-a.csv')['cmrc_mixup'][0] == str(keyword('model-a', 8, 0))


def test_without_judge_results_the_report_has_no_judge_tables(tmp_path):
    run = judged_run(tmp_path, judged=())
    written = write_report(tmp_path)
    assert not [p for p in written if 'judge' in p.name]
    assert 'LLM judge' not in (run / 'summary' / 'long_context_report.md').read_text()


def test_the_leaderboard_shows_judge_columns_where_a_judge_rated(tmp_path):
    judged_run(tmp_path / 'work', judged=('model-a', 'model-b'))
    board, written = write_leaderboard([tmp_path / 'work'], tmp_path / 'board')
    markdown = written[0].read_text()
    assert '## LV-Eval LLM judge: Overall by length level' in markdown
    assert '| dataset | cells | spearman |' in markdown
    assert '| level | spearman |' in markdown
    assert '16k: keyword model-a > model-b; judge model-a > model-b (same order: yes)' in markdown
    # Per dataset, the judge in brackets beside the keyword score; model-c has no judge score.
    assert '### LV-Eval cmrc_mixup (LLM judge in brackets)' in markdown
    assert (
        f'| model-a | {keyword("model-a", 8, 0):.2f} ({judge("model-a", 8, 0):.2f}) |' in markdown
    )
    assert f'| model-c | {keyword("model-c", 8, 0):.2f} |' in markdown
    judge_lines = markdown.split('## LV-Eval LLM judge: Overall by length level')[1]
    judge_lines = judge_lines.split('##')[0]
    assert 'model-c' not in judge_lines
    tidy = list(csv.DictReader(written[1].read_text().splitlines()))
    found = [r for r in tidy if r['metric'] == 'judge_score' and r['row'] == 'model-b']
    assert {r['item'] for r in found} >= {'Overall', 'cmrc_mixup'}
    data = json.loads(written[2].read_text())
    row = next(r for r in data['rows'] if r['label'] == 'model-a')
    assert row['results']['lveval']['cmrc_mixup_16k'] == {
        'score': keyword('model-a', 8, 0),
        'judge_score': judge('model-a', 8, 0),
    }
    assert 'judge_overall' in row['derived']['lveval']
    page = written[3].read_text()
    assert '<th class="label" data-col="model" data-type="text">dataset</th>' in page
    assert 'title="LLM judge: ' in page


def test_a_board_without_judge_results_is_unchanged(tmp_path):
    judged_run(tmp_path / 'work', judged=())
    _, written = write_leaderboard([tmp_path / 'work'], tmp_path / 'board')
    for path in written:  # (the test's folder name holds the word: look for what we add)
        text = path.read_text()
        assert 'LLM judge' not in text and 'judge_score' not in text and 'judge_overall' not in text


def test_a_judge_score_outside_0_to_100_is_refused(tmp_path):
    from opencompass_lveval.files.errors import ReportError

    run = judged_run(tmp_path)
    path = run / 'results' / 'model-a' / f'{TASKS[0].abbr("16k")}.json'
    path.write_text(json.dumps({'score': 10.0, 'judge_score': 110.0}))
    with pytest.raises(ReportError, match='judge_score is 110.0'):
        write_report(tmp_path)
