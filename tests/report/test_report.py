"""Per-length reports from a recorded OpenCompass run: the numbers in the tables are the ones the
per-sample results imply, and missing results give clear errors."""

import csv
import json
import random
import re

import pytest
from parity_data import REPO

from opencompass_lveval.cli import main
from opencompass_lveval.files.errors import ReportError
from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.lveval.metrics import subset_score
from opencompass_lveval.lveval.tasks import LEVELS, TASKS, TASKS_BY_NAME
from opencompass_lveval.report import write_report

LVEVAL = named('lveval')
depth_maps, record_depths = LVEVAL.depth_maps, LVEVAL.record_depths


def recorded_run(root, models=('model-a', 'model-b'), samples=20, seed=0):
    """A run folder as OpenCompass leaves it: one result file per (model, dataset), the score
    computed from per-sample details the way LVEvalEvaluator does."""
    rng = random.Random(seed)
    run = root / '20260101_000000'
    per_sample = {}
    for model in models:
        folder = run / 'results' / model
        folder.mkdir(parents=True)
        for task in TASKS:
            for depth, level in enumerate(LEVELS):
                scores = [float(rng.random() < 0.8 - 0.15 * depth) for _ in range(samples)]
                per_sample[model, task.abbr(level)] = scores
                details = [
                    {'example_abbr': f'{task.abbr(level)}_{i}', 'score': [s]}
                    for i, s in enumerate(scores)
                ]
                if task.answer_in_context:
                    write_predictions(run, model, task, level, details, rng)
                (folder / f'{task.abbr(level)}.json').write_text(
                    json.dumps({'score': subset_score(scores), 'details': details})
                )
        for setting, accuracy in (('1k', 30.0), ('2k', 12.5)):
            (folder / f'AdaLEval_bestanswer_{setting}.json').write_text(
                json.dumps(
                    {
                        'accuracy': accuracy,
                        'instruction_following': 90.0,
                        'copy_instruction': 5.0,
                        'copy_instruction_chance': 3.0,
                        'random_guess': 26.16,
                        'details': [],
                    }
                )
            )
    return run, per_sample


def write_predictions(run, model, task, level, details, rng):
    """The run's predictions for a dataset whose answer is in its context: each origin prompt
    the dataset's template filled with a context holding the answer (also in the details) at a
    random depth, recorded as ``depth`` for the test to read back."""
    folder = run / 'predictions' / model
    folder.mkdir(parents=True, exist_ok=True)
    predictions = {}
    for index, detail in enumerate(details):
        at = rng.randrange(100)
        context = 'x' * at + 'NEEDLE' + 'y' * (99 - at)  # 105 characters, the answer at `at`
        detail['answer'] = ['NEEDLE']  # OpenCompass wraps each value in a list
        detail['depth'] = at / len(context)
        prompt = task.prompt.format(context=context, input='Where is it?')
        predictions[str(index)] = {'origin_prompt': prompt, 'prediction': '', 'gold': ['NEEDLE']}
    (folder / f'{task.abbr(level)}.json').write_text(json.dumps(predictions))


def read_csv(path):
    with open(path, newline='') as stream:
        return list(csv.reader(stream))


def test_tables_match_the_per_sample_results(tmp_path):
    run, per_sample = recorded_run(tmp_path)
    written = write_report(tmp_path)  # the -w folder: its newest run is used
    assert all(path.parent == run / 'summary' for path in written)
    for model in ('model-a', 'model-b'):
        rows = {row[0]: row[1:] for row in read_csv(run / 'summary' / f'lveval_{model}.csv')}
        for task in TASKS:
            for column, level in enumerate(LEVELS):
                expected = subset_score(per_sample[model, task.abbr(level)])
                assert float(rows[task.name][column]) == pytest.approx(expected, abs=0.005)
        for column, level in enumerate(LEVELS):
            level_scores = [subset_score(per_sample[model, t.abbr(level)]) for t in TASKS]
            assert float(rows['Overall'][column]) == pytest.approx(
                sum(level_scores) / len(level_scores), abs=0.005
            )
        single_hop = [
            subset_score(per_sample[model, t.abbr(level)])
            for t in TASKS
            if t.group == 'single_hop_qa'
            for level in LEVELS
        ]
        assert float(rows['single_hop_qa'][-1]) == pytest.approx(
            sum(single_hop) / len(single_hop), abs=0.005
        )
    levels = read_csv(run / 'summary' / 'lveval_levels.csv')
    assert levels[0] == ['model'] + list(LEVELS) + ['avg']
    assert [row[0] for row in levels[1:]] == ['model-a', 'model-b']
    model_a = {row[0]: row[1:] for row in read_csv(run / 'summary' / 'lveval_model-a.csv')}
    assert levels[1][1:6] == model_a['Overall'][:5]
    ada = read_csv(run / 'summary' / 'adaleval_bestanswer_model-a.csv')
    assert ada[0] == ['metric', '1k', '2k'] and ada[1] == ['accuracy', '30.0', '12.5']
    assert ada[5] == ['random_guess', '26.16', '26.16']
    names = {path.name for path in written}
    assert {
        'lveval_levels.png',
        'adaleval_bestanswer_accuracy.png',
        'lveval_score_by_answer_depth_model-a.png',
        'long_context_report.md',
    } <= names
    assert 'tsort' not in ' '.join(names)  # no TSort results, no TSort table or plot
    markdown = (run / 'summary' / 'long_context_report.md').read_text()
    assert '| model | 16k | 32k | 64k | 128k | 256k | avg |' in markdown
    # What the brackets beside the numbers are, said once before the tables.
    assert markdown.startswith(
        '[low, high]: 95% percentile bootstrap interval over records (1,000 seeded resamples); '
        'averages over datasets resample within each dataset.\n'
    )
    assert re.search(r'\| \d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] \|', markdown)
    plots = sorted(path.name for path in written if path.suffix == '.png')
    linked = re.findall(r'^!\[[^]]*\]\(([^)]+)\)$', markdown, re.M)  # every plot, beside it
    assert sorted(linked) == plots and all((run / 'summary' / name).is_file() for name in linked)


def percent_scores(results):
    return {
        abbr: [100 * d['score'][0] for d in r['details']]
        for abbr, r in results.items()
        if r.get('details')
    }


def test_depth_map_cells_are_the_means_per_depth_bin(tmp_path):
    run, per_sample = recorded_run(tmp_path, models=('m',), samples=30)
    results = {p.stem: json.loads(p.read_text()) for p in (run / 'results' / 'm').glob('*.json')}
    depths = {
        abbr: found
        for abbr, result in results.items()
        if (found := record_depths(run, 'm', abbr, result)) is not None
    }
    assert {abbr.rpartition('_')[0] for abbr in depths} == {
        f'LVEval_{t.name}' for t in TASKS if t.answer_in_context
    }
    maps = {m.dataset: m for m in depth_maps(results, percent_scores(results), depths)}
    found = maps['factrecall_en']
    assert found.columns == list(LEVELS) and len(found.rows) == 10
    assert found.placed == found.records == 30 * len(LEVELS)
    for column, level in enumerate(LEVELS):  # a direct loop over the records
        details = results[f'LVEval_factrecall_en_{level}']['details']
        assert [d['depth'] for d in details] == pytest.approx(
            depths[f'LVEval_factrecall_en_{level}']
        )
        for depth_bin in range(10):
            scores = [100 * d['score'][0] for d in details if int(d['depth'] * 10) == depth_bin]
            expected = sum(scores) / len(scores) if scores else None
            assert found.counts[depth_bin][column] == len(scores)
            assert found.values[depth_bin][column] == pytest.approx(expected)
    # a record whose answer is not in its context is left out, and counted
    results['LVEval_cmrc_mixup_16k']['details'][0]['answer'] = ['absent']
    depths['LVEval_cmrc_mixup_16k'] = record_depths(
        run, 'm', 'LVEval_cmrc_mixup_16k', results['LVEval_cmrc_mixup_16k']
    )
    cmrc = {m.dataset: m for m in depth_maps(results, percent_scores(results), depths)}[
        'cmrc_mixup'
    ]
    assert (cmrc.placed, cmrc.records) == (30 * len(LEVELS) - 1, 30 * len(LEVELS))
    assert TASKS_BY_NAME['factrecall_zh'].answer_in_context


def test_report_command_and_its_errors(tmp_path, capsys):
    assert main(['report', str(tmp_path)]) == 2
    assert 'holds no OpenCompass results' in capsys.readouterr().err
    (tmp_path / 'run' / 'results').mkdir(parents=True)
    assert main(['report', str(tmp_path / 'run')]) == 2
    assert 'evaluation did not finish' in capsys.readouterr().err
    recorded_run(tmp_path / 'work', models=('solo',))
    assert main(['report', str(tmp_path / 'work'), '--out', str(tmp_path / 'report')]) == 0
    out = capsys.readouterr().out
    assert '### LV-Eval: Overall by length level' in out
    assert (tmp_path / 'report' / 'lveval_solo.csv').exists()


def test_unreadable_result_file_is_named(tmp_path):
    run, _ = recorded_run(tmp_path, models=('m',))
    (run / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json').write_text('{broken')
    with pytest.raises(ReportError, match='LVEval_cmrc_mixup_16k.json is not valid JSON'):
        write_report(run)


@pytest.mark.parametrize(
    'text, message',
    [
        # Python reads 1e400 as infinity, which no table can round.
        (
            '{"score": 50.0, "details": [{"score": [1e400]}]}',
            'LVEval_cmrc_mixup_16k.json is not valid JSON (the number 1e400 is too large',
        ),
        ('{"score": 1' + '0' * 400 + '}', 'the number 1000000000000000000000000000000000000000...'),
        (
            '{"score": 50.0, "details": [{"score": [0.5]}, {"score": [-3.0]}]}',
            'LVEval_cmrc_mixup_16k.json: the score of record 1 in its details is -300% (in '
            'percent), not from 0 to 100',
        ),
    ],
)
def test_numbers_no_table_can_hold_are_named_with_their_file(tmp_path, text, message):
    run, _ = recorded_run(tmp_path, models=('m',))
    (run / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json').write_text(text)
    with pytest.raises(ReportError) as caught:
        write_report(run)
    assert message in str(caught.value)


def test_the_summary_prints_one_table_and_where_the_report_is(tmp_path, capsys):
    from mmengine.config import Config, ConfigDict

    from opencompass_lveval.report.summarizer import LongContextSummarizer

    run, _ = recorded_run(tmp_path, models=('model-a',), samples=4)
    shipped = REPO / 'configs' / 'datasets' / 'lveval'
    datasets = Config.fromfile(str(shipped / 'lveval_gen.py'), format_python_code=False)[
        'lveval_datasets'
    ]
    abbrs = [d['abbr'] for d in datasets]
    config = ConfigDict(
        models=[{'abbr': 'model-a', 'type': 'x'}], datasets=datasets, work_dir=str(run)
    )
    LongContextSummarizer(config, dataset_abbrs=abbrs[:3]).summarize(time_str='t')
    out = capsys.readouterr().out
    assert sum(line.startswith('dataset ') for line in out.splitlines()) == 1  # one table
    assert '| dataset |' not in out and 'markdown format' not in out
    assert f'summary files (txt, csv, md): {run / "summary"}' in out
    assert (
        f'per-length report (tables, CSV, plots): {run / "summary" / "long_context_report.md"}'
        in out
    )
    assert (run / 'summary' / 'summary_t.md').is_file()  # OpenCompass's files are still written


def test_an_average_is_not_rounded_before_it_is_shown():
    """``mean`` keeps the raw value, the same whatever the floats' order; the tables round it
    once, half-up: the demo's single-hop QA row is 44.365, shown 44.37 as in the summary."""
    from opencompass_lveval.report.rounding import shown
    from opencompass_lveval.report.tables import mean

    pair = [44.44, 44.29]  # exactly 44.365
    assert sum(pair) / 2 != sum(pair * 5) / 10  # the plain float sums disagree
    assert mean(pair) == mean(pair * 5) == mean(pair[::-1])
    assert shown(mean(pair)) == '44.37'
    assert mean([0.5, 0.0, 0.0, 0.0]) == 0.125 and mean([1 / 3, 1 / 3, 1 / 3]) == 1 / 3
    assert mean([1.0, None]) is None and mean([]) is None


def test_lines_on_the_same_values_stay_apart():
    """Two baselines at 0 (TSort): each line its own marker and dash, each later one narrower
    with smaller marks, so the first shows around the second."""
    from opencompass_lveval.report.plots import line_look

    looks = [line_look(number) for number in range(4)]
    assert len({(look['marker'], look['linestyle']) for look in looks}) == 4
    widths = [(look['linewidth'], look['markersize']) for look in looks]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[1]


def test_a_line_at_zero_is_drawn_above_the_axis():
    from opencompass_lveval.report.plots import y_limits

    bottom, top = y_limits([[0.0, 0.0], [None, 12.5]])
    assert bottom < 0 < 12.5 < top
    assert y_limits([[0.0, None]]) == (-0.042, 1.05)


@pytest.mark.slow  # seconds: a whole report drawn
def test_names_from_run_folders_cannot_forge_tables_or_files(tmp_path):
    """A model named like a report file, or with Markdown, HTML or a formula in its name, stays
    one cell of one row and names no other file."""
    names = ('levels', 'ok | FAKE | 99.00 |<img src=x onerror=alert(1)>', '=HYPERLINK("x")')
    run, _ = recorded_run(tmp_path, models=names, samples=4)
    written = write_report(run)
    stems = sorted(p.stem for p in written if p.suffix == '.csv')
    assert 'lveval_levels' in stems and 'lveval_levels_2' in stems  # no overwrite
    levels = read_csv(run / 'summary' / 'lveval_levels.csv')
    assert sorted(row[0] for row in levels[1:]) == sorted(['levels', names[1], "'" + names[2]])
    markdown = (run / 'summary' / 'long_context_report.md').read_text()
    assert '| ok \\| FAKE \\| 99.00 \\|&lt;img src=x onerror=alert(1)&gt; |' in markdown
    assert '<img' not in markdown
    forged = [line for line in markdown.splitlines() if 'FAKE' in line and line.startswith('| ')]
    assert forged and all(line.replace('\\|', '').count('|') == 8 for line in forged)


def test_per_record_scores_read_opencompass_details_as_it_writes_them():
    """OpenCompass wraps every per-sample value of ``details`` in a list (one per replica): an
    Ada-LEval record with ``"correct": [False]`` is wrong, not a non-empty list taken as true."""
    ada_scores, lveval_scores = named('adaleval').record_scores, LVEVAL.record_scores

    details = [{'correct': [False]}, {'correct': [True]}, {'correct': False}]
    assert ada_scores({'details': details}) == [0.0, 100.0, 0.0]
    assert ada_scores({'details': [{'correct': ['yes']}]}) is None
    assert lveval_scores({'details': [{'score': [0.25]}, {'score': 1.0}]}) == [25.0, 100.0]


def test_error_bars_take_a_score_a_hair_outside_its_interval(tmp_path):
    """A two-decimal score beside a degenerate interval of the unrounded mean (33.33 against
    [33.333.., 33.333..]) draws, where matplotlib refuses negative error bars."""
    from opencompass_lveval.report.plots import plot_lines

    path = tmp_path / 'plot.png'
    third = 100 / 3
    plot_lines(path, 't', ['16k'], {'m': [33.33]}, 'x', 'y', errors={'m': [(third, third)]})
    assert path.stat().st_size > 0
