"""The Benchmark interface: a toy benchmark registered beside the two real ones appears in data
check, synthetic data, reports and leaderboards without any shared module naming it."""

from __future__ import annotations

import json
import re

import pytest

from opencompass_lveval.framework import benchmarks
from opencompass_lveval.framework.benchmarks import Benchmark, argument
from opencompass_lveval.report.tables import BoardLine, BoardTable, Table

# The package's own benchmarks, in registration order.
BUILT_IN = ['lveval', 'adaleval', 'ruler', 'longbench_v2', 'mrcr']


class Echo(Benchmark):  # docs/layout.md's toy benchmark, line for line
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
    assert [b.name for b in benchmarks.BENCHMARKS] == [*BUILT_IN, *outside]
    assert benchmarks.named('adaleval').title == 'Ada-LEval'
    known = ', '.join(b.name for b in benchmarks.BENCHMARKS)
    with pytest.raises(ValueError, match=f"no benchmark 'nonesuch'; known: {known}"):
        benchmarks.named('nonesuch')


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


def _registered_here(folder) -> list[str]:
    """The registered benchmarks less any third-party one installed where the suite runs: the
    built-in ones and those of the test's own distributions in ``folder``, in registry order."""
    import sys
    from pathlib import Path

    return [
        b.name
        for b in benchmarks.registered()
        if benchmarks.plugin_of(b) is None
        or Path(sys.modules[type(b).__module__].__file__).parent == folder
    ]


@pytest.fixture
def unloaded_registry(monkeypatch, tmp_path):
    """The registry loaded afresh (``BENCHMARKS`` restored afterwards), with ``tmp_path`` on
    sys.path for distributions made there."""
    benchmarks.registered()  # loaded now, so the registry as it was comes back afterwards
    monkeypatch.delattr(benchmarks, 'BENCHMARKS')
    monkeypatch.delattr(benchmarks, 'REGISTRY')
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_an_installed_entry_point_joins_the_registry_and_its_classes(unloaded_registry):
    import inspect

    import opencompass_lveval

    source = (
        'import re\nfrom opencompass_lveval.framework.benchmarks import Benchmark, argument\n\n\n'
    )
    source += inspect.getsource(Echo) + "    classes = ('echo_bench_module:Echo',)\n"
    _distribution(unloaded_registry, 'echo-bench', source)
    assert _registered_here(unloaded_registry) == [*BUILT_IN, 'echo']
    assert benchmarks.named('echo').classes == ('echo_bench_module:Echo',)
    assert opencompass_lveval.Echo.__module__ == 'echo_bench_module'
    assert 'Echo' in dir(opencompass_lveval) and 'LVEvalDataset' in dir(opencompass_lveval)


def test_the_docs_name_the_entry_point_group_the_registry_reads():
    """The group a plugin's author copies from the module's docstring and the layout doc is the
    one the registry loads (the docstring named ``opencompass_lveval.framework.benchmarks``)."""
    from pathlib import Path

    named = re.compile(r'entry point group\s+``([\w.]+)``')
    layout = (Path(__file__).parents[1] / 'docs' / 'layout.md').read_text()
    for text in (benchmarks.__doc__, layout):
        found = named.findall(text) + re.findall(r'entry point group\s+`([\w.]+)`', text)
        assert found and set(found) == {benchmarks.ENTRY_POINT_GROUP}, found


# Broken plugins, each a distribution of its own built and installed by pip: its module's source,
# and what the one warning says after the entry point's name (``{dist}`` and ``{module}`` filled).
ECHO_MODULE = (
    'import re\nfrom opencompass_lveval.framework.benchmarks import Benchmark, argument\n\n\n'
)
ABSTRACT = (
    'from opencompass_lveval.framework.benchmarks import Benchmark\n\n\nclass Bench(Benchmark):\n'
)
ARGPARSE = 'import argparse\n\nparser = argparse.ArgumentParser(prog="echo-tool")\n'
FIX = '; it is left out. Fix {dist} or uninstall it (pip uninstall {dist})'
BROKEN = {
    'missing-import': (
        'import no_such_module_here\n',
        "failed to load: ModuleNotFoundError: No module named 'no_such_module_here'" + FIX,
    ),
    'abstract': (
        ABSTRACT + '    name, title = "abstract", "Abstract"\n',
        "failed to load: TypeError: Can't instantiate abstract class Bench with",
    ),
    'init-raises': (
        '{echo}class Bench(Echo):\n    def __init__(self):\n'
        '        raise RuntimeError("no licence key in $ECHO_KEY")\n',
        'failed to load: RuntimeError: no licence key in $ECHO_KEY' + FIX,
    ),
    'argparse-at-import': (
        ARGPARSE + 'parser.add_argument("--size", required=True)\nparser.parse_args()\n',
        'failed to load: it exits the process as it loads (SystemExit: 2), after printing '
        "'echo-tool: error: the following arguments are required: --size'" + FIX,
    ),
    'exits-at-import': (
        'import sys\n\nsys.exit(0)\n',
        'failed to load: it exits the process as it loads (SystemExit: 0)' + FIX,
    ),
    'nameless': (
        '{echo}class Bench(Echo):\n    name = None\n',
        'gives a benchmark whose name is None' + FIX,
    ),
    'twin': (
        'from opencompass_lveval.lveval.benchmark import LVEval as Bench\n',
        "names its benchmark 'lveval', which LV-Eval (built in) has; it is left out. Rename it "
        'in {dist} or uninstall it (pip uninstall {dist})',
    ),
}
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
[project]
name = "{dist}"
version = "1.0"
[project.entry-points."opencompass_lveval.benchmarks"]
echo = "{module}:Bench"
[tool.setuptools]
py-modules = ["{module}"]
"""


def _module(kind: str) -> str:
    return f'{kind.replace("-", "_")}_bench'


def pip_install(folder, plugins: dict[str, str]):
    """Each plugin (kind -> module source) as a distribution ``{kind}-bench`` whose entry point
    ``echo`` is its module's ``Bench``, installed by pip into ``folder/site``."""
    import inspect
    import subprocess
    import sys

    sources = []
    for kind, source in plugins.items():
        project = folder / 'src' / kind
        project.mkdir(parents=True)
        echo = ECHO_MODULE + inspect.getsource(Echo) + '\n\n'
        (project / f'{_module(kind)}.py').write_text(source.replace('{echo}', echo))
        (project / 'pyproject.toml').write_text(
            PYPROJECT.format(dist=f'{kind}-bench', module=_module(kind))
        )
        sources.append(str(project))
    pip = [sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--no-index']
    pip += ['--no-build-isolation', '--target', str(folder / 'site'), *sources]
    subprocess.run(pip, check=True, capture_output=True)
    return folder / 'site'


@pytest.fixture(scope='module')
def pip_installed(tmp_path_factory):
    """Every plugin of ``BROKEN`` and the clashing ones below, installed by one pip run."""
    plugins = {kind: source for kind, (source, _) in BROKEN.items()}
    return pip_install(tmp_path_factory.mktemp('plugins'), {**plugins, **CLASHING})


@pytest.fixture
def installed(pip_installed, unloaded_registry):
    """Puts one installed distribution of ``pip_installed`` on the path (its module and its
    dist-info, as pip wrote them), alone."""

    def install(kind: str) -> None:
        module = _module(kind)
        for name in (f'{module}.py', f'{module}-1.0.dist-info'):
            (unloaded_registry / name).symlink_to(pip_installed / name)

    return install


def _score_predictions(folder) -> None:
    (folder / 'cmrc_mixup_16k.jsonl').write_text('{"pred": "北京", "answers": ["北京"]}\n')


@pytest.mark.slow  # pip installs the plugins
@pytest.mark.parametrize('kind', sorted(BROKEN))
def test_a_broken_plugin_is_one_warning_and_the_builtins_keep_working(
    kind, installed, tmp_path, capsys, monkeypatch
):
    from opencompass_lveval.cli import main
    from opencompass_lveval.files.errors import BenchmarkError

    monkeypatch.setattr('sys.argv', ['lveval', 'score', 'predictions'])  # what argparse reads
    installed(kind)
    _score_predictions(tmp_path)
    assert main(['score', str(tmp_path)]) == 0  # the built-in LV-Eval's own command
    assert json.loads((tmp_path / 'eval_result' / 'result.json').read_text()) == {
        'cmrc_mixup_16k': 100.0
    }
    out, err = capsys.readouterr()
    dist, module = f'{kind}-bench', _module(kind)
    entry = (
        f"the benchmark entry point 'echo = {module}:Bench' (group {benchmarks.ENTRY_POINT_GROUP})"
    )
    problem = BROKEN[kind][1].format(dist=dist)
    (line,) = err.splitlines()  # one message, nothing the plugin printed
    assert line.startswith(f'warning: {entry} of {dist} {problem}')
    assert line.endswith(f'; it is left out. {"Rename it in" if kind == "twin" else "Fix"} {dist} '
                         f'or uninstall it (pip uninstall {dist})')  # fmt: skip
    assert 'cmrc_mixup  100.0' in out
    assert _registered_here(tmp_path) == BUILT_IN
    assert benchmarks.named('lveval').title == 'LV-Eval'
    if kind != 'twin':  # asked for by name, the left-out entry point says why
        with pytest.raises(BenchmarkError) as caught:
            benchmarks.named('echo')
        assert f'warning: {caught.value}' == line


@pytest.mark.slow  # pip installs the plugins
def test_a_plugin_exiting_at_import_no_longer_ends_lveval_score(pip_installed, tmp_path):
    """The issue's case, in a fresh process: `sys.exit(0)` in a plugin's module made
    `lveval score` exit 0 having scored nothing."""
    import os
    import subprocess
    import sys

    from runs import REPO

    site = tmp_path / 'site'
    site.mkdir()
    for name in ('exits_at_import_bench.py', 'exits_at_import_bench-1.0.dist-info'):
        (site / name).symlink_to(pip_installed / name)
    _score_predictions(tmp_path)
    done = subprocess.run(
        [sys.executable, '-m', 'opencompass_lveval.cli', 'score', str(tmp_path)],
        env={**os.environ, 'PYTHONPATH': os.pathsep.join([str(site), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert json.loads((tmp_path / 'eval_result' / 'result.json').read_text()) == {
        'cmrc_mixup_16k': 100.0
    }
    assert done.stderr.splitlines() == [
        "warning: the benchmark entry point 'echo = exits_at_import_bench:Bench' (group "
        'opencompass_lveval.benchmarks) of exits-at-import-bench failed to load: it exits the '
        'process as it loads (SystemExit: 0); it is left out. Fix exits-at-import-bench or '
        'uninstall it (pip uninstall exits-at-import-bench)'
    ]


# Plugins that load, but give a command or a build kind whose name the package has.
CLASHING = {
    'score-command': '{echo}class Bench(Echo):\n    def commands(self):\n'
    '        return [lambda subparsers: subparsers.add_parser("score")]\n',
    'tsort-kind': '{echo}from opencompass_lveval.framework.benchmarks import BuildKind\n\n\n'
    'class Bench(Echo):\n    def build_kinds(self):\n'
    '        return {"tsort": BuildKind("not TSort", (), lambda: [])}\n',
}


def _clash_warning(kind: str, problem: str, left: str, fix: str) -> str:
    dist = f'{kind}-bench'
    return (
        f"warning: the benchmark entry point 'echo = {_module(kind)}:Bench' (group "
        f'{benchmarks.ENTRY_POINT_GROUP}) of {dist} {problem}; {left}. {fix} {dist} or '
        f'uninstall it (pip uninstall {dist})'
    )


@pytest.mark.slow  # pip installs the plugins
def test_a_plugin_taking_a_command_name_keeps_the_packages_command(installed, tmp_path, capsys):
    from opencompass_lveval.cli import main

    installed('score-command')
    _score_predictions(tmp_path)
    assert main(['score', str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert 'cmrc_mixup  100.0' in out  # LV-Eval's score, not the plugin's
    assert _registered_here(tmp_path) == [*BUILT_IN, 'echo']
    assert err.splitlines() == [
        _clash_warning(
            'score-command',
            'gives commands lveval cannot add (ArgumentError: argument command: conflicting '
            'subparser: score)',
            'they are left out',
            'Fix',
        )
    ]


@pytest.mark.slow  # pip installs the plugins
def test_a_plugin_taking_a_build_kind_keeps_the_packages_kind(installed, capsys):
    from opencompass_lveval.commands.build import kinds

    installed('tsort-kind')
    assert kinds()['tsort'].help != 'not TSort'  # Ada-LEval's, whoever registers later
    assert benchmarks.named('echo').build_kinds()['tsort'].help == 'not TSort'
    capsys.readouterr()
    kinds(warn=True)
    assert capsys.readouterr().err.splitlines() == [
        _clash_warning(
            'tsort-kind',
            "gives the build kind 'tsort', which Ada-LEval has",
            'that kind is left out',
            'Rename it in',
        )
    ]


def test_the_layout_doc_shows_this_toy_benchmark():
    import inspect
    from pathlib import Path

    source = inspect.getsource(Echo).replace(
        "  # docs/layout.md's toy benchmark, line for line", ''
    )
    doc = (Path(__file__).resolve().parents[1] / 'docs' / 'layout.md').read_text('utf-8')
    assert f'```python\n{source}```' in doc


def test_texts_that_name_length_units_ask_the_registry(monkeypatch):
    """`inputs --count-only` says what a tokenizer-free baseline counts in, and the page's plot
    labels its axis, from each benchmark's own length units."""
    from opencompass_lveval.commands.input_kinds import BaselineInputs
    from opencompass_lveval.framework.benchmarks import LengthUnit, length_units_text, named

    own = tuple(b for b in benchmarks.registered() if benchmarks.plugin_of(b) is None)
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', own)  # any third-party one installed aside
    builtin = (
        'LV-Eval: words for English, characters for Chinese; Ada-LEval: cl100k_base tokens; '
        "RULER: the model's tokens (words without a tokenizer); LongBench v2: words; "
        "MRCR: the model's tokens (words without a tokenizer)"
    )
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
