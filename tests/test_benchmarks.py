"""The Benchmark interface: a toy benchmark registered beside the two real ones appears in data
check, synthetic data, reports and leaderboards without any shared module naming it."""

from __future__ import annotations

import json
import re

import pytest

from opencompass_lveval import benchmarks
from opencompass_lveval.benchmarks import Benchmark, argument
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

    synth_arguments = (argument('--count', type=int, default=4),)

    def write_synthetic(self, out_dir, *, seed, count):
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


def test_the_registry_holds_the_builtin_benchmarks_and_names_unknown_ones():
    from importlib.metadata import entry_points

    outside = sorted(e.name for e in entry_points(group=benchmarks.ENTRY_POINT_GROUP))
    assert [b.name for b in benchmarks.BENCHMARKS] == ['lveval', 'adaleval', *outside]
    assert benchmarks.named('adaleval').title == 'Ada-LEval'
    known = ', '.join(b.name for b in benchmarks.BENCHMARKS)
    with pytest.raises(ValueError, match=f"no benchmark 'ruler'; known: {known}"):
        benchmarks.named('ruler')


def _distribution(folder, name: str, module_source: str):
    """A real installed distribution ``name`` (a dist-info folder on sys.path) whose module
    ``{name}_module`` is entered in the benchmarks' entry point group as ``echo``."""
    module = f'{name.replace("-", "_")}_module'
    (folder / f'{module}.py').write_text(module_source)
    info = folder / f'{name.replace("-", "_")}-1.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n')
    (info / 'entry_points.txt').write_text(
        f'[{benchmarks.ENTRY_POINT_GROUP}]\necho = {module}:Echo\n'
    )


@pytest.fixture
def unloaded_registry(monkeypatch, tmp_path):
    """The registry loaded afresh (``BENCHMARKS`` restored afterwards), with ``tmp_path`` on
    sys.path for distributions made there."""
    benchmarks.registered()  # loaded now, so the registry as it was comes back afterwards
    monkeypatch.delattr(benchmarks, 'BENCHMARKS')
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_an_installed_entry_point_joins_the_registry_and_its_classes(unloaded_registry):
    import inspect

    import opencompass_lveval

    source = 'import re\nfrom opencompass_lveval.benchmarks import Benchmark, argument\n\n\n'
    source += inspect.getsource(Echo) + "    classes = ('echo_bench_module:Echo',)\n"
    _distribution(unloaded_registry, 'echo-bench', source)
    assert [b.name for b in benchmarks.BENCHMARKS][-1] == 'echo'
    assert benchmarks.named('echo').classes == ('echo_bench_module:Echo',)
    assert opencompass_lveval.Echo.__module__ == 'echo_bench_module'
    assert 'Echo' in dir(opencompass_lveval) and 'LVEvalDataset' in dir(opencompass_lveval)


def test_an_entry_point_that_fails_to_load_names_its_distribution(unloaded_registry, capsys):
    from opencompass_lveval.cli import main

    _distribution(unloaded_registry, 'broken-bench', 'import no_such_module_here\n')
    assert main(['--help']) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: the benchmark entry point 'echo = broken_bench_module:Echo'")
    assert "of broken-bench failed to load: ModuleNotFoundError: No module named 'no_such" in error
    assert error.rstrip().endswith('Fix broken-bench or uninstall it (pip uninstall broken-bench)')


def test_an_entry_point_taking_a_registered_name_is_refused(unloaded_registry):
    from opencompass_lveval.errors import BenchmarkError

    source = 'from opencompass_lveval.lveval.benchmark import LVEval as Echo\n'
    _distribution(unloaded_registry, 'twin-bench', source)
    with pytest.raises(BenchmarkError, match='benchmark name.s. lveval registered twice'):
        benchmarks.registered()


def test_the_readme_shows_this_toy_benchmark():
    import inspect
    from pathlib import Path

    source = inspect.getsource(Echo).replace("  # the README's toy benchmark, line for line", '')
    readme = (Path(__file__).resolve().parents[1] / 'README.md').read_text('utf-8')
    assert f'```python\n{source}```' in readme


def test_texts_that_name_length_units_ask_the_registry(monkeypatch):
    """`inputs --count-only` says what a tokenizer-free baseline counts in, and the page's plot
    labels its axis, from each benchmark's own length units."""
    from opencompass_lveval.benchmarks import LengthUnit, length_units_text, named
    from opencompass_lveval.commands.input_kinds import BaselineInputs

    builtin = 'LV-Eval: words for English, characters for Chinese; Ada-LEval: cl100k_base tokens'
    assert length_units_text() == builtin
    assert named('lveval').axis_label() == 'length level (words / characters)'
    assert named('lveval').axis_label(detailed=True) == (
        'length level (English words / Chinese characters)'
    )

    class Counted(Echo):
        def length_units(self):
            return [LengthUnit('bytes', len)]

    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.BENCHMARKS, Counted()))
    assert length_units_text() == f'{builtin}; Echo: bytes'
    baseline = object.__new__(BaselineInputs)  # its parser is not needed to name the unit
    assert baseline.counted_in == (
        f"no tokenizer: prompts in the benchmark's length unit ({builtin}; Echo: bytes)"
    )
