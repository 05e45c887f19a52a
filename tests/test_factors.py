"""A declared second factor beside task x level, per task (``kind``) and per record (``hops``),
followed through the declaration, the evaluator, the data check, OpenCompass's summary, the
report, the board (Markdown, tidy CSV, JSON, page); and levels in the model's own tokens. The
expected numbers are computed here from the per-record scores written into the run."""

from __future__ import annotations

import csv
import json
import math
import random
import re

import pytest
from hops import HOPS, Hops, cell_dataset

from opencompass_lveval.files.errors import BenchmarkError
from opencompass_lveval.framework import benchmarks
from opencompass_lveval.framework.factors import Factor

MODELS = {'m': 0.7, 'n': 0.4}
RECORDS = 12


@pytest.fixture
def hops(monkeypatch):
    found = Hops()
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), found))
    return found


@pytest.fixture(scope='module')
def written(tmp_path_factory):
    """One run (``_run``) with its report and board, written once for the tests that read them;
    the report's figures kept as drawn (not encoded as PNG, which only costs time here)."""
    from opencompass_lveval.leaderboard import write_leaderboard
    from opencompass_lveval.report import plots, write_report

    folder = tmp_path_factory.mktemp('factors')
    drawn = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), Hops()))
        patch.setattr(plots, 'save', lambda figure, path: drawn.setdefault(path.name, figure))
        run, records = _run(folder)
        report = {path.name for path in write_report(run, folder / 'report')}
        _, board = write_leaderboard([run], folder / 'board')
    yield dict(
        run=run,
        records=records,
        report=folder / 'report',
        names=report,
        board=board,
        figures=drawn,
    )
    plots._pyplot().close('all')


def _mean(values):
    return math.fsum(values) / len(values)


def _run(tmp_path):
    """Two models' results at every cell: per record, accuracy and exact (0 or 100) and, in the
    tracking tasks, the record's hop count; the result's means as the evaluator writes them.
    Returns the run folder and per (model, task, size) the records (accuracy, exact, hops)."""
    rng = random.Random(5)
    run = tmp_path / 'work' / '20260101_000000'
    (run / 'configs').mkdir(parents=True)
    abbrs = [f'Hops_{task}_{size}' for task in Hops.tasks for size in Hops.sizes]
    config = {'models': [{'abbr': m} for m in MODELS], 'datasets': [{'abbr': a} for a in abbrs]}
    (run / 'configs' / 'c.py').write_text(
        '\n'.join(f'{key} = {value!r}' for key, value in config.items()) + '\n'
    )
    records = {}
    for model, rate in MODELS.items():
        (run / 'results' / model).mkdir(parents=True)
        for task in Hops.tasks:
            for size in Hops.sizes:
                found = []
                for number in range(RECORDS):
                    right = rng.random() < rate
                    exact = right and rng.random() < 0.5
                    hop = HOPS[number % 3] if task != 'lookup' else None
                    found.append((100.0 * right, 100.0 * exact, hop))
                records[model, task, size] = found
                result = {'accuracy': _mean([r[0] for r in found])}
                result['exact'] = _mean([r[1] for r in found])
                for hop in HOPS if task != 'lookup' else ():
                    result[f'accuracy_hops_{hop}'] = _mean([r[0] for r in found if r[2] == hop])
                    result[f'exact_hops_{hop}'] = _mean([r[1] for r in found if r[2] == hop])
                result['details'] = [
                    {'score': [a], 'exact': [e], 'hops': [h], 'depth': [None]} for a, e, h in found
                ]
                path = run / 'results' / model / f'Hops_{task}_{size}.json'
                path.write_text(json.dumps(result))
    return run, records


def expected(records, model, factor, value, size, metric):
    """A factor value's number from the raw per-record scores: a kind averages its tasks'
    means; a hop count averages, over the two tracking tasks, each one's mean over its records
    of that hop count."""
    at = 0 if metric == 'accuracy' else 1
    if factor == 'kind':
        tasks = ('chain', 'tree') if value == 'tracking' else ('lookup',)
        return _mean([_mean([r[at] for r in records[model, t, size]]) for t in tasks])
    return _mean(
        [
            _mean([r[at] for r in records[model, t, size] if r[2] == value])
            for t in ('chain', 'tree')
        ]
    )


def shown(value: float) -> str:
    from opencompass_lveval.report.rounding import shown as rounded

    return rounded(value)


# The declaration ---------------------------------------------------------------------------------


def test_a_factor_is_a_property_of_the_task_or_of_each_record():
    kind, hops = Hops.factors
    assert kind.shown_values() == ('tracking', 'retrieval') and not kind.per_record
    assert kind.members('tracking', Hops.tasks) == ('chain', 'tree')
    assert kind.members('retrieval', Hops.tasks) == ('lookup',)
    assert hops.per_record and hops.members('2', Hops.tasks) == ('chain', 'tree')
    assert [hops.record_value(r) for r in ({'hops': 2}, {'hops': '4'}, {}, {'hops': True})] == [
        '2',
        '4',
        None,
        None,
    ]
    assert hops.metric_key('exact', '4') == 'exact_hops_4'
    assert Hops().check_declaration() == []


REFUSED = {
    'both': (
        Factor('hops', 'hop', 'hops', ('1',), of_task={'chain': '1'}, record_field='hops'),
        "Bad factor 'hops': declare one of of_task (task -> value) and record_field",
    ),
    'name': (
        Factor('hop count', 'hop', 'hops', ('1',), record_field='hops'),
        "Bad factor 'hop count': its name must be a letter, then letters and digits",
    ),
    'metric': (
        Factor('exact', 'hop', 'hops', ('1',), record_field='hops'),
        "Bad factor 'exact': its name is a metric or detail key; rename it",
    ),
    'plural': (
        Factor('hops', 'hop count', '', ('1',), record_field='hops'),
        "Bad factor 'hops': declare word and plural, e.g. 'hop count', 'hop counts'",
    ),
    'values': (
        Factor('hops', 'hop', 'hops', (), record_field='hops'),
        "Bad factor 'hops': declare its values, each once",
    ),
    'value form': (
        Factor('hops', 'hop', 'hops', ('1_2',), record_field='hops'),
        "Bad factor 'hops': values ['1_2'] are not letters, digits, '.', '+', '-'",
    ),
    'task': (
        Factor('kind', 'kind', 'kinds', of_task={'chains': 'x'}),
        "Bad factor 'kind': ['chains'] are not its tasks (chain, tree, lookup)",
    ),
    'undeclared value': (
        Factor('kind', 'kind', 'kinds', ('x',), of_task={'chain': 'y'}),
        "Bad factor 'kind': of_task gives ['y'], not among its values ('x',)",
    ),
}


@pytest.mark.parametrize('case', sorted(REFUSED))
def test_registration_refuses_a_factor_it_cannot_use(case):
    factor, message = REFUSED[case]
    with pytest.raises(BenchmarkError) as error:
        benchmarks._instance(type('Bad', (Hops,), {'factors': (factor,)}), 'the entry point')
    assert str(error.value) == f'the entry point gives a declaration that cannot be used: {message}'


# The evaluator and the data check ----------------------------------------------------------------


def test_the_evaluator_keeps_each_records_hop_count_and_reports_each_counts_means(hops, tmp_path):
    from opencompass_lveval.framework.declared_opencompass import DeclaredEvaluator

    hops.write_synthetic(tmp_path, seed=0)
    dataset = cell_dataset(hops, 'chain', '1k', tmp_path / 'hops')
    raw = [json.loads(line) for line in (tmp_path / 'hops' / 'hops_chain_1k.jsonl').open()]
    assert [r['hops'] for r in raw] == [1, 2, 4, 1, 2, 4]
    replies = [raw[0]['answer'], 'no', f'It is {raw[2]["answer"]}', 'no', raw[4]['answer'], 'no']
    found = DeclaredEvaluator('hops').score(replies, dataset.test['answer'], dataset.test)
    assert [(d['score'], d['exact'], d['hops']) for d in found['details']] == [
        (100.0, 100.0, '1'),
        (0.0, 0.0, '2'),
        (100.0, 0.0, '4'),
        (0.0, 0.0, '1'),
        (100.0, 100.0, '2'),
        (0.0, 0.0, '4'),
    ]
    assert {k: v for k, v in found.items() if k not in ('provenance', 'details')} == {
        'accuracy': 50.0,
        'exact': 100 / 3,
        'accuracy_hops_1': 50.0,
        'exact_hops_1': 50.0,
        'accuracy_hops_2': 50.0,
        'exact_hops_2': 50.0,
        'accuracy_hops_4': 50.0,
        'exact_hops_4': 0.0,
    }


def test_a_record_without_one_of_the_declared_hop_counts_is_named_with_file_and_line(
    hops, tmp_path
):
    hops.write_synthetic(tmp_path, seed=0)
    path = tmp_path / 'hops' / 'hops_tree_2k.jsonl'
    lines = path.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), 'hops': 3})
    path.write_text('\n'.join(lines) + '\n')
    report, ok = hops.check_data(tmp_path)
    assert not ok
    assert f'hops_tree_2k.jsonl  0  {path}, line 2: field "hops" (hop count) is 3, not one of ' \
        '1, 2, 4; give each record one' in report  # fmt: skip
    assert 'hops_lookup_2k.jsonl  6  ok' in report  # lookup records carry no hop count


# OpenCompass's summary ---------------------------------------------------------------------------


def test_the_summary_has_a_group_per_factor_value_over_every_level_and_at_each(hops):
    rows, groups = hops.summary()
    by_name = {group['name']: group['subsets'] for group in groups}
    cells = [f'Hops_{t}_{s}' for t in ('chain', 'tree') for s in Hops.sizes]
    assert by_name['Hops_kind_tracking'] == [[a, 'accuracy'] for a in cells]
    assert by_name['Hops_kind_retrieval_2k'] == [['Hops_lookup_2k', 'accuracy']]
    assert by_name['Hops_kind_tracking_8k_exact'] == [
        ['Hops_chain_8k', 'exact'],
        ['Hops_tree_8k', 'exact'],
    ]
    assert by_name['Hops_hops_4'] == [[a, 'accuracy_hops_4'] for a in cells]
    assert by_name['Hops_hops_2_1k_exact'] == [
        ['Hops_chain_1k', 'exact_hops_2'],
        ['Hops_tree_1k', 'exact_hops_2'],
    ]
    names = [row for row in rows if isinstance(row, str)]
    values = [('kind', v) for v in ('tracking', 'retrieval')] + [('hops', v) for v in HOPS]
    by_factor = [
        f'Hops_{factor}_{value}{size}{metric}'
        for metric in ('', '_exact')
        for factor, value in values
        for size in ('', '_1k', '_2k', '_8k')
    ]
    sizes = [f'Hops_{s}{metric}' for metric in ('', '_exact') for s in Hops.sizes]
    assert names == sizes + by_factor
    assert rows[len(names) :][:2] == [['Hops_chain_1k', 'accuracy'], ['Hops_chain_1k', 'exact']]


def test_a_level_built_later_gets_its_factor_groups_without_a_summarizer_edit(hops):
    configured = hops.summary_config(hops.configs('data'))
    named = {group['name'] for group in configured['summary_groups']}
    abbrs = [c['abbr'] for c in hops.configs('data', sizes=['2k', '16k'])]
    groups, rows = hops.summary_groups(abbrs, named)
    by_name = {group['name']: group['subsets'] for group in groups}
    assert list(by_name)[:3] == ['Hops_16k', 'Hops_16k_exact', 'Hops_kind_tracking_16k']
    assert by_name['Hops_hops_4_16k'] == [
        ['Hops_chain_16k', 'accuracy_hops_4'],
        ['Hops_tree_16k', 'accuracy_hops_4'],
    ]
    assert 'Hops_hops_4' not in by_name and not any('_2k' in name for name in by_name)
    assert rows[: len(groups)] == list(by_name)


def test_opencompass_summary_shows_each_factor_value_as_computed_from_the_records(
    hops, tmp_path, monkeypatch
):
    from mmengine.config import ConfigDict

    from opencompass_lveval.report import plots
    from opencompass_lveval.report.summarizer import LongContextSummarizer

    # the summarizer also writes the report: its plots are drawn, not encoded (only time here)
    monkeypatch.setattr(plots, 'save', lambda figure, path: plots._pyplot().close(figure))
    run, records = _run(tmp_path)
    datasets = hops.configs(str(tmp_path))
    config = ConfigDict(models=[{'abbr': m} for m in MODELS], datasets=datasets, work_dir=str(run))
    LongContextSummarizer(config, **hops.summary_config(datasets)).summarize(time_str='t')
    with open(run / 'summary' / 'summary_t.csv', newline='') as stream:
        table = {r['dataset']: r for r in csv.DictReader(stream)}
    for model in MODELS:
        for size in Hops.sizes:
            for metric, suffix in (('accuracy', ''), ('exact', '_exact')):
                want = expected(records, model, 'hops', '2', size, metric)
                assert table[f'Hops_hops_2_{size}{suffix}'][model] == shown(want)
                want = expected(records, model, 'kind', 'tracking', size, metric)
                assert table[f'Hops_kind_tracking_{size}{suffix}'][model] == shown(want)
        over = [expected(records, model, 'hops', '4', s, 'accuracy') for s in Hops.sizes]
        assert table['Hops_hops_4'][model] == shown(_mean(over))


# The report and the board ------------------------------------------------------------------------


def _table(markdown: str, title: str) -> dict[str, list[str]]:
    """A Markdown table of the report by its title: first cell -> the other cells."""
    block = markdown.split(f'### {title}\n\n')[1].split('\n\n')[0].splitlines()
    return {cells[0]: cells[1:] for cells in (line.strip('| ').split(' | ') for line in block[2:])}


def test_the_report_has_a_table_and_plot_per_factor_value_and_metric(written):
    records = written['records']
    markdown = (written['report'] / 'long_context_report.md').read_text()
    for factor, values in (('kind', ('tracking', 'retrieval')), ('hops', HOPS)):
        word = 'kind' if factor == 'kind' else 'hop count'
        for value in values:
            for metric in ('accuracy', 'exact'):
                assert f'hops_{factor}_{value}_{metric}.png' in written['names']
                table = _table(markdown, f'Hops, {word} {value}: {metric} by size')
                for model in MODELS:
                    at = [expected(records, model, factor, value, s, metric) for s in Hops.sizes]
                    cells = [re.fullmatch(r'(\S+) \[(\S+), (\S+)\]', c) for c in table[model]]
                    assert [c[1] for c in cells] == [shown(v) for v in [*at, _mean(at)]]
                    assert all(float(c[2]) <= float(c[1]) <= float(c[3]) for c in cells)
    with open(written['report'] / 'hops_hops_2.csv') as stream:
        assert next(csv.reader(stream)) == ['model', '1k', '2k', '8k', 'avg']


def test_the_board_shows_each_factor_value_with_the_reports_intervals(written):
    records, board_files = written['records'], written['board']
    with open(written['report'] / 'intervals.csv', newline='') as stream:
        report = {(r['table'], r['row'], r['column']): r for r in csv.DictReader(stream)}
    markdown = board_files[0].read_text()
    with open(board_files[1], newline='') as stream:
        tidy = [r for r in csv.DictReader(stream) if r['table'] in ('kind', 'hops')]
    board = json.loads(board_files[2].read_text())
    page = board_files[3].read_text()
    assert len(tidy) == 2 * 2 * (2 + 3) * 4  # models x metrics x values x (3 levels + avg)
    for row in tidy:
        model, factor, value, level = row['row'], row['table'], row['item'], row['level']
        sizes = Hops.sizes if level == 'avg' else (level,)
        at = [expected(records, model, factor, value, s, row['metric']) for s in sizes]
        assert float(row['value']) == float(shown(_mean(at)))
        word = 'kind' if factor == 'kind' else 'hop count'
        title = f'Hops, {word} {value}: {row["metric"]} by size'
        mine = report[(title, model, level)]
        assert (row['low'], row['high']) == (mine['low'], mine['high'])
        derived = board['rows'][[r['label'] for r in board['rows']].index(model)]['derived']
        assert derived['hops']['factors'][factor][row['metric']][value][level] == float(
            row['value']
        )
    assert '## Hops, hop count 4: exact by size' in markdown
    assert "each one's mean over its records of hop count 4" in markdown
    for key in ('hops-kind-retrieval', 'hops-hops-1-exact'):
        assert f'<table id="{key}"' in page
    assert page.count('text-anchor="middle">size (tokens)</text>') >= 10  # every table plotted


def test_a_grid_with_an_overall_shows_its_factor_values_at_its_levels(tmp_path, monkeypatch):
    """With an Overall the tasks share their levels: the factor tables follow them."""
    from opencompass_lveval.leaderboard import write_leaderboard

    grid = type('Grid', (Hops,), {'overall': 'Overall'})()
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), grid))
    run, records = _run(tmp_path)
    _, board_files = write_leaderboard([run], tmp_path / 'board')
    with open(board_files[1], newline='') as stream:
        tidy = {
            (r['row'], r['table'], r['item'], r['level'], r['metric']): r['value']
            for r in csv.DictReader(stream)
        }
    for model in MODELS:
        for factor, value in (('kind', 'retrieval'), ('hops', '1')):
            at = [expected(records, model, factor, value, s, 'exact') for s in Hops.sizes]
            assert float(tidy[model, factor, value, '2k', 'exact']) == float(shown(at[1]))
            assert float(tidy[model, factor, value, 'avg', 'exact']) == float(shown(_mean(at)))
        overall = _mean(
            [expected(records, model, 'kind', 'tracking', '8k', 'accuracy')] * 2
            + [expected(records, model, 'kind', 'retrieval', '8k', 'accuracy')]
        )
        assert float(tidy[model, 'overall', 'Overall', '8k', 'accuracy']) == float(shown(overall))
    assert '### Hops, kind tracking: accuracy by size' in board_files[0].read_text()


# Levels in the model's own tokens ----------------------------------------------------------------


def test_token_levels_are_declared_counted_and_placed_without_overriding_a_method(hops):
    from opencompass_lveval.framework.grid import GridBenchmark

    assert type(hops).length_unit is GridBenchmark.length_unit
    unit = hops.length_unit('Hops_chain_8k')
    assert unit.model_tokens and unit.name == 'words' and unit.count('VAR A = 1.') == 4
    assert unit.phrase == "the model's tokens (words without a tokenizer)"
    assert hops.length_unit('LVEval_cmrc_mixup_16k') is None
    assert hops.axis_label() == 'size (tokens)'
    assert hops.level_positions(['1k', '2k', '8k']) == [1024.0, 2048.0, 8192.0]
    assert hops.level_positions(['1k', '16k']) is None  # 16k has no length: evenly spaced
    lveval = benchmarks.named('lveval')  # keeps its words and characters
    assert lveval.length_unit('LVEval_cmrc_mixup_16k').name == 'characters'


def test_plots_place_token_levels_at_their_lengths(written):
    from opencompass_lveval.leaderboard.html import column_xs

    axes = written['figures']['hops_chain_accuracy.png'].axes[0]
    assert axes.get_xscale() == 'log'
    assert list(axes.get_lines()[0].get_xdata()) == [1024.0, 2048.0, 8192.0]
    # 1k, 2k, 8k on a log scale: 2k a third of the way from 1k to 8k
    assert column_xs(0, 300, 3, [1024, 2048, 8192]) == pytest.approx((0, 100, 300))
    assert column_xs(0, 300, 3) == (0, 150, 300)
    page = written['board'][3].read_text()
    svg = page.split('<table id="hops-chain"')[0].rsplit('<svg', 1)[1]
    points = re.search(r'<polyline [^>]*points="([^"]+)"', svg)[1].split()
    xs = [float(point.split(',')[0]) for point in points]
    assert (xs[1] - xs[0]) / (xs[2] - xs[0]) == pytest.approx(1 / 3, abs=0.01)


# A real run ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_hops_through_the_conformance_kit_shows_each_hop_count(tmp_path, monkeypatch):
    """Hops installed by an entry point (a dist-info on the path) and checked by the kit: one
    OpenCompass run with the CPU baselines, its report and board. The extractive baseline finds
    a value assigned directly (one hop) and follows no chain; the factor's rows show it."""
    from opencompass_lveval.testing import check_benchmark

    benchmarks.registered()  # loaded now, so the registry as it was comes back afterwards
    info = tmp_path / 'site' / 'hops_bench-1.0.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: hops-bench\nVersion: 1.0\n')
    (info / 'entry_points.txt').write_text(f'[{benchmarks.ENTRY_POINT_GROUP}]\nhops = hops:Hops\n')
    monkeypatch.syspath_prepend(str(tmp_path / 'site'))
    monkeypatch.delattr(benchmarks, 'BENCHMARKS')
    kit = tmp_path / 'kit'
    assert check_benchmark('hops', kit) == [
        'random-guess scores 0 on every dataset (accuracy): check that the metric takes a right '
        'answer, unless no such baseline can give one'
    ]
    (run,) = [path.parent for path in (kit / 'out').glob('*/results')]
    for abbr in (f'Hops_{task}_{size}' for task in ('chain', 'tree') for size in Hops.sizes):
        result = json.loads((run / 'results' / 'extractive-bm25' / f'{abbr}.json').read_text())
        hops = [detail['hops'][0] for detail in result['details']]
        assert hops == ['1', '2', '4', '1', '2', '4']
        accuracy = [detail['score'][0] for detail in result['details']]
        assert accuracy == [100.0, 0.0, 0.0, 100.0, 0.0, 0.0]
        assert [result[f'accuracy_hops_{h}'] for h in HOPS] == [100.0, 0.0, 0.0]
    with open(sorted((run / 'summary').glob('summary_*.csv'))[-1], newline='') as stream:
        summary = {r['dataset']: r for r in csv.DictReader(stream)}
    by_hops = [summary[f'Hops_hops_{h}_2k']['extractive-bm25'] for h in HOPS]
    assert by_hops == ['100.00', '0.00', '0.00']
    report = (kit / 'report' / 'long_context_report.md').read_text()
    table = _table(report, 'Hops, hop count 1: accuracy by size')
    assert [cell.split()[0] for cell in table['extractive-bm25 (synthetic data)']] == ['100.00'] * 4
    assert (kit / 'report' / 'hops_hops_4_exact.png').is_file()
    with open(kit / 'board' / 'leaderboard.csv', newline='') as stream:
        tidy = [r for r in csv.DictReader(stream) if r['table'] == 'hops' and r['level'] == 'avg']
    found = {(r['row'].split()[0], r['item'], r['metric']): float(r['value']) for r in tidy}
    assert found[('extractive-bm25', '1', 'accuracy')] == 100.0
    assert found[('extractive-bm25', '4', 'accuracy')] == 0.0
