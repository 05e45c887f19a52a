"""Leaderboards from recorded runs: merging, settings as rows, newest results, missing results with
their first error line, conflicts, published rows, and the page in a real headless browser."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from parity_data import REPO

from opencompass_lveval.cli import main
from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.leaderboard import write_leaderboard
from opencompass_lveval.lveval.tasks import LEVELS, TASKS

overall = named('lveval').overall_value
average = named('lveval').average_value

DATA = REPO / 'opencompass_lveval' / 'leaderboard' / 'data'
HF = 'opencompass_lveval.models.hf.LongContextHF'


def recorded_run(
    work: Path,
    stamp: str,
    models: dict[str, dict],
    scores: dict,
    logs=None,
    fingerprint: str = 'data-v1',
) -> Path:
    """A run folder as OpenCompass leaves it: the dumped config (models and datasets asked for),
    result files with provenance, and task logs."""
    run = work / stamp
    (run / 'configs').mkdir(parents=True)
    datasets = sorted(
        {d for by_dataset in scores.values() for d in by_dataset} | {d for (_, d) in (logs or {})}
    )
    (run / 'configs' / f'{stamp}_1.py').write_text(
        f'models = {json.dumps([{"abbr": a, **c} for a, c in models.items()])}\n'
        f'datasets = {json.dumps([{"abbr": d} for d in datasets])}\n'
    )
    for model, by_dataset in scores.items():
        for dataset, value in by_dataset.items():
            folder = run / 'results' / model
            folder.mkdir(parents=True, exist_ok=True)
            provenance = {'package_version': '0.2.0', 'data_fingerprint': fingerprint}
            result = (
                {'score': value}
                if dataset.startswith('LVEval_')
                else {'accuracy': value, 'instruction_following': 90.0}
            )
            if not dataset.startswith('LVEval_'):
                provenance['extraction'] = 'strict'
            (folder / f'{dataset}.json').write_text(
                json.dumps({**result, 'provenance': provenance})
            )
    for (model, dataset), text in (logs or {}).items():
        log = run / 'logs' / 'infer' / model / f'{dataset}.out'
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text)
    return run


def full_scores(value: float, levels=LEVELS) -> dict:
    return {task.abbr(level): value for task in TASKS for level in levels}


def test_runs_merge_into_rows_by_model_and_settings(tmp_path):
    work = tmp_path / 'work'
    a = {'type': HF, 'max_seq_len': 32768, 'inputs': 'official'}
    recorded_run(work, '20260101_000000', {'a': a}, {'a': full_scores(10.0)})
    # A newer run of the same model and settings: its results win where it has them.
    newer = full_scores(10.0)
    newer['LVEval_cmrc_mixup_16k'] = 32.0
    recorded_run(work, '20260102_000000', {'a': a}, {'a': {'LVEval_cmrc_mixup_16k': 32.0}})
    # The same abbr with another window: another row, never mixed in.
    recorded_run(
        work, '20260103_000000', {'a': {**a, 'max_seq_len': 8192}}, {'a': full_scores(5.0, ['16k'])}
    )
    # A model that failed on one dataset: incomplete, with the log's first error line.
    logs = {
        ('b', 'LVEval_lic_mixup_16k'): 'loading...\nTraceback (most recent call last):\n'
        '  File "x.py"\nValueError: model folder ./b does not exist\nRuntimeError: later\n'
    }
    scores_b = full_scores(20.0)
    del scores_b['LVEval_lic_mixup_16k']
    recorded_run(work, '20260104_000000', {'b': dict(a)}, {'b': scores_b}, logs)
    board, written = write_leaderboard([work], tmp_path / 'out')
    rows = {row.label: row for row in board.rows}
    assert sorted(rows) == ['a [window=32768]', 'a [window=8192]', 'b']
    wide = rows['a [window=32768]']
    assert wide.results['lveval']['cmrc_mixup', '16k']['score'] == 32.0  # the newest result
    assert overall(wide, '16k') == pytest.approx((10 * 10 + 32) / 11)
    assert overall(wide, '32k') == 10.0 and wide.complete
    assert wide.provenance['runs'] == [str(work / '20260101_000000'), str(work / '20260102_000000')]
    assert (
        len(wide.provenance['config_digest']) == 12
        and wide.provenance['package_version'] == '0.2.0'
    )
    narrow = rows['a [window=8192]']
    assert overall(narrow, '16k') == 5.0 and overall(narrow, '32k') is None  # no partial averages
    assert average(narrow, board.sizes['lveval']) is None
    failed = rows['b']
    assert not failed.complete and overall(failed, '16k') is None
    assert failed.missing == [
        (
            'LVEval_lic_mixup_16k',
            'ValueError: model folder ./b does not exist (logs/infer/b/LVEval_lic_mixup_16k.out)',
        )
    ]
    assert [row.label for row in board.rows] == ['a [window=32768]', 'a [window=8192]', 'b']
    markdown = written[0].read_text()
    assert '| b | - | 20.00 | 20.00 | 20.00 | 20.00 | - | incomplete (1 missing) |' in markdown
    assert 'ValueError: model folder ./b does not exist' in markdown
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'o2'), '--strict']) == 1
    assert (
        main(
            [
                'leaderboard',
                str(work / '20260101_000000'),
                '--out',
                str(tmp_path / 'o3'),
                '--strict',
            ]
        )
        == 0
    )


def test_changed_data_and_mixed_extraction_are_conflicts(tmp_path):
    work = tmp_path / 'work'
    model = {'m': {'type': HF, 'max_seq_len': 4096}}
    recorded_run(
        work,
        '20260101_000000',
        model,
        {'m': {'LVEval_cmrc_mixup_16k': 1.0, 'AdaLEval_tsort_2k': 4.0}},
    )
    recorded_run(
        work, '20260102_000000', model, {'m': {'LVEval_cmrc_mixup_16k': 2.0}}, fingerprint='data-v2'
    )
    board, _ = write_leaderboard([work], tmp_path / 'out')
    (row,) = board.rows
    assert row.results['lveval']['cmrc_mixup', '16k']['score'] == 2.0
    assert row.results['adaleval']['tsort', '2k'] == {
        'accuracy': 4.0,
        'instruction_following': 90.0,
    }
    assert board.conflicts == [
        (
            'm',
            'LVEval_cmrc_mixup_16k: the data changed between '
            '20260101_000000 and 20260102_000000 (newest kept)',
        )
    ]
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'o'), '--strict']) == 1


def test_published_rows_are_shipped_data_with_sources(tmp_path):
    # The shipped CSVs are copies of ../shared/reference: tests/test_parity_data.py checks them.
    work = tmp_path / 'work'
    recorded_run(
        work, '20260101_000000', {'m': {'type': HF, 'max_seq_len': 4096}}, {'m': full_scores(12.5)}
    )
    board, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    published = {row.model: row for row in board.rows if row.kind == 'published'}
    chatglm = published['ChatGLM3-6B-32k']
    assert {level: overall(chatglm, level) for level in LEVELS} == {
        '16k': 30.70,
        '32k': 26.62,
        '64k': 17.62,
        '128k': 11.56,
        '256k': 7.17,
    }
    assert chatglm.results['lveval']['cmrc_mixup', '16k']['score'] == 51.21
    assert chatglm.results['adaleval']['bestanswer', '1k'] == {'accuracy': 39.8}
    assert published['Qwen2-72B-Instruct'].results['lveval']['cmrc_mixup', '16k']['score'] == 37.05
    assert 'infinigence/LVEval@63e7ae9:README.md' in chatglm.provenance['source']
    assert board.rows[0].label == 'm'  # measured rows first, published after, never merged
    assert all(row.kind == 'published' for row in board.rows[1:])
    loogle = [
        r
        for r in csv.DictReader(written[1].open())
        if r['row'] == 'GPT-4-8k (published)' and r['item'] == 'loogle_MIR_mixup'
    ]  # the README's "loogle-MR-mixup" table
    assert [r['level'] for r in loogle] == list(LEVELS)


def test_published_rows_rank_by_their_average_within_each_benchmark():
    """Rows with LV-Eval numbers by their average Overall, then the Ada-LEval-only rows (Random
    Guess among them) by their mean accuracy over the cells the paper gives; a row with neither
    average last. The averages are taken from the shipped CSVs as text."""
    from opencompass_lveval.leaderboard.board import build_board
    from opencompass_lveval.leaderboard.published import DATA

    with open(DATA / 'published_lveval.csv', newline='') as stream:
        overall_rows = [r for r in csv.DictReader(stream) if r['table'] == 'Overall Result']
    lveval = {r['model']: sum(float(r[lv]) for lv in LEVELS) / 5 for r in overall_rows}
    accuracy: dict[str, list[float]] = {}
    with open(DATA / 'published_adaleval.csv', newline='') as stream:
        for line in csv.DictReader(stream):
            if line['accuracy_pct'] and line['model'] not in lveval:
                accuracy.setdefault(line['model'], []).append(float(line['accuracy_pct']))
    ada = {model: sum(found) / len(found) for model, found in accuracy.items()}
    expected = sorted(lveval, key=lveval.get, reverse=True) + sorted(ada, key=ada.get, reverse=True)
    labels = [row.model for row in build_board([], with_published=True).rows]
    assert labels == expected + ['Qwen2-72B-Instruct']  # its 16k dataset scores give no Overall
    assert labels.index('Random Guess') == len(labels) - 2  # the floor of the Ada-LEval rows


def chromium() -> str:
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip('no headless browser here: `apt-get install -y chromium` (CI installs it)')


def dump_dom(page: Path, fragment: str, profile: Path) -> str:
    """The page's DOM after its own script ran, as headless Chromium leaves it."""
    done = subprocess.run(
        [
            chromium(),
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            f'--user-data-dir={profile}',
            '--dump-dom',
            page.as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class TableRows(HTMLParser):
    """(label, [cell texts]) of the LV-Eval table's body rows, in page order; the attributes of
    the first plot's lines (``lines``), in drawing order."""

    def __init__(self):
        super().__init__()
        self.rows, self.table, self.cells, self.sorted_by = [], None, None, None
        self.lines, self.figures = [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.figures += tag == 'figure'
        if tag == 'polyline' and self.figures == 1:
            self.lines.append(attrs)
        elif tag == 'table' and attrs.get('id') == 'lveval':
            self.table, self.sorted_by = 'lveval', attrs.get('data-sorted-by')
        elif tag == 'tr' and self.table and 'data-label' in attrs:
            self.cells = [attrs['data-label']]
            self.rows.append(self.cells)
        elif tag == 'td' and self.cells is not None:
            self.cells.append('')

    def handle_endtag(self, tag):
        if tag == 'table':
            self.table = None
        elif tag == 'tr':
            self.cells = None

    def handle_data(self, data):
        if self.cells is not None and len(self.cells) > 1:
            self.cells[-1] += data


@pytest.mark.slow
@pytest.mark.browser
def test_page_renders_and_sorts_in_a_real_browser(tmp_path):
    work = tmp_path / 'work'
    hf = {'type': HF, 'max_seq_len': 4096}
    recorded_run(
        work,
        '20260101_000000',
        {'low': hf, 'high': hf, 'mid': hf},
        {'low': full_scores(3.0), 'high': full_scores(40.0), 'mid': full_scores(20.0)},
    )
    board, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    page = written[3]

    def rendered(fragment: str) -> str:
        return dump_dom(page, fragment, tmp_path / 'profile')

    by_default = TableRows()
    by_default.feed(rendered(''))
    table = {
        r['row']: r
        for r in csv.DictReader(written[1].open())
        if r['table'] == 'overall' and r['level'] == '16k'
    }
    labels = [row[0] for row in by_default.rows]
    assert labels[:3] == ['high', 'mid', 'low']  # measured rows by Overall
    assert len(labels) == 3 + sum(
        1 for row in board.rows if row.kind == 'published' and row.results.get('lveval')
    )
    for label, *cells in by_default.rows:
        if label in table:  # the page shows the CSV's numbers
            assert float(cells[1]) == pytest.approx(float(table[label]['value']), abs=0.005)
    sorted_page = TableRows()
    sorted_page.feed(rendered('#sort=16k:asc'))  # the page's own script sorts on load
    assert sorted_page.sorted_by == '16k:asc'
    ascending = [float(cells[1]) for _, *cells in sorted_page.rows if cells[1].strip() != '-']
    assert ascending == sorted(ascending) and ascending[0] == 3.0
    assert [row[0] for row in sorted_page.rows][-1] == 'Qwen2-72B-Instruct (published)'  # no 16k


def synthetic_and_real_runs(work: Path) -> Path:
    """A real model and one measured on synthetic data that scores far above every paper."""
    models = {'real': {'type': HF, 'max_seq_len': 4096}, 'synth': {'type': HF}}
    run = recorded_run(
        work, '20260101_000000', models, {'real': full_scores(12.5), 'synth': full_scores(90.0)}
    )
    for path in (run / 'results' / 'synth').glob('*.json'):  # as `lveval data synth` data leaves it
        found = json.loads(path.read_text())
        found['provenance']['data_origin'] = 'synthetic'
        path.write_text(json.dumps(found))
    return run


@pytest.mark.slow
@pytest.mark.browser
def test_synthetic_rows_stay_last_in_any_sort_and_are_drawn_apart(tmp_path):
    synthetic_and_real_runs(tmp_path / 'work')
    board, written = write_leaderboard([tmp_path / 'work'], tmp_path / 'out', with_published=True)
    kinds = {row.label: row.kind for row in board.rows}
    for fragment in ('', '#sort=256k', '#sort=256k:asc', '#sort=16k', '#sort=avg:asc'):
        found = TableRows()
        found.feed(dump_dom(written[3], fragment, tmp_path / 'profile'))
        shown = [kinds[label] for label, *_ in found.rows]
        assert shown[-1] == 'synthetic' and shown.count('synthetic') == 1, fragment
        assert shown.count('published') >= 10 and 'measured' in shown, fragment
    lines = found.lines  # the LV-Eval plot: the real row, ten papers, the synthetic row
    assert len(lines) == 12 and len({line['stroke'] for line in lines}) == 12
    assert lines[0]['class'] == 'synthetic' and lines[0]['data-label'] == 'synth (synthetic data)'
    assert lines[0]['stroke-dasharray'] == '1,4' and float(lines[0]['opacity']) < 0.5
    assert {line['stroke-dasharray'] for line in lines if line['class'] == 'published'} == {'6,3'}
    assert lines[-1]['class'] == 'measured' and 'stroke-dasharray' not in lines[-1]
    page = written[3].read_text()
    assert '>synthetic data</text>' in page and 'drawn under the others' in page
    board, written = write_leaderboard(
        [tmp_path / 'work'], tmp_path / 'ranked', with_published=True, include_synthetic=True
    )
    found = TableRows()
    found.feed(dump_dom(written[3], '#sort=256k', tmp_path / 'profile'))
    assert found.rows[0][0] == 'synth (synthetic data)'  # ranked among the others when asked


def test_plot_lines_never_share_colour_and_dash():
    from opencompass_lveval.leaderboard.board import Row
    from opencompass_lveval.leaderboard.html import PALETTE, line_styles

    assert len(set(PALETTE)) == len(PALETTE) >= 12
    rows = [Row(f'm{i}', 'measured', f'm{i}') for i in range(4)]
    rows += [Row(f'p{i}', 'published', f'p{i}') for i in range(10)]
    rows += [Row(f's{i}', 'synthetic', f's{i}') for i in range(22)]
    styles = line_styles(rows)
    assert len({style.color for style in styles[:12]}) == 12
    assert len({(style.color, style.dash) for style in styles}) == len(rows) == 36
    assert {s.dash for s in styles[:4]} == {''} and {s.dash for s in styles[4:12]} == {'6,3'}
    assert all(style.opacity < 1 for style in styles[14:])
    alone = line_styles(rows[14:])  # a demo's board: nothing to fade them against
    assert all(style.opacity == 1 and style.dash for style in alone)


def test_a_plot_of_many_lines_has_room_for_every_legend_entry(tmp_path):
    import re

    hf = {'type': HF, 'max_seq_len': 4096}
    models = {f'm{i:02d}': hf for i in range(20)}
    scores = {name: full_scores(float(i)) for i, name in enumerate(models)}
    recorded_run(tmp_path / 'work', '20260101_000000', models, scores)
    _, written = write_leaderboard([tmp_path / 'work'], tmp_path / 'out', with_published=True)
    svg = re.search(r'<svg[^>]*>.*?</svg>', written[3].read_text(), re.S).group(0)
    strokes = re.findall(
        r'<polyline [^>]*stroke="([^"]+)"(?: [^>]*stroke-dasharray="([^"]+)")?', svg
    )
    assert len(strokes) == 30 and len(set(strokes)) == 30  # 20 measured, 10 published lines
    legend = [float(y) for y in re.findall(r'<line class="legend"[^>]* y1="([\d.]+)"', svg)]
    assert len(legend) == 30 and max(legend) < float(re.search(r'height="(\d+)"', svg).group(1))


def test_configs_in_run_folders_are_read_as_data_never_run(tmp_path, capsys):
    work = tmp_path / 'work'
    run = recorded_run(
        work,
        '20260101_000000',
        {'m': {'type': HF, 'max_seq_len': 4096}},
        {'m': full_scores(12.5, ['16k'])},
    )
    marker = tmp_path / 'ran'
    (run / 'configs' / f'{run.name}_2.py').write_text(
        f'import pathlib\npathlib.Path({str(marker)!r}).touch()\n'
        f"models = [dict(abbr='m', path=__import__('os').getcwd())]\n"
    )
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'out')]) == 2
    error = capsys.readouterr().err
    assert f'{run.name}_2.py, line 1: not plain data (Import)' in error
    assert 'never run' in error and not marker.exists()
    (run / 'configs' / f'{run.name}_2.py').write_text(
        "models = [dict(abbr='m', path=__import__('os').getcwd())]\n"
    )
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'out')]) == 2
    assert f'{run.name}_2.py, line 1: not plain data (Call)' in capsys.readouterr().err
    for call in ("dict({'a b': 1}, abbr=open('x'))", "dict({'a': 1}, {'b': 2})", 'dict(*x)'):
        (run / 'configs' / f'{run.name}_2.py').write_text(f'models = [{call}]\n')
        assert main(['leaderboard', str(work), '--out', str(tmp_path / 'out')]) == 2
        assert 'not plain data (Call)' in capsys.readouterr().err


def test_a_dict_dumped_with_keys_that_are_not_names_is_data(tmp_path, capsys):
    """mmengine dumps a dict whose keys are not names as ``dict({...})`` (a perplexity
    template's orders): a run of such a dataset is read like any other."""
    work = tmp_path / 'work'
    run = recorded_run(
        work, '20260101_000000', {'m': {'type': HF}}, {'m': full_scores(12.5, ['16k'])}
    )
    (run / 'configs' / f'{run.name}_2.py').write_text(
        "models = [dict(abbr='m')]\n"
        "datasets = [dict(abbr='AdaLEval_tsort_ppl_2k', infer_cfg=dict(prompt_template=dict("
        "template=dict({'[1, 2, 3, 4]': 'Answer: [1, 2, 3, 4]'}))))]\n"
    )
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'out')]) == 0
    assert 'missing: m x AdaLEval_tsort_ppl_2k: ' in capsys.readouterr().out


@pytest.mark.parametrize(
    'content, shown',
    [
        ('{"score": true}', 'score is True'),
        ('{"score": "99.5"}', "score is '99.5'"),
        ('{"score": NaN}', 'NaN is not a number JSON allows'),
        ('{"score": Infinity}', 'Infinity is not a number JSON allows'),
        ('{"score": 12345}', 'score is 12345'),
        ('[1, 2]', 'holds list, not a result object'),
    ],
)
def test_results_that_are_not_scores_are_errors_naming_the_file(tmp_path, capsys, content, shown):
    work = tmp_path / 'work'
    run = recorded_run(
        work,
        '20260101_000000',
        {'m': {'type': HF, 'max_seq_len': 4096}},
        {'m': full_scores(12.5, ['16k'])},
    )
    bad = run / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json'
    bad.write_text(content)
    for command in (['leaderboard', str(work), '--out', str(tmp_path / 'o')], ['report', str(run)]):
        assert main(command) == 2
        error = capsys.readouterr().err
        assert str(bad) in error and shown in error


@pytest.mark.parametrize('provenance', ['v9', [1, 2], 3])
def test_provenance_of_another_shape_is_an_error_naming_the_file(tmp_path, provenance, capsys):
    work = tmp_path / 'work'
    run = recorded_run(
        work,
        '20260101_000000',
        {'m': {'type': HF, 'max_seq_len': 4096}},
        {'m': full_scores(12.5, ['16k'])},
    )
    path = run / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json'
    path.write_text(json.dumps({'score': 40.0, 'provenance': provenance}))
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'out')]) == 2
    error = capsys.readouterr().err
    assert f'{path}: provenance is {provenance!r}, not an object' in error
    path.write_text(json.dumps({'score': 40.0, 'provenance': [{'data_fingerprint': 'd'}]}))
    board, _ = write_leaderboard([work], tmp_path / 'out')  # one object per replica is fine
    assert board.rows[0].results['lveval']['cmrc_mixup', '16k']['score'] == 40.0


def test_a_missing_result_is_explained_by_each_log_that_mentions_it(tmp_path):
    work = tmp_path / 'work'
    filler = 'loading weights, nothing to report\n' * 30_000  # ~1 MB per log, read once each
    logs = {
        ('m', 'LVEval_cmrc_mixup_32k'): filler,  # the 32k task's own log: no error in it
        # a task log named after its first dataset, mentioning the others it ran
        ('m', 'LVEval_cmrc_mixup_64k'): 'Task [m/LVEval_cmrc_mixup_64k,m/LVEval_cmrc_mixup_32k]\n'
        + filler
        + 'torch.OutOfMemoryError: CUDA out of memory\n',
        # a split part's name holds the dataset's: it mentions it too
        ('m', 'LVEval_lic_mixup_16k'): 'Task [m/LVEval_cmrc_mixup_128k_0]\nValueError: bad\n',
        ('m', 'LVEval_cmrc_mixup_128k'): filler,
    }
    logs.update({('m', f'LVEval_dureader_mixup_{n}k'): filler for n in range(1001, 1031)})
    recorded_run(work, '20260101_000000', {'m': {'type': HF}}, {'m': {'LVEval_cmrc_mixup_16k': 1.0}},
                 logs=logs)  # fmt: skip
    board, _ = write_leaderboard([work], tmp_path / 'out')
    reasons = dict(board.rows[0].missing)
    assert reasons['LVEval_cmrc_mixup_32k'] == (
        'torch.OutOfMemoryError: CUDA out of memory (logs/infer/m/LVEval_cmrc_mixup_64k.out)'
    )
    assert reasons['LVEval_cmrc_mixup_64k'] == reasons['LVEval_cmrc_mixup_32k']
    lic = 'ValueError: bad (logs/infer/m/LVEval_lic_mixup_16k.out)'
    assert reasons['LVEval_lic_mixup_16k'] == reasons['LVEval_cmrc_mixup_128k'] == lic
    assert reasons['LVEval_dureader_mixup_1001k'].startswith('no result and no error')


def test_strict_fails_on_a_refused_run_and_on_nothing_measured(tmp_path, capsys):
    work = tmp_path / 'work'
    model = {'m': {'type': HF, 'max_seq_len': 4096}}
    recorded_run(work, '20260101_000000', model, {'m': full_scores(12.5, ['16k'])})
    # The newest run was refused before any result: a config and a log, no results/ folder.
    refused = work / '20260102_000000'
    (refused / 'configs').mkdir(parents=True)
    (refused / 'configs' / 'c.py').write_text(
        "models = [dict(abbr='big', type='x', max_seq_len=8)]\n"
        "datasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"
    )
    log = refused / 'logs' / 'infer' / 'big' / 'LVEval_cmrc_mixup_16k.out'
    log.parent.mkdir(parents=True)
    log.write_text('GPURequestError: asks for 8 GPUs, the nodes offer at most 4\n')
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'o'), '--strict']) == 1
    assert 'missing: big x LVEval_cmrc_mixup_16k: GPURequestError' in capsys.readouterr().out
    empty = tmp_path / 'empty_run'
    (empty / 'configs').mkdir(parents=True)
    (empty / 'configs' / 'c.py').write_text('models = []\ndatasets = []\n')
    assert main(['leaderboard', str(empty), '--out', str(tmp_path / 'o2'), '--strict']) == 1
    assert 'nothing measured: the runs hold no results and asked for none' in (
        capsys.readouterr().out
    )
    assert main(['leaderboard', str(tmp_path / 'nothing_here'), '--out', str(tmp_path / 'o3')]) == 2


def test_strict_fails_where_only_synthetic_or_other_results_were_measured(tmp_path):
    """The demo's board (its rows on synthetic data) and a run of other benchmarks measure no
    model: ``lveval leaderboard --strict`` exits 1 saying so, without --strict it exits 0."""
    work = tmp_path / 'synthetic'
    run = synthetic_and_real_runs(work)
    shutil.rmtree(run / 'results' / 'real')
    (run / 'configs' / f'{run.name}_1.py').write_text(
        "models = [dict(abbr='synth')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"
    )
    other = tmp_path / 'other' / '20260101_000000'
    (other / 'configs').mkdir(parents=True)
    (other / 'configs' / 'c.py').write_text("models = [dict(abbr='m')]\ndatasets = []\n")
    (other / 'results' / 'm').mkdir(parents=True)
    (other / 'results' / 'm' / 'gsm8k.json').write_text('{"accuracy": 50.0}')
    said = {
        work: 'nothing measured: the 1 rows with results were measured on synthetic data',
        other.parent: 'nothing measured: no row holds a result of a registered benchmark',
    }
    for folder, message in said.items():
        for flags, code in (([], 0), (['--strict', '--published'], 1)):
            done = subprocess.run(
                [sys.executable, '-m', 'opencompass_lveval.cli', 'leaderboard', str(folder)]
                + ['--out', str(tmp_path / 'board'), *flags],
                capture_output=True,
                text=True,
                env={**os.environ, 'PYTHONPATH': str(REPO)},
            )
            assert done.returncode == code, done.stdout + done.stderr
            assert message in done.stdout
            assert ('--strict fails on it' in done.stdout) == bool(flags)


def test_the_newest_run_wins_by_its_name_not_its_file_times(tmp_path):

    work = tmp_path / 'work'
    model = {'m': {'type': HF, 'max_seq_len': 4096}}
    new = recorded_run(work, '20260102_000000', model, {'m': {'LVEval_cmrc_mixup_16k': 2.0}})
    old = recorded_run(work, '20260101_000000', model, {'m': {'LVEval_cmrc_mixup_16k': 1.0}})
    os.utime(new / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json', (1, 1))  # a copy reset it
    board, _ = write_leaderboard([work], tmp_path / 'out')
    assert board.rows[0].results['lveval']['cmrc_mixup', '16k']['score'] == 2.0
    assert old.name < new.name


def test_names_from_run_folders_cannot_forge_rows_or_formulas(tmp_path):
    work = tmp_path / 'work'
    forged = 'ok\n| FAKE | 99.00 | 99.00 |<img src=x onerror=alert(1)>'
    formula = '=HYPERLINK("x")'
    recorded_run(
        work,
        '20260101_000000',
        {forged: {'type': HF, 'max_seq_len': 4096}, formula: {'type': HF, 'max_seq_len': 4096}},
        {forged: full_scores(12.5, ['16k']), formula: full_scores(10.0, ['16k'])},
    )
    _, written = write_leaderboard([work], tmp_path / 'out')
    markdown = written[0].read_text()
    assert '| FAKE' not in markdown.replace('\\| FAKE', '') and '<img' not in markdown
    assert 'ok \\| FAKE \\| 99.00 \\| 99.00 \\|&lt;img src=x onerror=alert(1)&gt;' in markdown
    rows = list(csv.DictReader(written[1].open(newline='')))
    assert {row['row'] for row in rows} == {forged, "'" + formula}


def test_a_published_row_without_overall_says_why(tmp_path):
    work = tmp_path / 'work'
    recorded_run(
        work,
        '20260101_000000',
        {'m': {'type': HF, 'max_seq_len': 4096}},
        {'m': full_scores(12.5, ['16k'])},
    )
    _, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    qwen = next(
        line
        for line in written[0].read_text().splitlines()
        if line.startswith('| Qwen2-72B-Instruct (published) | -')
    )
    assert 'published; no Overall published; dataset scores at 16k (provenance)' in qwen
    assert 'YaRN failed per source' in written[0].read_text()  # the source's own words


def test_rows_show_what_their_results_cost_per_level(tmp_path):
    """The usage totals the infer task keeps beside each dataset's predictions become the row's
    tokens, cost and throughput per level (md, csv, json); rows without them show none."""
    work = tmp_path / 'work'
    run = recorded_run(
        work,
        '20260101_000000',
        {'gpt': {'type': 'opencompass_lveval.models.api.LongContextAPI'}, 'local': {'type': HF}},
        {'gpt': full_scores(40.0, ['16k', '32k']), 'local': full_scores(30.0, ['16k'])},
    )
    per_dataset = {
        '16k': dict(prompt_tokens=15000, completion_tokens=600, cost_usd=0.5, wall_s=6.0),
        '32k': dict(prompt_tokens=31000, completion_tokens=600, cost_usd=1.0, wall_s=8.0),
    }
    for task in TASKS:
        for level, numbers in per_dataset.items():
            folder = run / 'predictions' / 'gpt'
            folder.mkdir(parents=True, exist_ok=True)
            usage = dict(records=10, sent=10, **{k: numbers[k] for k in numbers if k != 'wall_s'})
            (folder / f'{task.abbr(level)}.inference.json').write_text(
                json.dumps({'wall_s': numbers['wall_s'], 'gpus': 0, 'usage': usage})
            )
    board, written = write_leaderboard([work], tmp_path / 'out')
    gpt = next(row for row in board.rows if row.model == 'gpt')
    assert gpt.usage['lveval']['16k'].prompt_tokens == 11 * 15000
    markdown = written[0].read_text()
    section = markdown.split('## LV-Eval: tokens used (millions; USD beside them where priced)')[1]
    gpt_line = next(line for line in section.splitlines() if line.startswith('| gpt'))
    # 11 datasets: 0.1716 and 0.3476 million tokens, $5.50 and $11.00; all: 0.5192, $16.50
    assert gpt_line == '| gpt | 0.17 (5.50) | 0.35 (11.00) | 0.52 (16.50) |'
    assert '| local' not in section.split('##')[0]
    throughput = markdown.split('## LV-Eval: tokens per second of inference')[1].splitlines()
    assert next(line for line in throughput if line.startswith('| gpt')) == (
        '| gpt | 2600.00 | 3950.00 | 3371.40 |'  # (15600 + 31600) / 14 s
    )
    rows = list(csv.DictReader(written[1].open()))
    cost = [r for r in rows if r['table'] == 'usage' and r['metric'] == 'cost_usd']
    assert {r['level']: float(r['value']) for r in cost} == {'16k': 5.5, '32k': 11.0}
    found = json.loads(written[2].read_text())['rows']
    assert next(r for r in found if r['model'] == 'gpt')['usage']['lveval']['32k']['wall_s'] == 88.0
    assert 'usage' not in next(r for r in found if r['model'] == 'local')


def test_bestanswer_position_runs_give_a_position_map_on_the_board(tmp_path):
    """The position-bias results (``AdaLEval_bestanswer_1k_front``...) are kept by the board and
    drawn as BestAnswer's accuracy by the best answer's position and setting."""
    from opencompass_lveval.adaleval.tasks import task_named
    from opencompass_lveval.leaderboard import depth_maps

    bestanswer = task_named('bestanswer')
    accuracy = {'front': 60.0, 'middle': 20.0, 'rear': 40.0}
    scores = {bestanswer.abbr('1k'): 35.0}
    scores |= {bestanswer.abbr('1k', f'_{p}'): a for p, a in accuracy.items()}
    run = recorded_run(tmp_path / 'work', '20260101_000000', {'m': {'type': HF}}, {'m': scores})
    for position in accuracy:  # 5 records each, as the evaluator writes details
        result = run / 'results' / 'm' / f'{bestanswer.abbr("1k", f"_{position}")}.json'
        found = json.loads(result.read_text())
        found['details'] = [{'correct': [True]}] * 5
        result.write_text(json.dumps(found))
    board, written = write_leaderboard([tmp_path / 'work'], tmp_path / 'out')
    ((label, found),) = [(label, m) for label, m in depth_maps(board) if m.dataset == 'bestanswer']
    assert label == 'm' and found.rows == ['front', 'middle', 'rear'] and found.columns == ['1k']
    assert found.values == [[60.0], [20.0], [40.0]] and found.counts == [[5], [5], [5]]
    page = written[3].read_text()
    assert 'data-dataset="bestanswer"' in page and 'best answer position' in page


def test_rows_on_synthetic_data_say_so_and_come_last_unless_asked(tmp_path, capsys):
    from opencompass_lveval.leaderboard.board import _rank

    work = tmp_path / 'work'
    synthetic_and_real_runs(work)
    board, written = write_leaderboard([work], tmp_path / 'out', with_published=True)
    assert [board.rows[0].label, board.rows[-1].label] == ['real', 'synth (synthetic data)']
    assert [row.kind for row in board.rows[1:-1]] == ['published'] * (len(board.rows) - 2)
    papers = [_rank(row, board.sizes) for row in board.rows[1:-1]]
    assert papers == sorted(papers)  # published rows ranked by their average too
    markdown, tidy, page = written[0].read_text(), written[1].read_text(), written[3].read_text()
    assert '| synth (synthetic data) |' in markdown and 'synthetic data' in page
    assert ',synthetic,' in tidy and ',measured,' in tidy
    rows = json.loads(written[2].read_text())['rows']
    assert [r['kind'] for r in rows if r['label'].startswith('synth')] == ['synthetic']
    board, _ = write_leaderboard([work], tmp_path / 'asked', include_synthetic=True)
    assert [row.label for row in board.rows] == ['synth (synthetic data)', 'real']
    assert main(['leaderboard', str(work), '--out', str(tmp_path / 'cli')]) == 0
    assert '1 measured rows, 0 published rows, 1 rows on synthetic data (ranked last' in (
        capsys.readouterr().out
    )
    # The report labels the model as the board does, in every table and CSV; files keep its name.
    from opencompass_lveval.report import write_report

    written = write_report(work, tmp_path / 'report')
    report = tmp_path / 'report'
    levels = (report / 'lveval_levels.csv').read_text().splitlines()
    assert [line.split(',')[0] for line in levels[1:]] == ['real', 'synth (synthetic data)']
    markdown = (report / 'long_context_report.md').read_text()
    assert '### LV-Eval, synth (synthetic data)\n' in markdown and '### LV-Eval, real\n' in markdown
    assert '| synth (synthetic data) | 90.00 |' in markdown
    assert {'lveval_synth.csv', 'lveval_real.csv'} <= {path.name for path in written}
