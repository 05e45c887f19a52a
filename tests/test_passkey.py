"""examples/passkey, a third benchmark outside the package, installed by its entry point (a
dist-info on the path, as ``pip install examples/passkey`` leaves one) and followed through
``data synth``, ``data check``, ``build``, and the conformance kit (an OpenCompass run with the CPU
baselines, the report and the leaderboard). The example's own tests (examples/passkey/tests) run
the kit from the example's folder once it is installed."""

from __future__ import annotations

import json
import os
import re

import pytest
from runs import REPO, results

from opencompass_lveval.cli import main
from opencompass_lveval.framework import benchmarks
from opencompass_lveval.testing import check_benchmark

EXAMPLE = REPO / 'examples' / 'passkey'
NEEDLE = re.compile(r'The pass key is (\d{5})\. Remember it\. \1 is the pass key\.')


def _entry_point() -> str:
    """The example's own entry point line, read from its pyproject.toml."""
    text = (EXAMPLE / 'pyproject.toml').read_text()
    section = text.split('[project.entry-points."opencompass_lveval.benchmarks"]')[1]
    return section.strip().splitlines()[0].replace('"', '')


@pytest.fixture
def passkey(tmp_path, monkeypatch):
    """The example installed for this test and the OpenCompass tasks it starts."""
    benchmarks.registered()  # loaded now, so the registry as it was comes back afterwards
    site = tmp_path / 'site'
    info = site / 'opencompass_lveval_passkey-0.1.0.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: opencompass-lveval-passkey\n')
    (info / 'entry_points.txt').write_text(f'[{benchmarks.ENTRY_POINT_GROUP}]\n{_entry_point()}\n')
    for folder in (EXAMPLE, site):
        monkeypatch.syspath_prepend(str(folder))
    path = os.pathsep.join([str(site), str(EXAMPLE), os.environ.get('PYTHONPATH', '')])
    monkeypatch.setenv('PYTHONPATH', path.rstrip(os.pathsep))
    monkeypatch.delattr(benchmarks, 'BENCHMARKS')
    return benchmarks.named('passkey')


def test_the_example_is_small_and_the_package_never_names_it():
    lines = sum(len(p.read_text().splitlines()) for p in EXAMPLE.rglob('*.py'))
    assert lines <= 300
    package = REPO / 'opencompass_lveval'
    named = [p for p in package.rglob('*') if p.is_file() and b'passkey' in p.read_bytes().lower()]
    assert named == []


def test_synthetic_records_hide_the_key_at_ten_depths(passkey, tmp_path, capsys):
    assert main(['data', 'synth', str(tmp_path / 'data'), '--count', '1']) == 0
    assert 'wrote 2 Passkey files (10 records each)' in capsys.readouterr().out
    for size, words in (('2k', 2000), ('4k', 4000)):
        lines = (tmp_path / 'data' / 'passkey' / f'passkey_{size}.jsonl').read_text().splitlines()
        records = [json.loads(line) for line in lines]
        tenths = []
        for record in records:
            (needle,) = NEEDLE.finditer(record['context'])
            assert needle[1] == record['answer']
            assert record['depth'] == record['context'].index(record['answer']) / len(
                record['context']
            )
            assert abs(len(record['context'].split()) - words) < 0.02 * words
            tenths.append(int(record['depth'] * 10))
        assert tenths == list(range(10))
    assert main(['data', 'check', str(tmp_path / 'data'), '--benchmark', 'passkey']) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        'passkey_2k.jsonl  10  ok',
        'passkey_4k.jsonl  10  ok',
    ]


def test_build_writes_any_length_and_depth_and_check_names_a_bad_line(passkey, tmp_path, capsys):
    out = tmp_path / 'built'
    arguments = ['--sizes', '8k', '--depths', '0,1', '--count', '3', '--out', str(out)]
    assert main(['build', 'passkey', *arguments]) == 0
    records = [json.loads(line) for line in (out / 'passkey_8k.jsonl').read_text().splitlines()]
    assert [r['depth'] < 0.05 for r in records] == [True, False, True]
    assert [r['depth'] > 0.95 for r in records] == [False, True, False]
    capsys.readouterr()
    (out / 'passkey_8k.jsonl').write_text('{"context": "x"}\n')
    assert main(['data', 'check', str(out), '--benchmark', 'passkey']) == 1
    assert f'{out / "passkey_8k.jsonl"}, line 1: expected an object with' in capsys.readouterr().out


@pytest.mark.parametrize(
    ('reply', 'score'),
    [('38021', 100.0), (' The pass key is 38021.', 100.0), ('38020', 0.0), ('', 0.0)],
)
def test_exact_match_takes_the_first_number_of_the_reply(passkey, reply, score):
    assert passkey.score_record(reply, '38021') == score
    assert passkey.score_record('12 then 38021', '38021') == 0.0


def test_the_prompt_is_the_record_and_the_random_baseline_knows_it(passkey):
    import random

    from opencompass.registry import ICL_PROMPT_TEMPLATES

    from opencompass_lveval.models.template import prompt_parser

    (config,) = passkey.configs('data', sizes=['2k'])
    (record,) = passkey.synthetic_records('retrieval', '2k', 1, seed=0)
    template = ICL_PROMPT_TEMPLATES.build(config['infer_cfg']['prompt_template'])
    (message,) = prompt_parser().parse_template(template.generate_item(record), 'gen')
    text = message['prompt']
    assert message['role'] == 'HUMAN' and text == f'{record["context"]}\n\n{record["input"]}'
    answer = passkey.random_answer(text, random.Random(0))
    assert (
        re.fullmatch(r'\d{5}', answer) and passkey.random_answer('other', random.Random(0)) is None
    )


def test_published_rows_come_from_the_declared_file(passkey, tmp_path, monkeypatch):
    table = tmp_path / 'published.csv'
    table.write_text(
        'model,source,task,size,score\nM,Paper (Table 2),retrieval,4k,97.5\nN,Paper,retrieval,2k,\n'
    )
    monkeypatch.setattr(passkey, 'published_file', table)
    assert list(passkey.published()) == [
        ('M', 'Paper (Table 2)', ('retrieval', '4k'), {'score': 97.5})
    ]


def test_the_example_config_parses_its_datasets(passkey):
    from mmengine.config import Config

    cfg = Config.fromfile(str(EXAMPLE / 'eval_passkey.py'), format_python_code=False)
    assert [d['abbr'] for d in cfg.datasets] == ['Passkey_retrieval_2k', 'Passkey_retrieval_4k']
    assert cfg.summarizer['dataset_abbrs'][:2] == ['Passkey_2k', 'Passkey_4k']


def test_a_cell_has_one_interval_in_the_report_and_on_the_board(passkey, tmp_path):
    """The per-task report resamples a cell as the board does (keyed by benchmark, task and
    size), so both print the same interval for it."""
    import csv
    import random

    from opencompass_lveval.leaderboard import write_leaderboard
    from opencompass_lveval.report import write_report

    rng = random.Random(5)
    run = tmp_path / 'work' / '20260101_000000'
    (run / 'results' / 'm').mkdir(parents=True)
    (run / 'configs').mkdir()
    (run / 'configs' / 'c.py').write_text(
        'models = [{"abbr": "m"}]\ndatasets = [{"abbr": "Passkey_retrieval_2k"}]\n'
    )
    scores = [100.0 * (rng.random() < 0.6) for _ in range(25)]
    details = [{'score': [score], 'depth': [0.5]} for score in scores]
    result = {'score': sum(scores) / 25, 'details': details}
    (run / 'results' / 'm' / 'Passkey_retrieval_2k.json').write_text(json.dumps(result))
    write_report(run, tmp_path / 'report')
    write_leaderboard([run], tmp_path / 'board')
    with open(tmp_path / 'report' / 'intervals.csv', newline='') as stream:
        (reported,) = [r for r in csv.DictReader(stream) if r['column'] == '2k']
    with open(tmp_path / 'board' / 'leaderboard.csv', newline='') as stream:
        (boarded,) = [r for r in csv.DictReader(stream) if r['level'] == '2k']
    assert float(reported['low']) < float(reported['high'])  # not a degenerate interval
    assert (reported['low'], reported['high']) == (boarded['low'], boarded['high'])


@pytest.mark.slow
def test_end_to_end_through_the_conformance_kit(passkey, tmp_path):
    """The kit's one OpenCompass run, report and leaderboard (what the example's own test runs),
    then what is particular to Passkey in what it wrote."""
    check_benchmark('passkey', tmp_path)
    for model, expected in (('extractive-bm25', 100.0), ('random-guess', 0.0)):
        found = results(tmp_path, model)
        assert sorted(found) == ['Passkey_retrieval_2k', 'Passkey_retrieval_4k']
        for result in found.values():
            assert result['score'] == expected and len(result['details']) == 10
            # OpenCompass keeps each detail value in a list (one item per replica).
            depths = [detail['depth'][0] for detail in result['details']]
            assert [int(10 * d) for d in depths] == list(range(10))
    report = (tmp_path / 'report' / 'long_context_report.md').read_text()
    row = '| extractive-bm25 (synthetic data) | 100.00 [100.00, 100.00] | 100.00 [100.00, 100.00] |'
    assert row in report  # measured on seeded synthetic data, labelled so as on the board
    assert (tmp_path / 'report' / 'passkey_score_by_answer_depth_random-guess.png').is_file()
    tidy = (tmp_path / 'board' / 'leaderboard.csv').read_text().splitlines()
    # The kit wrote the data as `data synth` does, so the rows say so (kind `synthetic`).
    row = 'random-guess (synthetic data),synthetic,passkey,retrieval,retrieval,4k,score,0.0,0.0,0.0'
    assert row in tidy
    page = (tmp_path / 'board' / 'leaderboard.html').read_text()
    assert 'for Passkey the tenth of the context where the key first occurs' in page
    # The plot's axes are the benchmark's: its sizes in its unit (words), its headline; no
    # LV-Eval words, and no legend of a benchmark the board does not show.
    assert 'text-anchor="middle">size (words)</text>' in page and 'length level' not in page
    assert 'text-anchor="middle">score (%)</text>' in page and 'for LV-Eval' not in page
