"""A declared benchmark with its own level names (pairs: 75, 140, 300) and two metrics per record,
followed through the evaluator, the summary, the report, depth maps and the board; and the
declarations registration refuses, each with its message."""

from __future__ import annotations

import csv
import json
import random
import re
from html import unescape

import pytest

from opencompass_lveval.files.errors import BenchmarkError
from opencompass_lveval.framework import benchmarks
from opencompass_lveval.framework.declared import DeclaredBenchmark

POSITIONS = (0.0, 0.25, 0.5, 0.75, 1.0)


class Pairs(DeclaredBenchmark):
    """Key-value retrieval: the value of one key among ``level`` pairs; ``wrong_key`` is whether
    the reply holds the value of another key."""

    name, title, prefix = 'pairs', 'Pairs', 'Pairs'
    tasks = ('kv',)
    sizes = ('75', '140', '300')
    level_unit = 'pairs'
    size_word, size_name = 'level', 'number of pairs'
    data_file = 'pairs_{size}.jsonl'
    depth_field = 'depth'
    headline_metric = 'accuracy'
    metrics = ('accuracy', 'wrong_key')

    def score_reply(self, reply: str, record: dict) -> dict:
        others = [value for value in record['values'] if value != record['answer']]
        return {
            'accuracy': 100.0 * (record['answer'] in reply),
            'wrong_key': 100.0 * any(value in reply for value in others),
        }

    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        rng = random.Random(f'{seed}:{size}')
        records = []
        for number in range(count):
            values = [f'{rng.randrange(16**8):08x}' for _ in range(int(size))]
            depth = POSITIONS[number % len(POSITIONS)]
            at = round(depth * (len(values) - 1))
            records.append(
                {
                    'context': ' '.join(f'k{i}={v}' for i, v in enumerate(values)),
                    'input': f'The value of k{at}?',
                    'answer': values[at],
                    'values': values,
                    'depth': depth,
                }
            )
        return records


class HeadlineOnly(DeclaredBenchmark):
    """The older form: ``score_record(prediction, answer)``, one metric."""

    name, title, prefix = 'exact', 'Exact', 'Exact'
    tasks, sizes = ('echo',), ('1k',)

    def score_record(self, prediction: str, answer) -> float:
        return 100.0 if prediction.strip() == answer else 0.0

    def synthetic_records(self, task, size, count, seed):
        return [{'context': 'c', 'input': 'i', 'answer': 'a'}] * count


@pytest.fixture
def pairs(monkeypatch):
    """``Pairs`` registered beside the package's own benchmarks."""
    found = Pairs()
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), found))
    return found


# The scorer --------------------------------------------------------------------------------------


def test_the_scorer_sees_the_whole_record_and_gives_each_metric():
    record = {'answer': 'b2', 'values': ['a1', 'b2', 'c3']}
    assert Pairs().record_metrics('It is b2.', record) == {'accuracy': 100.0, 'wrong_key': 0.0}
    assert Pairs().record_metrics('c3', record) == {'accuracy': 0.0, 'wrong_key': 100.0}
    assert Pairs().record_metrics('b2 or a1', record) == {'accuracy': 100.0, 'wrong_key': 100.0}
    assert Pairs().record_metrics('', record) == {'accuracy': 0.0, 'wrong_key': 0.0}


def test_a_headline_only_scorer_keeps_working():
    assert HeadlineOnly().record_metrics(' a ', {'answer': 'a', 'context': 'c'}) == {'score': 100.0}
    assert HeadlineOnly().record_metrics('b', {'answer': 'a'}) == {'score': 0.0}
    assert HeadlineOnly().check_declaration() == []


@pytest.mark.parametrize(
    'given',
    [
        {'accuracy': 100.0},
        {'accuracy': 100.0, 'wrong_key': 101},
        {'accuracy': 1, 'wrong_key': True},
    ],
)
def test_a_scorer_giving_other_metrics_is_one_error(given, monkeypatch):
    monkeypatch.setattr(Pairs, 'score_reply', lambda self, reply, record: given)
    with pytest.raises(ValueError) as error:
        Pairs().record_metrics('x', {})
    assert str(error.value) == (
        f"Pairs.score_reply gave {given!r}; it must give each of ['accuracy', 'wrong_key'] "
        '(its `metrics`) as a number from 0 to 100'
    )


def test_the_evaluator_reports_every_metric_and_keeps_each_per_record(pairs, tmp_path):
    from hops import cell_dataset

    from opencompass_lveval.framework.declared_opencompass import DeclaredEvaluator

    pairs.write_synthetic(tmp_path, seed=0)
    dataset = cell_dataset(pairs, 'kv', '75', tmp_path / 'pairs')
    test_set = dataset.test
    records = pairs.synthetic_records('kv', '75', 10, 0)
    replies = [r['answer'] if i % 2 else r['values'][(i + 7) % 75] for i, r in enumerate(records)]
    found = DeclaredEvaluator('pairs').score(replies, test_set['answer'], test_set)
    assert (found['accuracy'], found['wrong_key']) == (50.0, 50.0)
    assert list(found) == ['accuracy', 'wrong_key', 'provenance', 'details']
    assert found['provenance']['data_origin'] == 'synthetic'
    assert found['details'][:2] == [
        {'pred': replies[0], 'answer': records[0]['answer'], 'score': 0.0, 'wrong_key': 100.0,
         'depth': 0.0},
        {'pred': replies[1], 'answer': records[1]['answer'], 'score': 100.0, 'wrong_key': 0.0,
         'depth': 0.25},
    ]  # fmt: skip


# Levels ------------------------------------------------------------------------------------------


def test_levels_keep_their_names_and_declared_order(pairs):
    assert [c['abbr'] for c in pairs.configs('data')] == [
        'Pairs_kv_75',
        'Pairs_kv_140',
        'Pairs_kv_300',
    ]
    assert pairs.split_abbr('Pairs_kv_140') == ('kv', '140')
    assert pairs.split_abbr('Pairs_kv_500') == ('kv', '500')  # built later: a whole number too
    assert pairs.split_abbr('Pairs_kv_16k') is None
    assert pairs.level_order(['500', '300', '75', '140']) == ['75', '140', '300', '500']
    lveval = benchmarks.named('lveval')
    assert lveval.level_order(['128k', '8k', '16k', '1m']) == ['8k', '16k', '128k', '1m']
    assert pairs.axis_label() == 'number of pairs (pairs)'
    assert pairs.length_unit('Pairs_kv_75').count('k0=a k1=b\nk2=c') == 3


def test_the_summary_has_a_group_per_level_and_metric(pairs):
    datasets = pairs.configs('data')
    groups = [
        {'name': f'Pairs_{level}', 'subsets': [[f'Pairs_kv_{level}', 'accuracy']]}
        for level in ('75', '140', '300')
    ] + [
        {'name': f'Pairs_{level}_wrong_key', 'subsets': [[f'Pairs_kv_{level}', 'wrong_key']]}
        for level in ('75', '140', '300')
    ]
    rows = [g['name'] for g in groups] + [
        [f'Pairs_kv_{level}', metric]
        for level in ('75', '140', '300')
        for metric in ('accuracy', 'wrong_key')
    ]
    assert pairs.summary_config(datasets) == dict(dataset_abbrs=rows, summary_groups=groups)


# A run's report and the board --------------------------------------------------------------------


def _run(tmp_path, records: int = 20):
    """A run folder with two models' results at every level: per record, both metrics and a
    depth at one of five positions (50% written as 0.5 and as 0.49999999 to test the rows)."""
    rng = random.Random(3)
    run = tmp_path / 'work' / '20260101_000000'
    (run / 'configs').mkdir(parents=True)
    abbrs = [f'Pairs_kv_{level}' for level in Pairs.sizes]
    config = {'models': [{'abbr': 'm'}, {'abbr': 'n'}], 'datasets': [{'abbr': a} for a in abbrs]}
    (run / 'configs' / 'c.py').write_text(
        '\n'.join(f'{key} = {value!r}' for key, value in config.items()) + '\n'
    )
    for model, rate in (('m', 0.7), ('n', 0.4)):
        (run / 'results' / model).mkdir(parents=True)
        for abbr in abbrs:
            details = []
            for number in range(records):
                depth = POSITIONS[number % 5] - (1e-8 if number % 10 == 2 else 0)
                right = rng.random() < rate
                wrong = not right and rng.random() < 0.5
                details.append({'score': [100.0 * right], 'wrong_key': [100.0 * wrong],
                                'depth': [depth]})  # fmt: skip
            result = {
                metric: sum(d[key][0] for d in details) / records
                for metric, key in (('accuracy', 'score'), ('wrong_key', 'wrong_key'))
            }
            result['details'] = details
            (run / 'results' / model / f'{abbr}.json').write_text(json.dumps(result))
    return run


def test_the_report_has_every_metric_by_level_with_intervals_and_depth_maps(pairs, tmp_path):
    from opencompass_lveval.report import write_report

    written = write_report(_run(tmp_path), tmp_path / 'report')
    names = {path.name for path in written}
    for png in ('pairs_kv_accuracy.png', 'pairs_kv_wrong_key.png'):
        assert png in names
    for model in ('m', 'n'):
        assert f'pairs_accuracy_by_answer_depth_{model}.png' in names
        assert f'pairs_wrong_key_by_answer_depth_{model}.png' in names
    report = (tmp_path / 'report' / 'long_context_report.md').read_text()
    for metric in ('accuracy', 'wrong_key'):
        table = report.split(f'Pairs kv: {metric} by level')[1].split('\n\n')[1]
        assert table.splitlines()[0] == '| model | 75 | 140 | 300 |'
        assert re.fullmatch(
            r'\| m( \| \d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]){3} \|', table.splitlines()[2]
        )
    with open(tmp_path / 'report' / 'pairs_accuracy_by_answer_depth_kv_m.csv') as stream:
        depth = list(csv.reader(stream))
    assert depth[0] == ['answer depth (% of context)'] + [
        f'{level} ({what})' for level in ('75', '140', '300') for what in ('accuracy', 'n')
    ]
    # five positions, five rows; 0.49999999 and 0.5 both in the 50% row (4 records per level)
    assert [row[0] for row in depth[1:]] == ['0%', '25%', '50%', '75%', '100%']
    assert [row[2] for row in depth[1:]] == ['4'] * 5
    assert '### kv wrong_key by answer depth (% of context), m (60 of 60 placed)' in report


def test_the_board_gives_every_metric_cells_with_visible_intervals(pairs, tmp_path):
    from opencompass_lveval.leaderboard import write_leaderboard

    _, written = write_leaderboard([_run(tmp_path)], tmp_path / 'board')
    board = json.loads(written[2].read_text())
    assert board['sizes'] == {'pairs': {'kv': ['75', '140', '300']}}  # no empty LV-Eval block
    (row,) = [r for r in board['rows'] if r['label'] == 'm']
    assert list(row['results']) == ['pairs'] and len(row['results']['pairs']) == 3
    assert set(row['results']['pairs']['kv_140']) == {'accuracy', 'wrong_key'}
    assert 'derived' not in row  # no LV-Eval Overall block for a row without LV-Eval
    low, high = row['metric_intervals']['pairs']['wrong_key']['kv_140']
    assert low <= row['results']['pairs']['kv_140']['wrong_key'] <= high and low < high
    with open(written[1], newline='') as stream:
        tidy = [r for r in csv.DictReader(stream) if r['row'] == 'm' and r['level'] == '300']
    assert [r['metric'] for r in tidy] == ['accuracy', 'wrong_key']
    assert all(float(r['low']) <= float(r['value']) <= float(r['high']) for r in tidy)
    page = written[3].read_text()
    for metric in ('accuracy', 'wrong_key'):
        key = 'pairs-kv' if metric == 'accuracy' else 'pairs-kv-wrong_key'
        assert f'<h2>Pairs kv: {metric} by level</h2>' in page
        table = page.split(f'<table id="{key}"')[1].split('</table>')[0]
        text = unescape(re.sub(r'<[^>]+>', ' ', table))
        # the interval is the cell's text, after its value
        values = re.findall(r'(\d+\.\d\d)\s+\[(\d+\.\d\d), (\d+\.\d\d)\]', text)
        assert len(values) == 6  # 2 models x 3 levels
        assert f'text-anchor="middle">{metric} (%)</text>' in page
    assert 'text-anchor="middle">number of pairs (pairs)</text>' in page
    assert 'for LV-Eval' not in page and 'Ada-LEval' not in page
    assert 'answer sits, by length; empty where no record falls' in page  # it has no legend
    assert page.count('<table class="depthmap"') == 4  # 2 rows x 2 metrics
    assert '<figcaption>m: kv wrong_key (60 of 60 records placed)</figcaption>' in page


# Depth maps ---------------------------------------------------------------------------------------


def test_depth_rows_are_declared_or_follow_the_data():
    from opencompass_lveval.report.depth import depth_map

    scores, depths = [100.0, 0.0, 100.0, 50.0, 100.0], [0.0, 0.25, 0.5, 0.75, 1.0]
    found = depth_map('s', 'd', {'75': (scores, depths)}, None)
    assert found.rows == ['0%', '25%', '50%', '75%', '100%']
    assert found.values == [[100.0], [0.0], [100.0], [50.0], [100.0]]
    tenths = depth_map('s', 'd', {'75': (scores, depths)}, 10)
    assert tenths.rows[4:6] == ['40-50%', '50-60%'] and len(tenths.rows) == 10
    declared = depth_map('s', 'd', {'75': (scores, [0.02, 0.27, 0.4999, 0.74, 0.97])}, POSITIONS)
    assert declared.counts == [[1], [1], [1], [1], [1]]
    many = [i / 30 for i in range(30)]
    assert len(depth_map('s', 'd', {'1k': ([0.0] * 30, many)}, None).rows) == 10


# Registration refuses what cannot be used --------------------------------------------------------


def _declared(**attributes) -> type:
    return type('Bad', (Pairs,), attributes)


REFUSED = {
    'underscore': (
        dict(sizes=('7_5', '140')),
        "Bad.sizes (kv) holds '7_5': a level name is letters, digits, '.', '+', '-' (no '_'); "
        'rename it',
    ),
    'duplicate': (
        dict(sizes=('75', '75')),
        "Bad.sizes (kv) names '75' twice: name each level once",
    ),
    'empty': (dict(sizes=('',)), "Bad.sizes (kv) holds '': each level needs a name"),
    'reserved': (
        dict(sizes=('avg',)),
        "Bad.sizes (kv) holds 'avg', which is the average column: rename it",
    ),
    'string': (dict(tasks='kv'), "Bad.tasks is 'kv', not a tuple of names: write ('kv',)"),
    'prefix': (
        dict(prefix='Pairs/x'),
        "Bad.prefix holds 'Pairs/x': a prefix name is letters, digits, '_', '.', '+', '-'; "
        'rename it',
    ),
    'unit': (
        dict(level_unit=None),
        'Bad.level_unit is not declared: its levels (75, 140, 300) are not lengths like 16k; '
        "declare what they count, e.g. level_unit = 'pairs'",
    ),
    'headline': (
        dict(headline_metric='recall'),
        "Bad.metrics ('accuracy', 'wrong_key') leaves out its headline_metric 'recall': list "
        'it, or leave metrics out (default: the headline alone)',
    ),
    'board': (
        dict(board_metrics=('wrong_key',)),
        "Bad.board_metrics ('wrong_key',) leaves out 'accuracy' of its metrics: without them "
        'the leaderboard and reports drop their tables; add them, or leave board_metrics out '
        '(a declared benchmark derives it from metrics)',
    ),
    'metric name': (
        dict(metrics=('accuracy', 'depth')),
        "Bad.metrics holds 'depth', which is a key of every result or its details: rename it",
    ),
    'no scorer': (
        dict(score_reply=DeclaredBenchmark.score_reply),
        'Bad defines no scorer: define score_reply(reply, record) (every metric of one record) '
        'or score_record(prediction, answer) (the headline)',
    ),
    'headline scorer': (
        dict(score_reply=DeclaredBenchmark.score_reply, score_record=lambda self, p, a: 0.0),
        'Bad.score_record gives the headline only, but metrics has 2: define '
        'score_reply(reply, record) returning each',
    ),
    'data file': (
        dict(data_file='pairs.jsonl'),
        "Bad.data_file 'pairs.jsonl' lacks {size}: every cell needs a file of its own",
    ),
    'depth bins': (
        dict(depth_bins=(0.5, 1.5)),
        'Bad.depth_bins (0.5, 1.5) is no number of rows from 1 and no positions from 0 to 1 in '
        'increasing order: declare e.g. 10 (tenths) or (0, 0.25, 0.5, 0.75, 1), or None (the '
        "data's positions)",
    ),
}


@pytest.mark.parametrize('case', sorted(REFUSED))
def test_registration_refuses_a_declaration_it_cannot_use(case):
    attributes, message = REFUSED[case]
    with pytest.raises(BenchmarkError) as error:
        benchmarks._instance(_declared(**attributes), 'the benchmark entry point of test-dist')
    assert str(error.value) == (
        f'the benchmark entry point of test-dist gives a declaration that cannot be used: {message}'
    )


def test_an_installed_plugin_with_a_bad_level_is_left_out_with_its_reason(
    tmp_path, monkeypatch, capsys
):
    """A real dist-info on the path, its entry point naming a declaration with a level ``7_5``."""
    import inspect

    site = tmp_path / 'site'
    info = site / 'bad_levels-1.0.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: bad-levels\nVersion: 1.0\n')
    (info / 'entry_points.txt').write_text(
        f'[{benchmarks.ENTRY_POINT_GROUP}]\nbad = bad_levels_module:Bad\n'
    )
    source = inspect.getsource(Pairs).replace('class Pairs(', 'class Bad(')
    source = source.replace("sizes = ('75', '140', '300')", "sizes = ('7_5',)")
    header = 'import random\nfrom opencompass_lveval.framework.declared import DeclaredBenchmark\n'
    (site / 'bad_levels_module.py').write_text(f'{header}POSITIONS = {POSITIONS}\n\n{source}')
    benchmarks.registered()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delattr(benchmarks, 'BENCHMARKS')
    assert 'pairs' not in [b.name for b in benchmarks.registered()]
    warning = capsys.readouterr().err
    assert "holds '7_5': a level name is letters, digits" in warning
    assert 'bad-levels or uninstall it (pip uninstall bad-levels)' in warning
    with pytest.raises(BenchmarkError, match="Bad.sizes \\(kv\\) holds '7_5'"):
        benchmarks.named('bad')


def test_passkey_build_arguments_keep_their_own_messages(monkeypatch, capsys):
    """The example's build kind uses ``argument_type``: argparse prints the check's message."""
    import argparse

    from runs import REPO

    monkeypatch.syspath_prepend(str(REPO / 'examples' / 'passkey'))
    from passkey_benchmark import Passkey

    (kind,) = Passkey().build_kinds().values()
    parser = argparse.ArgumentParser(prog='build')
    for flag, options in kind.arguments:
        parser.add_argument(flag, **options)
    for given, message in (
        (['--depths', '0,2'], "argument --depths: depths are fractions of the context in [0, 1], "
         "not '0,2'"),
        (['--count', '0'], "argument --count: '0' is not a whole number from 1; give one such as "
         '1, 10 or 200'),
        (['--sizes', '2000'], "argument --sizes: '2000' is not a size: write a whole number of "
         'thousands or millions, like 16k, 512k, 1000k or 1m'),
    ):  # fmt: skip
        with pytest.raises(SystemExit):
            parser.parse_args([*given, '--out', 'x'])
        assert capsys.readouterr().err.splitlines()[-1] == f'build: error: {message}'


def test_opencompass_summary_shows_every_metric_at_every_level(pairs, tmp_path):
    """OpenCompass's own summarizer, given the declaration's summary config, prints a group per
    level and metric and each cell's metrics, equal to the results' means."""
    from mmengine.config import ConfigDict

    from opencompass_lveval.report.summarizer import LongContextSummarizer

    run = _run(tmp_path)
    datasets = pairs.configs(str(tmp_path))
    config = ConfigDict(models=[{'abbr': 'm'}, {'abbr': 'n'}], datasets=datasets, work_dir=str(run))
    LongContextSummarizer(config, **pairs.summary_config(datasets)).summarize(time_str='t')
    with open(run / 'summary' / 'summary_t.csv', newline='') as stream:
        rows = {(r['dataset'], r['metric']): r for r in csv.DictReader(stream)}
    for level in Pairs.sizes:
        result = json.loads((run / 'results' / 'm' / f'Pairs_kv_{level}.json').read_text())
        for metric in ('accuracy', 'wrong_key'):
            cell = rows[(f'Pairs_kv_{level}', metric)]
            assert float(cell['m']) == pytest.approx(result[metric], abs=0.005)
        group = rows[(f'Pairs_{level}_wrong_key', 'naive_average')]
        assert float(group['m']) == pytest.approx(result['wrong_key'], abs=0.005)
        assert float(rows[(f'Pairs_{level}', 'naive_average')]['m']) == pytest.approx(
            result['accuracy'], abs=0.005
        )


def test_a_result_with_a_metric_out_of_range_is_refused_naming_it(pairs, tmp_path):
    from opencompass_lveval.files.errors import ReportError
    from opencompass_lveval.report import write_report

    run = _run(tmp_path, records=5)
    path = run / 'results' / 'm' / 'Pairs_kv_75.json'
    result = json.loads(path.read_text())
    result['details'][3]['wrong_key'] = [250.0]
    path.write_text(json.dumps(result))
    with pytest.raises(ReportError) as error:
        write_report(run, tmp_path / 'report')
    assert str(error.value) == (
        f'{path}: the wrong_key of record 3 in its details is 250% (in percent), not from 0 to '
        '100; re-run its evaluation or remove the file'
    )
