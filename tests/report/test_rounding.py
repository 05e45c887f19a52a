"""One rounding rule: the same quantity shows the same number wherever it is printed."""

import pytest

from opencompass_lveval.report.rounding import rounded, shown
from opencompass_lveval.report.writers import csv_cell, markdown_cell

SCORES = [21.66, 42.21, 2.9, 22.17]  # official subset scores; their mean is 22.235


def test_an_average_summed_in_either_order_shows_one_number():
    forward, backward = sum(SCORES) / 4, sum(SCORES[::-1]) / 4
    assert forward != backward  # the float sums differ in their last bit ...
    assert f'{forward:.2f}' != f'{backward:.2f}'  # ... which '%.2f' turned into 22.24 and 22.23
    assert shown(forward) == shown(backward) == '22.24'  # half-up, once the noise is dropped
    assert markdown_cell(forward) == markdown_cell(backward) == '22.24'
    assert csv_cell(forward) == csv_cell(backward) == 22.24


@pytest.mark.parametrize(
    'value, expected',
    [(0.125, '0.13'), (2.675, '2.68'), (44.365, '44.37'), (-1.005, '-1.01'), (7.0, '7.00'),
     (99.99499999, '99.99'), (26.16, '26.16')],
)  # fmt: skip
def test_half_up_at_two_decimals(value, expected):
    assert shown(value) == expected and rounded(value) == float(expected)


def test_depth_map_counts_are_black_on_light_cells_and_white_on_dark_ones():
    import matplotlib

    from opencompass_lveval.report.plots import ink

    shades = matplotlib.colormaps['RdYlGn']
    assert ink(shades(0.0)) == 'white' and ink(shades(1.0)) == 'white'  # dark red, dark green
    assert ink(shades(0.5)) == 'black' and ink((1, 1, 1, 1)) == 'black'  # yellow, white
    assert ink((0, 0, 0, 1)) == 'white'


# One model's LV-Eval scores as the demo's extractive baseline got them (dataset -> its five
# levels): single_hop_qa averages 44.44 and 44.29, exactly 44.365, and the level averages round
# down where their mean rounds up.
DEMO = {
    'hotpotwikiqa_mixup': ['44.44', '44.44', '44.44', '33.33', '33.33'],
    'multifieldqa_zh_mixup': ['40.00'] * 5,
    'factrecall_zh': ['40.00'] * 5,
    'cmrc_mixup': ['44.29'] * 5,
    'lic_mixup': ['40.00'] * 5,
    'dureader_mixup': ['66.67'] * 5,
}


def half_up(values) -> str:
    """The exact mean of scores given as text, half-up at two decimals: the reference."""
    from decimal import ROUND_HALF_UP, Decimal

    exact = sum(Decimal(v) for v in values) / len(values)
    return str(exact.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP))


def score_run(root, seed=3):
    """A run folder whose results are scores as text: the demo's, and random two-decimal ones."""
    import json
    import random

    from opencompass_lveval.lveval.tasks import LEVELS, TASKS

    rng = random.Random(seed)
    scores = {
        'demo': {t.name: DEMO.get(t.name, ['44.44'] * 5) for t in TASKS},
        **{
            f'random-{i}': {
                t.name: [f'{rng.randrange(10000) / 100:.2f}' for _ in LEVELS] for t in TASKS
            }
            for i in range(3)
        },
    }
    run = root / '20260101_000000'
    abbrs = [t.abbr(level) for t in TASKS for level in LEVELS]
    (run / 'configs').mkdir(parents=True)
    (run / 'configs' / 'c.py').write_text(
        f'models = {json.dumps([{"abbr": m} for m in scores])}\n'
        f'datasets = {json.dumps([{"abbr": a} for a in abbrs])}\n'
    )
    for model, by_task in scores.items():
        (run / 'results' / model).mkdir(parents=True)
        for task in TASKS:
            for level, text in zip(LEVELS, by_task[task.name]):
                path = run / 'results' / model / f'{task.abbr(level)}.json'
                path.write_text(f'{{"score": {text}}}')
    return run, scores


def test_one_quantity_is_one_number_in_every_table_csv_board_and_summary(tmp_path):
    """The Overall per level, its average over levels and a task type's average, read from the
    report's level table, its dataset table (CSV and Markdown), the board (Markdown, CSV, JSON)
    and OpenCompass's summary, equal the exact mean of the raw scores rounded half-up once."""
    import csv
    import json

    from mmengine.config import ConfigDict

    from opencompass_lveval.framework.benchmarks import named
    from opencompass_lveval.leaderboard import write_leaderboard
    from opencompass_lveval.lveval.tasks import GROUPS, LEVELS, TASKS
    from opencompass_lveval.report import write_report
    from opencompass_lveval.report.summarizer import LongContextSummarizer

    run, scores = score_run(tmp_path)

    def expected(model):
        grid = scores[model]
        found = {lv: half_up([grid[t.name][i] for t in TASKS]) for i, lv in enumerate(LEVELS)}
        found['avg'] = half_up([v for values in grid.values() for v in values])
        for group in GROUPS:
            found[group] = half_up([v for t in TASKS if t.group == group for v in grid[t.name]])
        return found

    def read(path):
        with open(path, newline='') as stream:
            return list(csv.reader(stream))

    write_report(run)
    levels = {row[0]: dict(zip(read(run / 'summary' / 'lveval_levels.csv')[0][1:], row[1:]))
              for row in read(run / 'summary' / 'lveval_levels.csv')[1:]}  # fmt: skip
    markdown = (run / 'summary' / 'long_context_report.md').read_text()
    write_leaderboard([run], tmp_path / 'board')
    tidy = read(tmp_path / 'board' / 'leaderboard.csv')
    board_md = (tmp_path / 'board' / 'leaderboard.md').read_text()
    board_json = json.loads((tmp_path / 'board' / 'leaderboard.json').read_text())
    lveval = named('lveval')
    datasets = lveval.demo_datasets(str(tmp_path))  # the 55 configs: the summary needs them
    config = ConfigDict(models=[{'abbr': m} for m in scores], datasets=datasets, work_dir=str(run))
    LongContextSummarizer(config, **lveval.summary_config(datasets)).summarize(time_str='t')
    summary = read(run / 'summary' / 'summary_t.csv')
    columns = summary[0]
    for model in scores:
        want = expected(model)
        table = {row[0]: dict(zip(['16k', '32k', '64k', '128k', '256k', 'avg'], row[1:]))
                 for row in read(run / 'summary' / f'lveval_{model}.csv')[1:]}  # fmt: skip
        shown = {key: f'{float(v):.2f}' for key, v in levels[model].items()}
        assert shown == {key: want[key] for key in [*LEVELS, 'avg']}, model
        assert {k: f'{float(v):.2f}' for k, v in table['Overall'].items()} == shown
        for group in GROUPS:
            assert f'{float(table[group]["avg"]):.2f}' == want[group], (model, group)
        assert f'| {model} | ' + ' | '.join(want[k] for k in [*LEVELS, 'avg']) + ' |' in markdown
        overall = {row[5]: row[7] for row in tidy if row[0] == model and row[3] == 'overall'}
        assert {k: f'{float(v):.2f}' for k, v in overall.items()} == shown
        groups = {row[4]: row[7] for row in tidy if row[0] == model and row[3] == 'group'}
        assert {g: f'{float(v):.2f}' for g, v in groups.items()} == {g: want[g] for g in GROUPS}
        line = next(line for line in board_md.splitlines() if line.startswith(f'| {model} | '))
        assert [cell.split(' [')[0] for cell in line.split(' | ')[1:7]] == [
            want[k] for k in [*LEVELS, 'avg']
        ]
        row = next(r for r in board_json['rows'] if r['label'] == model)
        derived = row['derived']['lveval']
        assert f'{derived["avg"]:.2f}' == want['avg']
        assert {k: f'{v:.2f}' for k, v in derived['overall'].items()} == {
            k: want[k] for k in LEVELS
        }
        column = columns.index(model)
        summarized = {line[0]: line[column] for line in summary[1:]}
        assert summarized['LVEval_qa'] == want['avg'], model
        assert all(summarized[f'LVEval_{lv}'] == want[lv] for lv in LEVELS), model
        assert all(summarized[f'LVEval_{g}'] == want[g] for g in GROUPS), model
    assert expected('demo')['single_hop_qa'] == '44.37'  # the tie 44.365: half-up
    assert expected('demo')['avg'] == '44.83'  # the rounded level averages would make 44.84
