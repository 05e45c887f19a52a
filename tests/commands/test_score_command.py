"""``lveval score``: one command for every benchmark's official scorer, found by declaration
(``Benchmark.official_scorer``); LV-Eval's ``lveval score PRED_DIR`` unchanged as the default."""

from __future__ import annotations

import json

import pytest
from hops import Hops

from opencompass_lveval.cli import main
from opencompass_lveval.files.errors import BenchmarkError
from opencompass_lveval.framework import benchmarks
from opencompass_lveval.framework.benchmarks import OfficialScorer, argument

CALLS = []  # the keywords each call of the stand-in scorer got


def score_file(*, file: str, out: str, strict: bool) -> list[str]:
    """A stand-in official scorer: exact match of each JSON line's response and answer, written
    to ``out`` one line each; the arguments it got are recorded."""
    CALLS.append({'file': file, 'out': out, 'strict': strict})
    with open(file, encoding='utf-8') as stream:
        lines = [json.loads(line) for line in stream]
    scores = [float(line['response'].strip() == line['answer']) for line in lines]
    with open(out, 'w', encoding='utf-8') as stream:
        stream.writelines(json.dumps({'score': score}) + '\n' for score in scores)
    return [f'{len(scores)} lines, mean {sum(scores) / len(scores):.2f}']


SCORER = OfficialScorer(
    help='JSON lines of response and answer, scored by exact match',
    arguments=(
        argument('file', metavar='FILE'),
        argument('--out', required=True),
        argument('--strict', action='store_true'),
    ),
    score=score_file,
)


@pytest.fixture
def scored(monkeypatch, tmp_path):
    """Hops with the stand-in scorer, registered after the package's own benchmarks; a file."""
    declared = type('Scored', (Hops,), {'official_scorer': SCORER})()
    own = tuple(b for b in benchmarks.registered() if benchmarks.plugin_of(b) is None)
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*own, declared))
    path = tmp_path / 'replies.jsonl'
    path.write_text(
        '\n'.join(json.dumps(r) for r in ({'response': ' 42', 'answer': '42'},
                                          {'response': '7', 'answer': '8'})) + '\n'
    )  # fmt: skip
    CALLS.clear()
    return path


@pytest.mark.parametrize(
    'argv',
    [
        ['score', '--benchmark', 'hops', '{file}', '--out', '{out}'],
        ['score', '{file}', '--out', '{out}', '--benchmark', 'hops'],
        ['score', '{file}', '--benchmark', 'hops', '--out', '{out}'],
    ],
)
def test_a_declared_scorer_runs_by_name_with_its_own_arguments(argv, scored, tmp_path, capsys):
    out = tmp_path / 'scores.jsonl'
    assert main([a.format(file=scored, out=out) for a in argv]) == 0
    (called,) = CALLS
    assert called == {'file': str(scored), 'out': str(out), 'strict': False}
    assert capsys.readouterr().out == '2 lines, mean 0.50\n'
    assert out.read_text() == '{"score": 1.0}\n{"score": 0.0}\n'


def test_without_benchmark_it_is_lveval_score_pred_dir_as_before(scored, tmp_path, capsys):
    (tmp_path / 'preds').mkdir()
    (tmp_path / 'preds' / 'cmrc_mixup_16k.jsonl').write_text(
        json.dumps({'pred': '北京', 'answers': ['北京']}, ensure_ascii=False) + '\n', 'utf-8'
    )
    assert main(['score', str(tmp_path / 'preds')]) == 0
    assert 'cmrc_mixup  100.0' in capsys.readouterr().out
    result = json.loads((tmp_path / 'preds' / 'eval_result' / 'result.json').read_text())
    assert result == {'cmrc_mixup_16k': 100.0} and not CALLS
    assert main(['score', '--benchmark', 'lveval', str(tmp_path / 'preds')]) == 0


def known() -> str:
    """The names ``--benchmark`` takes here: the package's own scorers' (LV-Eval's first), then
    the stand-in's."""
    from opencompass_lveval.commands.score import scorers

    return ', '.join(scorers())


@pytest.mark.parametrize(
    ('argv', 'message'),
    [
        (['score', '--benchmark', 'needles', 'x'], "no official scorer for benchmark 'needles'; "
         'known: {known}'),
        (['score', '--benchmark', 'adaleval', 'x'], "no official scorer for benchmark "
         "'adaleval'; known: {known}"),
        (['score', '--benchmark', 'hops', 'x'], 'lveval score --benchmark hops: the following '
         'arguments are required: --out (see lveval score --help)'),
        (['score', '--benchmark', 'hops', 'x', '--out', 'y', '--limit', '3'], 'lveval score '
         '--benchmark hops: unrecognized arguments: --limit 3 (see lveval score --help)'),
    ],
)  # fmt: skip
def test_an_unknown_benchmark_or_argument_is_one_error_naming_what_is_known(
    argv, message, scored, capsys
):
    assert known().startswith('lveval, ') and known().endswith(', hops')
    assert main(argv) == 2
    assert capsys.readouterr().err == f'error: {message.format(known=known())}\n'
    assert not CALLS


def test_a_benchmark_with_several_scorers_names_each(scored, monkeypatch, tmp_path, capsys):
    """MRCR's two versions, one benchmark: ``--benchmark`` takes each scorer's own name."""
    first = OfficialScorer('first', SCORER.arguments, score_file, name='hops_first')
    second = OfficialScorer('second', SCORER.arguments, lambda **kw: ['second'], name='hops_v2')
    both = type('Both', (Hops,), {'official_scorer': (first, second)})()
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered()[:-1], both))
    assert known().endswith(', hops_first, hops_v2')
    out = tmp_path / 'out.jsonl'
    assert main(['score', '--benchmark', 'hops_v2', str(scored), '--out', str(out)]) == 0
    assert capsys.readouterr().out == 'second\n' and not CALLS
    assert main(['score', '--benchmark', 'hops_first', str(scored), '--out', str(out)]) == 0
    assert len(CALLS) == 1
    unnamed = type('Unnamed', (Hops,), {'official_scorer': (SCORER, SCORER)})
    with pytest.raises(BenchmarkError, match='holds several scorers under one name: give each'):
        benchmarks._instance(unnamed, 'the entry point')


def test_help_shows_every_scorer_with_its_arguments(scored, capsys):
    with pytest.raises(SystemExit):
        main(['score', '--help'])
    shown = capsys.readouterr().out
    assert '--benchmark lveval PRED_DIR\n      official-format prediction files' in shown
    assert '--benchmark hops FILE --out OUT [--strict]\n      JSON lines of response' in shown
    assert f'(default: lveval; known: {known()})' in ' '.join(shown.split())


def test_a_scorer_taking_benchmark_is_refused_at_registration():
    taken = OfficialScorer('x', (argument('--benchmark'),), score_file)
    with pytest.raises(BenchmarkError, match='Bad.official_scorer declares --benchmark, which is'):
        benchmarks._instance(type('Bad', (Hops,), {'official_scorer': taken}), 'the entry point')
