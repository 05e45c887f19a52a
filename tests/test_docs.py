"""Every fenced snippet of README.md and docs/ runs, or is checked as far as it can be without a
GPU, as the marker on the line before it says (an HTML comment, invisible on the page):

- ``<!-- snippet: config -->``: a whole OpenCompass config (``config after PATH``: added to the
  end of PATH, a config file or the first config snippet of a doc); loaded, dumped and read
  again as ``opencompass`` does before any task, its stages' runners and partitioners built, and
  one task's config dumped and read again as a runner hands it to its task;
- ``<!-- snippet: run; writes A, B -->``: shell commands, run in a folder of their own where the
  names the docs write in capitals (``PRED_DIR``, ``FILE.jsonl``) are real inputs; each must
  exit 0 and write what the marker lists;
- ``<!-- snippet: parsed; WHY -->``: shell commands that need a GPU, weights, a cluster or hours:
  each ``lveval`` command line is parsed by ``lveval``'s parser, each ``opencompass`` one by
  OpenCompass's, with the config files and the configs named by ``--datasets``/``--models``
  found; pip extras must be the package's; scripts and folders must exist;
- ``<!-- snippet: in PATH -->``: the text is PATH's, line for line;
- ``<!-- snippet: declaration -->``: lines of a benchmark class's body: parsed as Python, its
  imports made, and each statement run with them, so every name and keyword it uses exists;
- ``<!-- snippet: output; WHY -->``: what a command printed, or a picture of a format.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from runs import REPO

DOCS = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
MARKER = re.compile(r'<!-- snippet: (?P<kind>[a-z]+)(?P<rest>.*?) -->')
KINDS = {
    'config': {'python'},
    'run': {'bash'},
    'parsed': {'bash'},
    'in': None,
    'output': {''},
    'declaration': {'python'},
}
# Commands the docs show that are not this package's or OpenCompass's: not checked here.
OTHERS = {
    'huggingface-cli', 'srun', 'sleep', 'ray', 'scontrol', 'getent', 'awk', 'set', 'for', 'do',
    'done', 'ruff', 'pre-commit', 'export',
}  # fmt: skip


@dataclass(frozen=True)
class Snippet:
    doc: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    kind: str
    rest: str

    def __str__(self) -> str:
        return f'{self.doc.relative_to(REPO)}:{self.line}'


def snippets() -> list[Snippet]:
    found = []
    for doc in DOCS:
        lines = doc.read_text('utf-8').splitlines()
        opened = None
        for number, line in enumerate(lines):
            if not line.startswith('```'):
                continue
            if opened is None:
                opened = number
                continue
            marker = MARKER.fullmatch(lines[opened - 1].strip()) if opened else None
            found.append(
                Snippet(
                    doc,
                    opened + 1,
                    lines[opened][3:].strip(),
                    '\n'.join(lines[opened + 1 : number]) + '\n',
                    marker['kind'] if marker else '',
                    marker['rest'].strip() if marker else '',
                )
            )
            opened = None
    return found


SNIPPETS = snippets()


def of_kind(kind: str) -> list:
    return [pytest.param(s, id=str(s)) for s in SNIPPETS if s.kind == kind]


def test_every_snippet_has_a_marker_saying_what_is_done_with_it():
    assert len(SNIPPETS) >= 35
    wrong = []
    for snippet in SNIPPETS:
        languages = KINDS.get(snippet.kind, set())
        if snippet.kind not in KINDS:
            wrong.append(
                f'{snippet}: no <!-- snippet: KIND --> line before it ({", ".join(KINDS)})'
            )
        elif languages is not None and snippet.language not in languages:
            wrong.append(f'{snippet}: a {snippet.kind} snippet in {snippet.language!r}')
        elif snippet.kind in ('parsed', 'output') and len(snippet.rest.lstrip('; ')) < 10:
            wrong.append(f'{snippet}: `{snippet.kind}; WHY`: say why it is not run')
    assert not wrong, '\n'.join(wrong)


# Shell snippets -------------------------------------------------------------------------------


def command_lines(text: str) -> list[list[str]]:
    """The simple commands of a shell snippet, as words: lines joined at ``\\``, comments
    dropped, split at ``&&``, ``||``, ``|``, ``;`` and ``&``; ``[optional]`` words kept without
    their brackets, ``a|b`` alternatives as their first."""
    commands = []
    for line in text.replace('\\\n', ' ').splitlines():
        current: list[str] = []
        for word in shlex.split(line, comments=True):
            ends = word.endswith(';') and word != ';'
            word = word[:-1] if ends else word
            if word in ('&&', '||', '|', ';', '&'):
                commands.append(current)
                current = []
                continue
            bare = word.strip('[]')
            current.append(bare.split('|')[0] if '|' in bare[1:] else bare)
            if ends:
                commands.append(current)
                current = []
        commands.append(current)
    return [command for command in commands if command]


def program(words: list[str]) -> tuple[str, list[str]]:
    """The command's program (``.venv/bin/`` and leading ``NAME=value`` set aside) and its
    arguments."""
    while words and re.match(r'[A-Za-z_][A-Za-z0-9_]*=', words[0]):
        if words[0].count('(') > words[0].count(')'):
            return '', []  # NAME=$(a command ...): the substitution's words are not a command
        words = words[1:]
    if not words:
        return '', []
    return words[0].removeprefix('.venv/bin/'), words[1:]


def configs_dir() -> str:
    from opencompass_lveval.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(['configs-dir']) == 0
    return printed.getvalue().strip()


def check_lveval(arguments: list[str]) -> list[str]:
    from opencompass_lveval.cli import UsageError, build_parser

    try:
        build_parser().parse_args(arguments)
    except (UsageError, SystemExit) as exc:
        return [f'lveval {shlex.join(arguments)}: {exc}']
    return check_files(arguments)


def check_files(arguments: list[str]) -> list[str]:
    """Config files and scripts named must exist; ``my_*.py`` is the reader's own."""
    return [
        f'{argument} does not exist'
        for argument in arguments
        if argument.endswith(('.py', '.sh'))
        and not Path(argument).name.startswith('my_')
        and not (REPO / argument).is_file()
    ]


@functools.cache
def opencompass_cli() -> dict:
    """OpenCompass's own ``parse_args`` (and the ``parse_*_args`` it calls) and ``match_files``,
    taken from its files and run alone: importing ``opencompass.cli.main`` imports all of
    OpenCompass (13 s of CPU here), too slow for the fast loop."""
    from mmengine.config import DictAction

    root = Path(importlib.util.find_spec('opencompass').origin).parent
    main = root / 'cli' / 'main.py'
    tree = ast.parse(main.read_text('utf-8'))
    parsers = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    parsers = [node for node in parsers if node.name.startswith('parse_')]
    namespace = {'argparse': argparse, 'DictAction': DictAction}
    exec(compile(ast.Module(parsers, type_ignores=[]), str(main), 'exec'), namespace)
    spec = importlib.util.spec_from_file_location('opencompass_file', root / 'utils' / 'file.py')
    files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(files)
    return {'parse_args': namespace['parse_args'], 'match_files': files.match_files}


def check_opencompass(arguments: list[str], monkeypatch) -> list[str]:
    """OpenCompass's parser takes the flags; the config file exists, and so do the configs its
    ``--datasets``, ``--models`` and ``--summarizer`` name, one each (as OpenCompass matches
    them: ``NAME.py`` anywhere under the folder)."""
    cli = opencompass_cli()
    arguments = [configs_dir() if a == '$(lveval configs-dir)' else a for a in arguments]
    monkeypatch.setattr(sys, 'argv', ['opencompass', *arguments])
    with contextlib.redirect_stderr(io.StringIO()) as said:
        try:
            args = cli['parse_args']()
        except SystemExit:
            error = said.getvalue().strip().splitlines()[-1]
            return [f'opencompass {shlex.join(arguments)}: {error}']
    problems = check_files([args.config] if args.config else [])
    names = [('datasets', n) for n in args.datasets or []]
    names += [('models', n) for n in args.models or []]
    names += [('summarizers', args.summarizer)] if args.summarizer else []
    for folder, name in names:
        found = cli['match_files'](str(Path(args.config_dir) / folder), f'{name}.py')
        if len(found) != 1:
            problems.append(f'{name}: {len(found)} configs of that name in {folder}/')
    return problems


def optional_dependencies() -> str:
    """pyproject.toml's ``[project.optional-dependencies]`` table, as text (``tomllib`` is not in
    Python 3.10)."""
    text = (REPO / 'pyproject.toml').read_text('utf-8')
    return text.partition('[project.optional-dependencies]')[2].partition('\n[')[0]


def check_pip(arguments: list[str]) -> list[str]:
    extras = set(re.findall(r'(?m)^([a-z][\w-]*) = \[', optional_dependencies()))
    problems = []
    for argument in arguments:
        found = re.fullmatch(r'\.\[(.+)\]', argument)
        for extra in found[1].split(',') if found else []:
            if extra not in extras:
                problems.append(f'pip install {argument}: no extra {extra!r} ({sorted(extras)})')
    return problems


def check_python(arguments: list[str]) -> list[str]:
    if arguments[:2] == ['-m', 'pytest']:
        return [
            f'{a} does not exist' for a in arguments[2:] if a == 'tests' and not (REPO / a).is_dir()
        ]
    if arguments[:1] == ['-m']:
        return [] if arguments[1] in ('venv', 'pip') else [f'python -m {arguments[1]}: unknown']
    return check_files(arguments[:1])


@pytest.mark.parametrize('snippet', of_kind('parsed') + of_kind('run'))
def test_shell_snippets_name_commands_and_flags_the_parsers_take(snippet, monkeypatch):
    problems = []
    for words in command_lines(snippet.text):
        name, arguments = program(words)
        if name == 'lveval':
            problems += check_lveval(arguments)
        elif name == 'opencompass':
            problems += check_opencompass(arguments, monkeypatch)
        elif name in ('pip', 'pip3'):
            problems += check_pip(arguments)
        elif name in ('python', 'python3'):
            problems += check_python(arguments)
        elif name == 'bash':
            problems += check_files(arguments[:1])
        elif name and name not in OTHERS:
            problems.append(f'{name}: a command this test does not know; check it or add it')
    assert not problems, f'{snippet}:\n' + '\n'.join(problems)


def test_the_command_reader_keeps_optional_words_and_splits_at_operators():
    text = 'a x && b [--out DIR] # note\nc [--mode one|two] F; d \\\n  --flag "$(e f)"\n'
    assert command_lines(text) == [
        ['a', 'x'], ['b', '--out', 'DIR'], ['c', '--mode', 'one', 'F'], ['d', '--flag', '$(e f)']
    ]  # fmt: skip


# Snippets that are another file's text --------------------------------------------------------


def in_order(lines: list[str], within: list[str]) -> bool:
    """Whether ``lines`` occur in ``within`` in the same order (others may come between)."""
    rest = iter(within)
    return all(any(line == other for other in rest) for line in lines)


@pytest.mark.parametrize('snippet', of_kind('in'))
def test_a_snippet_is_the_file_s_text_it_names(snippet):
    """Its lines, in order, are lines of the file (end-of-line comments aside)."""
    path = REPO / snippet.rest
    assert path.is_file(), f'{snippet}: {snippet.rest} does not exist'
    text = re.sub(r'  # .*$', '', path.read_text('utf-8'), flags=re.M)
    lines = [line for line in snippet.text.splitlines() if line.strip()]
    assert in_order(lines, text.splitlines()), f'{snippet} is not in {snippet.rest}'


@pytest.mark.parametrize('snippet', of_kind('declaration'))
def test_a_declaration_snippet_runs_with_its_imports(snippet):
    """Each statement runs in one namespace: a misspelled class, keyword or argument fails."""
    namespace: dict = {}
    exec(compile(snippet.text, str(snippet), 'exec'), namespace)
    assert any(not name.startswith('__') for name in namespace), f'{snippet} defines nothing'


# Config snippets ------------------------------------------------------------------------------


def config_text(snippet: Snippet) -> tuple[str, str]:
    """The config the snippet makes (its base's text, then its own) and the folder it must be
    read from (a copy of configs/ where the base reads its neighbours)."""
    base = snippet.rest.removeprefix('after').strip()
    if not base:
        return snippet.text, ''
    if base.endswith('.md'):
        first = next(s for s in SNIPPETS if s.doc == REPO / base and s.kind == 'config')
        return first.text + '\n' + snippet.text, ''
    return (REPO / base).read_text('utf-8') + '\n' + snippet.text, str(Path(base).parent)


@pytest.mark.slow
@pytest.mark.parametrize('snippet', of_kind('config'))
def test_a_config_snippet_survives_what_opencompass_does_with_it(snippet, tmp_path):
    from mmengine.config import Config
    from opencompass.registry import PARTITIONERS, RUNNERS

    text, folder = config_text(snippet)
    where = tmp_path
    if folder:
        shutil.copytree(REPO / folder, tmp_path / folder)
        where = tmp_path / folder
    written = where / 'snippet_config.py'
    written.write_text(text, 'utf-8')
    config = Config.fromfile(str(written), format_python_code=False)
    config.dump(str(tmp_path / 'dumped.py'))  # opencompass: the run's config, read back
    again = Config.fromfile(str(tmp_path / 'dumped.py'), format_python_code=False)
    assert [d['abbr'] for d in again.datasets] == [d['abbr'] for d in config.datasets]
    for stage in ('infer', 'eval'):
        if stage in again:
            PARTITIONERS.build({**again[stage]['partitioner'], 'out_dir': str(tmp_path)})
            RUNNERS.build(again[stage]['runner'])  # a ServeOnceRunner checks its settings here
    task = Config(dict(models=[again.models[0]], datasets=[again.datasets], work_dir='w'))
    task.dump(str(tmp_path / 'task.py'))  # a runner: each task's config
    read = Config.fromfile(str(tmp_path / 'task.py'), format_python_code=False)
    assert read.models[0]['abbr'] == again.models[0]['abbr']


# Snippets that run ----------------------------------------------------------------------------


def sandbox(folder: Path) -> None:
    """The inputs the docs' placeholders stand for, made in ``folder``: PRED_DIR, official
    prediction files (the golden LV-Eval ones); FILE.jsonl, BestAnswer replies."""
    shutil.copytree(REPO / 'tests' / 'data' / 'golden' / 'lveval', folder / 'PRED_DIR')
    replies = [
        {'prediction': 'Answer: A4', 'answer': 'A4', 'num_choice': 5},
        {'prediction': 'A12 is better than A19', 'answer': 'A19', 'num_choice': 20},
    ]
    (folder / 'FILE.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in replies))


@pytest.mark.slow
@pytest.mark.parametrize('snippet', of_kind('run'))
def test_a_runnable_snippet_runs_and_writes_what_it_says(snippet, tmp_path):
    sandbox(tmp_path)
    for words in command_lines(snippet.text):
        name, arguments = program(words)
        assert name == 'lveval', f'{snippet}: only lveval commands run here, not {name}'
        done = subprocess.run(
            [sys.executable, '-m', 'opencompass_lveval.cli', *arguments],
            cwd=tmp_path,
            env={
                **os.environ,
                'PYTHONPATH': os.pathsep.join([str(REPO), os.environ.get('PYTHONPATH', '')]),
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f'{snippet}: {shlex.join(words)}\n{done.stderr[-2000:]}'
    writes = snippet.rest.partition('writes')[2]
    for path in filter(None, (p.strip() for p in writes.split(','))):
        assert (tmp_path / path).is_file(), f'{snippet}: {path} was not written'


def test_the_checks_refuse_what_the_parsers_refuse(monkeypatch):
    """What a snippet could get wrong is caught: a subcommand or flag, a config's name, an
    extra, a script."""
    assert 'invalid choice' in check_lveval(['build', 'factrecal'])[0]
    assert (
        'unrecognized arguments: --lengths 16k'
        in check_lveval(
            [
                'build',
                'factrecall',
                '--language',
                'en',
                '--corpora',
                'c',
                '--out',
                'x',
                '--lengths',
                '16k',
            ]
        )[0]
    )
    assert check_lveval(['dry-run', 'configs/eval_lveval_typo.py']) == [
        'configs/eval_lveval_typo.py does not exist'
    ]
    config_dir = ['--config-dir', '$(lveval configs-dir)']
    assert check_opencompass([*config_dir, '--datasets', 'lveval_gne'], monkeypatch) == [
        'lveval_gne: 0 configs of that name in datasets/'
    ]
    assert (
        'unrecognized arguments: --resume'
        in check_opencompass(['configs/eval_demo.py', '--resume'], monkeypatch)[0]
    )
    assert check_pip(['-e', '.[gpu]'])[0].startswith("pip install .[gpu]: no extra 'gpu'")
    assert check_python(['tools/rigg.py', 'up']) == ['tools/rigg.py does not exist']
