"""The judge's counts per dataset, from literal result records: a judge that rated nothing is
counted and named, not left as an empty cell."""

import json

import pytest

from opencompass_lveval.files.errors import ReportError
from opencompass_lveval.report.judging import judge_tables, unrated_lines
from opencompass_lveval.report.results import read_results


def judged(samples, rated, unparseable, failed, cost=None, tokens=(0, 0)) -> dict:
    record = {
        'model': 'served-judge',
        'samples': samples,
        'rated': rated,
        'unparseable': unparseable,
        'failed': failed,
        'prompt_tokens': tokens[0],
        'completion_tokens': tokens[1],
        'cost_usd': cost,
    }
    return {'score': 12.5, 'judge_diagnostics': '...', 'judge': record}


RESULTS = {
    'chatglm3': {
        'LVEval_cmrc_mixup_16k': judged(40, 30, 8, 2, 0.25, (4000, 120)),
        'LVEval_cmrc_mixup_32k': judged(40, 0, 40, 0, 0.5, (8000, 200)),
        'LVEval_factrecall_en_16k': judged(10, 10, 0, 0, None, (900, 30)),
        'LVEval_lic_mixup_16k': {'score': 3.0},  # not judged
    },
    'unjudged': {'LVEval_cmrc_mixup_16k': {'score': 1.0}},
}


def test_a_row_per_dataset_its_levels_summed_and_one_for_all():
    (table,) = judge_tables(RESULTS)
    assert table.name == 'LLM judge (served-judge) of chatglm3: rated, unparseable, failed, cost'
    assert table.header == [
        'dataset', 'samples', 'rated', 'unparseable', 'failed',
        'prompt tokens', 'completion tokens', 'cost (USD)',
    ]  # fmt: skip
    assert table.rows == [
        ['cmrc_mixup', 80, 30, 48, 2, 12000, 320, 0.75],
        ['factrecall_en', 10, 10, 0, 0, 900, 30, None],  # no prices: no cost
        ['all', 90, 40, 48, 2, 12900, 350, 0.75],
    ]


def test_a_judge_that_rated_nothing_is_named_with_what_came_back():
    (line,) = unrated_lines(RESULTS)
    assert line.startswith(
        'LLM judge: nothing rated for chatglm3 in 1 subsets (LVEval_cmrc_mixup_32k): 40 replies '
        'held no rating, 0 requests failed'
    )
    assert unrated_lines({'m': {'LVEval_cmrc_mixup_16k': judged(40, 1, 39, 0)}}) == []
    # OpenCompass keeps one record per replica: their counts add up.
    replicas = judged(40, 0, 40, 0, 0.5)
    replicas['judge'] = [replicas['judge'], {**replicas['judge'], 'rated': 2, 'unparseable': 38}]
    (table,) = judge_tables({'m': {'LVEval_cmrc_mixup_16k': replicas}})
    assert table.rows[0] == ['cmrc_mixup', 80, 2, 78, 0, 0, 0, 1.0]
    assert judge_tables({'m': {'LVEval_cmrc_mixup_16k': {'score': 1.0}}}) == []


def test_lveval_report_has_the_judge_section(tmp_path):
    """Through ``lveval report``: the section and its CSV, where the judge rated nothing too."""
    import json

    from test_judge_report import judged_run

    from opencompass_lveval.report import write_report

    run = judged_run(tmp_path, judged=())
    path = run / 'results' / 'model-a' / 'LVEval_cmrc_mixup_32k.json'
    path.write_text(json.dumps({**json.loads(path.read_text()), **judged(40, 0, 40, 0, 0.5)}))
    written = write_report(tmp_path)
    report = (run / 'summary' / 'long_context_report.md').read_text()
    assert '### LLM judge (served-judge) of model-a: rated, unparseable, failed, cost' in report
    assert '| cmrc_mixup | 40 | 0 | 40 | 0 | 0 | 0 | 0.50 |' in report
    counts = run / 'summary' / 'judge_counts_model-a.csv'
    assert counts in written
    assert counts.read_text().splitlines()[-1] == 'all,40,0,40,0,0,0,0.5'


def test_judges_of_other_settings_under_one_name_are_told_apart():
    results = {
        'm': {
            'LVEval_cmrc_mixup_16k': judged(10, 10, 0, 0),
            'LVEval_cmrc_mixup_32k': judged(10, 10, 0, 0),
        }
    }
    results['m']['LVEval_cmrc_mixup_16k']['judge']['settings_digest'] = 'aaaa'
    results['m']['LVEval_cmrc_mixup_32k']['judge']['settings_digest'] = 'bbbb'
    (table,) = judge_tables(results)
    assert table.name.startswith('LLM judge (served-judge [settings aaaa, bbbb]) of m:')
    results['m']['LVEval_cmrc_mixup_32k']['judge']['settings_digest'] = 'aaaa'
    assert judge_tables(results)[0].name.startswith('LLM judge (served-judge) of m:')


@pytest.mark.parametrize(
    'key, value',
    [('prompt_tokens', 'abc'), ('rated', 2.5), ('failed', True), ('samples', -1)],
)
def test_a_judge_count_that_is_no_whole_number_is_named_with_its_file(tmp_path, key, value):
    path = tmp_path / 'results' / 'm' / 'LVEval_cmrc_mixup_16k.json'
    path.parent.mkdir(parents=True)
    result = judged(10, 10, 0, 0)
    result['judge'][key] = value
    path.write_text(json.dumps(result))
    with pytest.raises(ReportError) as caught:
        read_results(tmp_path)
    assert str(caught.value) == (
        f'{path}: judge.{key} is {value!r}, not a whole number >= 0; judge the run again or '
        'remove the file'
    )
