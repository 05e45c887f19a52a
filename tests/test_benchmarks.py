"""The Benchmark interface: a toy benchmark registered beside the two real ones appears in data
check, synthetic data, reports and leaderboards without any shared module naming it."""

from __future__ import annotations

import json
import re

import pytest

from opencompass_lveval import benchmarks
from opencompass_lveval.benchmarks import Benchmark
from opencompass_lveval.tables import BoardLine, BoardTable, Table


class Echo(Benchmark):  # the README's toy benchmark, line for line
    name, title = 'echo', 'Echo'

    def split_abbr(self, abbr):
        found = re.fullmatch(r'Echo_(\w+)_(\d+k)', abbr)
        return (found[1], found[2]) if found else None

    def has_data(self, root):
        return any(root.glob('echo_*.jsonl'))

    def check_data(self, root):
        files = sorted(root.glob('echo_*.jsonl'))
        return [f'{f.name}: {len(f.read_text().splitlines())} records' for f in files], bool(files)

    def write_synthetic(self, out_dir, *, count, scale, seed):
        lines = [json.dumps({'input': f'say {i}', 'answers': [str(i)]}) for i in range(count)]
        (out_dir / 'echo_1k.jsonl').write_text('\n'.join(lines) + '\n')
        return f'wrote {count} Echo records to {out_dir}'

    def report(self, results, out):
        rows = [
            [model, found[abbr]['score']]
            for model, found in results.items()
            for abbr in found
            if self.split_abbr(abbr)
        ]
        return ([Table('Echo', 'echo', ['model', 'score'], rows)] if rows else []), []

    def board_sizes(self, rows, with_published):
        return sorted({size for row in rows for _, size in row.results.get(self.name, {})})

    def board_tables(self, rows, sizes):
        lines = [
            BoardLine(r, [r.results[self.name].get(('copy', s), {}).get('score') for s in sizes])
            for r in rows
            if r.results.get(self.name)
        ]
        return [BoardTable('echo', 'Echo: score by size', sizes, lines)]

    def tidy(self, row, sizes):
        for size in sizes:
            yield (
                'echo',
                'copy',
                size,
                'score',
                row.results.get(self.name, {}).get(('copy', size), {}).get('score'),
            )

    def published(self):
        return iter(())


@pytest.fixture
def with_echo(monkeypatch):
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.BENCHMARKS, Echo()))


def test_a_registered_benchmark_reaches_every_shared_command(with_echo, tmp_path, capsys):
    from opencompass_lveval.cli import main

    assert main(['data', 'synth', str(tmp_path / 'data'), '--count', '2']) == 0
    assert 'wrote 2 Echo records' in capsys.readouterr().out
    assert main(['data', 'check', str(tmp_path / 'data'), '--benchmark', 'echo']) == 0
    assert capsys.readouterr().out.splitlines() == ['echo_1k.jsonl: 2 records']

    run = tmp_path / 'work' / '20260101_000000'
    (run / 'results' / 'm').mkdir(parents=True)
    (run / 'results' / 'm' / 'Echo_copy_1k.json').write_text(json.dumps({'score': 87.5}))
    (run / 'configs').mkdir()
    (run / 'configs' / 'c.py').write_text(
        'models = [{"abbr": "m"}]\ndatasets = [{"abbr": "Echo_copy_1k"}]\n'
    )
    assert main(['report', str(tmp_path / 'work')]) == 0
    assert '| m | 87.50 |' in (run / 'summary' / 'long_context_report.md').read_text()
    assert main(['leaderboard', str(tmp_path / 'work'), '--out', str(tmp_path / 'board')]) == 0
    board = tmp_path / 'board'
    assert '## Echo: score by size' in (board / 'leaderboard.md').read_text()
    assert '| m | 87.50 |' in (board / 'leaderboard.md').read_text()
    assert 'm,measured,echo,echo,copy,1k,score,87.5' in (board / 'leaderboard.csv').read_text()
    assert json.loads((board / 'leaderboard.json').read_text())['rows'][0]['results'] == {
        'echo': {'copy_1k': {'score': 87.5}}
    }
    assert '<table id="echo" class="sortable">' in (board / 'leaderboard.html').read_text()


def test_the_registry_holds_both_benchmarks_and_names_unknown_ones():
    assert [b.name for b in benchmarks.BENCHMARKS] == ['lveval', 'adaleval']
    assert benchmarks.named('adaleval').title == 'Ada-LEval'
    with pytest.raises(ValueError, match="no benchmark 'ruler'; known: lveval, adaleval"):
        benchmarks.named('ruler')


def test_the_readme_shows_this_toy_benchmark():
    import inspect
    from pathlib import Path

    source = inspect.getsource(Echo).replace("  # the README's toy benchmark, line for line", '')
    readme = (Path(__file__).resolve().parents[1] / 'README.md').read_text('utf-8')
    assert f'```python\n{source}```' in readme
