"""Intervals on the board and ``lveval compare``, on two demo-like runs: every LV-Eval subset
with per-record details (each naming its record, ``example_abbr``, as OpenCompass's evaluation
does) and a data fingerprint, as the evaluators write them."""

from __future__ import annotations

import csv
import json
import random
import re
import subprocess

import pytest

from opencompass_lveval.cli import main
from opencompass_lveval.leaderboard import write_leaderboard
from opencompass_lveval.leaderboard.board import measured_rows
from opencompass_lveval.leaderboard.compare import compare_rows
from opencompass_lveval.leaderboard.runs import read_runs
from opencompass_lveval.lveval.metrics import subset_score
from opencompass_lveval.lveval.tasks import LEVELS, TASKS, TASKS_BY_NAME

LEVELS_SHOWN = LEVELS[:2]


def demo_like_run(work, stamp, model, chance, fingerprint='v1', records=40, seed=0):
    """A run folder of one model: every subset at two levels, record i right with probability
    ``chance(task, level)``, the score the evaluator would compute, and the dumped config."""
    rng = random.Random(seed)
    run = work / stamp
    (run / 'configs').mkdir(parents=True)
    abbrs = [t.abbr(level) for t in TASKS for level in LEVELS_SHOWN]
    (run / 'configs' / 'c.py').write_text(
        f'models = [dict(abbr={model!r})]\ndatasets = {json.dumps([{"abbr": a} for a in abbrs])}\n'
    )
    scores = {}
    for task in TASKS:
        for level in LEVELS_SHOWN:
            found = [float(rng.random() < chance(task.name, level)) for _ in range(records)]
            scores[task.name, level] = found
            folder = run / 'results' / model
            folder.mkdir(parents=True, exist_ok=True)
            if task.answer_in_context:  # the answer 'x' at record i's depth i / records
                prompts = {
                    str(i): {
                        'origin_prompt': task.prompt.format(
                            context='.' * i + 'x' + '.' * (records - 1 - i), input='?'
                        )
                    }
                    for i in range(records)
                }
                predictions = run / 'predictions' / model / f'{task.abbr(level)}.json'
                predictions.parent.mkdir(parents=True, exist_ok=True)
                predictions.write_text(json.dumps(prompts))
            (folder / f'{task.abbr(level)}.json').write_text(
                json.dumps(
                    {
                        'score': subset_score(found),
                        'details': [
                            {'example_abbr': f'{task.abbr(level)}_{i}', 'score': s, 'answer': 'x'}
                            for i, s in enumerate(found)
                        ],
                        'provenance': {'package_version': '0.9', 'data_fingerprint': fingerprint},
                    }
                )
            )
    return run, scores


def test_paired_comparison_finds_the_better_model_and_refuses_other_records(tmp_path):
    work = tmp_path / 'work'
    # A is far better on factrecall_en at 16k, the same model elsewhere (same records, seed)
    demo_like_run(
        work,
        '20260101_000000',
        'a',
        lambda t, lv: 0.9 if t == 'factrecall_en' and lv == '16k' else 0.5,
    )
    run_b, _ = demo_like_run(tmp_path / 'other', '20260102_000000', 'b', lambda t, lv: 0.5)
    row_a = measured_rows(read_runs([work]))[0]
    row_b = measured_rows(read_runs([run_b]))[0]
    found = {(c.item, c.size): c for c in compare_rows(row_a, row_b)}
    factrecall = found['factrecall_en', '16k']
    assert factrecall.verdict.startswith('A better') and factrecall.bounds.low > 0
    same = found['cmrc_mixup', '32k']  # both runs drew the same records with the same seed
    assert same.difference == 0 and same.bounds == (0, 0) and same.records == 40
    assert same.verdict == (
        'no verdict: the interval has zero width (every resample gives the same difference)'
    )
    overall = found['Overall', '16k']
    assert overall.records == 40 * len(TASKS) and factrecall.records == 40
    assert overall.difference == pytest.approx(factrecall.difference / len(TASKS))
    # paired bootstrap against a direct loop: both rows resampled with the same indices
    scores_a = row_a.records['lveval'][('factrecall_en', '16k')].scores
    scores_b = row_b.records['lveval'][('factrecall_en', '16k')].scores
    rng, differences = random.Random(5), []
    for _ in range(2000):
        picked = [rng.randrange(len(scores_a)) for _ in scores_a]
        differences.append(sum(scores_a[i] - scores_b[i] for i in picked) / len(picked))
    differences.sort()
    assert factrecall.bounds.low == pytest.approx(differences[50], abs=2.5)
    assert factrecall.bounds.high == pytest.approx(differences[1949], abs=2.5)
    # other records: refused with the reason, and so is the Overall they belong to
    run_c, _ = demo_like_run(tmp_path / 'third', '20260103_000000', 'c', lambda t, lv: 0.5, 'v2')
    row_c = measured_rows(read_runs([run_c]))[0]
    refused = {(c.item, c.size): c for c in compare_rows(row_a, row_c)}
    assert refused['factrecall_en', '16k'].verdict == (
        'refused: different records (data fingerprints v1 and v2)'
    )
    assert refused['Overall', '16k'].verdict == 'refused: 11 of 11 members not paired'


def test_compare_command_prints_and_writes_the_table(tmp_path, capsys):
    work = tmp_path / 'work'
    demo_like_run(work, '20260101_000000', 'a', lambda t, lv: 0.8)
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.2, seed=1)
    assert main(['compare', str(work), str(run_b), '--out', str(tmp_path / 'out')]) == 0
    printed = capsys.readouterr().out
    assert '| lveval | Overall | 16k |' in printed and 'A better' in printed
    rows = list(csv.reader((tmp_path / 'out' / 'comparison.csv').open()))
    assert rows[0] == [
        'benchmark', 'item', 'size', 'records', 'A', 'B', 'A - B', 'low', 'high', 'verdict'
    ]  # fmt: skip
    assert main(['compare', str(work), str(run_b), '--model-a', 'nobody']) == 2
    assert "no model 'nobody'" in capsys.readouterr().err


def test_compare_gives_no_verdict_on_few_records_and_fails_when_nothing_compares(tmp_path, capsys):
    few = tmp_path / 'few'
    demo_like_run(few, '20260101_000000', 'a', lambda t, lv: 0.9, records=4)
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.1, records=4)
    assert main(['compare', str(few), str(run_b)]) == 0
    printed = capsys.readouterr().out
    assert '| lveval | factrecall_en | 16k | 4 |' in printed and 'A better' not in printed
    assert 'no verdict: 4 records, too few (at least 30)' in printed
    assert '24 of 24 compared cells give no verdict' in printed  # 22 cells, 2 Overalls
    other, _ = demo_like_run(tmp_path / 'c', '20260101_000000', 'c', lambda t, lv: 0.1, 'v2', 4)
    assert main(['compare', str(few), str(other)]) == 1
    assert 'nothing could be compared: every cell was refused' in capsys.readouterr().err


def test_board_intervals_in_every_format(tmp_path):
    work = tmp_path / 'work'
    demo_like_run(work, '20260101_000000', 'a', lambda t, lv: 0.6)
    board, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    tidy = list(csv.DictReader(written[1].open()))
    overall = next(
        r for r in tidy if r['row'] == 'a' and r['table'] == 'overall' and r['level'] == '16k'
    )
    low, high = float(overall['low']), float(overall['high'])
    assert low < float(overall['value']) < high
    published = [r for r in tidy if r['kind'] == 'published']
    assert published and all(r['low'] == r['high'] == '' for r in published)
    markdown = written[0].read_text()
    assert f'| a | {float(overall["value"]):.2f} [{low:.2f}, {high:.2f}] |' in markdown
    assert 'Published rows have no per-record scores, so no interval.' in markdown
    rows = json.loads(written[2].read_text())['rows']
    low_16k, high_16k = rows[0]['intervals']['lveval']['factrecall_en_16k']
    assert low_16k < rows[0]['results']['lveval']['factrecall_en_16k']['score'] < high_16k
    assert rows[-1]['intervals'] == 'none: published numbers have no per-record scores'
    page = written[3].read_text()
    assert f'data-interval="[{low:.2f}, {high:.2f}]"' in page and 'class="error-bar"' in page


def edit(run, model, abbr, change):
    """Rewrite one result file of a run with ``change(result)``."""
    path = run / 'results' / model / f'{abbr}.json'
    result = json.loads(path.read_text())
    change(result)
    path.write_text(json.dumps(result))
    return path


def cell_verdicts(run_a, run_b) -> dict:
    row_a, row_b = (measured_rows(read_runs([run]))[0] for run in (run_a, run_b))
    return {(c.item, c.size): c for c in compare_rows(row_a, row_b)}


CMRC = TASKS_BY_NAME['cmrc_mixup'].abbr('16k')


def test_records_are_paired_by_which_record_they_are_not_by_position(tmp_path):
    run_a, _ = demo_like_run(tmp_path / 'a', '20260101_000000', 'a', lambda t, lv: 0.5)
    # B: the same records, scored alike, listed in the other order: paired by name they agree
    # on every record (by position they would not).
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.5)
    edit(run_b, 'b', CMRC, lambda r: r['details'].reverse())
    same = cell_verdicts(run_a, run_b)['cmrc_mixup', '16k']
    assert same.difference == 0 and same.bounds == (0, 0) and same.records == 40

    # Another test_range of the same file: the same fingerprint and count, other records.
    def later_records(result):
        for index, detail in enumerate(result['details']):
            detail['example_abbr'] = f'{CMRC}_{40 + index}'

    edit(run_b, 'b', CMRC, later_records)
    assert cell_verdicts(run_a, run_b)['cmrc_mixup', '16k'].verdict == (
        'refused: other records of the same data (40 in A, 40 in B, 0 in common: another '
        'test_range?)'
    )

    def repeated(result):
        result['details'][1]['example_abbr'] = result['details'][0]['example_abbr']

    edit(run_b, 'b', CMRC, repeated)
    assert cell_verdicts(run_a, run_b)['cmrc_mixup', '16k'].verdict == (
        f'refused: record {CMRC}_40 is in the details of B 2 times'
    )
    edit(run_b, 'b', CMRC, lambda r: [d.pop('example_abbr') for d in r['details']])
    found = cell_verdicts(run_a, run_b)
    assert found['cmrc_mixup', '16k'].verdict == (
        'refused: the details of B do not name their records (example_abbr), so they cannot be '
        'paired record by record'
    )
    assert found['Overall', '16k'].verdict == 'refused: 1 of 11 members not paired'
    assert found['cmrc_mixup', '32k'].verdict.startswith('no verdict: the interval has zero')


def test_a_score_that_is_not_the_mean_of_its_records_is_said(tmp_path, capsys):
    run_a, _ = demo_like_run(tmp_path / 'a', '20260101_000000', 'a', lambda t, lv: 0.8)
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.2, seed=1)
    path = edit(run_a, 'a', CMRC, lambda r: r.update(score=3.0))
    assert main(['compare', str(run_a), str(run_b), '--out', str(tmp_path / 'out')]) == 0
    printed = capsys.readouterr().out
    mean = subset_score([d['score'] for d in json.loads(path.read_text())['details']])
    note = (
        f'A: {path}: score 3 is not the mean of its 40 per-record scores ({mean:.2f}); compared '
        'on the records'
    )
    assert note in printed.splitlines()
    assert note in (tmp_path / 'out' / 'comparison.md').read_text()
    line = next(line for line in printed.splitlines() if '| lveval | cmrc_mixup | 16k |' in line)
    assert line.startswith('| lveval | cmrc_mixup | 16k | 40 | 3.00 |')
    assert 'A better (interval excludes 0); A: score is not the mean of the records |' in line
    assert printed.count('is not the mean of its') == 1  # every other score is its records' mean


def test_compare_names_the_file_of_scores_no_metric_can_hold(tmp_path, capsys):
    run_a, _ = demo_like_run(tmp_path / 'a', '20260101_000000', 'a', lambda t, lv: 0.5)
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.5)
    path = edit(run_a, 'a', CMRC, lambda r: [d.update(score=-3.0) for d in r['details']])
    assert main(['compare', str(run_a), str(run_b)]) == 2
    assert (
        f'{path}: the score of record 0 in its details is -300% (in percent), not from 0 to 100'
        in capsys.readouterr().err
    )
    path.write_text(path.read_text().replace('-3.0', '1e400'))
    assert main(['compare', str(run_a), str(run_b)]) == 2
    assert f'{path} is not valid JSON (the number 1e400 is too large' in capsys.readouterr().err


def test_a_run_folder_without_results_is_named_not_called_several_models(tmp_path, capsys):
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.5)
    empty = tmp_path / 'empty' / '20260101_000000'
    (empty / 'configs').mkdir(parents=True)
    (empty / 'configs' / 'c.py').write_text("models = [dict(abbr='m')]\ndatasets = []\n")
    assert main(['compare', str(empty), str(run_b)]) == 2
    err = capsys.readouterr().err
    assert f'{empty}: no model has results there' in err and 'several' not in err


def test_compare_says_when_a_run_used_synthetic_data(tmp_path, capsys):
    run_a, _ = demo_like_run(tmp_path / 'a', '20260101_000000', 'a', lambda t, lv: 0.8)
    run_b, _ = demo_like_run(tmp_path / 'b', '20260101_000000', 'b', lambda t, lv: 0.2, seed=1)
    assert main(['compare', str(run_a), str(run_b)]) == 0
    assert 'synthetic' not in capsys.readouterr().out
    edit(run_b, 'b', CMRC, lambda r: r['provenance'].update(data_origin='synthetic'))
    assert main(['compare', str(run_a), str(run_b), '--out', str(tmp_path / 'out')]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(
        '**Synthetic data**: b were measured on the data of `lveval data synth`; these numbers '
        'test the pipeline, not the models'
    )
    assert 'A = a (' in printed and 'B = b (synthetic data) (' in printed
    assert (tmp_path / 'out' / 'comparison.md').read_text().startswith('**Synthetic data**: b')


@pytest.mark.slow
@pytest.mark.browser
def test_page_renders_intervals_error_bars_and_depth_maps_in_a_real_browser(tmp_path):
    from test_leaderboard import chromium

    work = tmp_path / 'work'
    demo_like_run(work, '20260101_000000', 'a', lambda t, lv: 0.7)
    board, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    done = subprocess.run(
        [
            chromium(),
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            f'--user-data-dir={tmp_path / "profile"}',
            '--dump-dom',
            written[3].as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert dom.count('class="error-bar"') == len(LEVELS_SHOWN)
    assert 'id="depth-maps"' in dom
    maps = re.findall(r'<table class="depthmap" data-row="a" data-dataset="(\w+)"', dom)
    assert maps == [t.name for t in TASKS if t.answer_in_context]
    # 40 records at depths 0, 1/40, ... : 4 per tenth of the context, every cell filled
    first = dom.split('data-dataset="factrecall_en"')[1].split('</table>')[0]
    assert first.count('title="4 records"') == 10 * len(LEVELS_SHOWN)
    assert 'data-interval="[' in dom
