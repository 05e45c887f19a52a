"""The second bad-input probe (issue 23), run against any source tree of the package, so one set of
cases gives the figures before and after the fixes.

Each case makes its inputs in a fresh folder, runs the ``lveval`` command (or the library call a
user meets) in a subprocess that imports the package from the given tree, and sorts what came out
into one outcome: ``good`` (a clear error naming the file, record, field or argument, or the right
result), ``counted`` (accepted and the problem reported), ``silently wrong``, ``crash`` (a
traceback, or an error that names nothing), ``unbounded`` (time or memory out of proportion, or a
hang) and ``unsafe`` (code from a run folder ran, a file outside ``--out``, a live formula or tag).

    git worktree add /tmp/before b86fb91     # the tree the issue was filed against
    python bench/probe_bad_inputs.py /tmp/before .

The judges look at effects (exit code, files written, what a table holds), never at one tree's
wording; a refusal counts as good when it names what the case says it must name.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import csv
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / 'tests'))  # the hostile servers

from corpora import DEFAULT, stackselect_questions  # noqa: E402
from servers import HostileServer, completion, drip, echo_key, huge, redirect, throttled  # noqa: E402

CORPORA = DEFAULT
BOOK = CORPORA / 'en' / 'alice_in_wonderland.txt'

GOOD, COUNTED, WRONG = 'good', 'counted', 'silently wrong'
CRASH, UNBOUNDED, UNSAFE = 'crash', 'unbounded', 'unsafe'
OUTCOMES = [GOOD, COUNTED, WRONG, CRASH, UNBOUNDED, UNSAFE]

# Imports the package from the tree named first on the command line, whatever is installed
# (an editable install's finder is dropped), then runs the CLI or a snippet.
BOOT = r"""
import sys
tree, mode = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]
sys.path.insert(0, tree)
import opencompass_lveval
assert opencompass_lveval.__file__.startswith(tree), opencompass_lveval.__file__
if mode == 'cli':
    from opencompass_lveval.cli import main
    sys.exit(main(sys.argv[1:]))
if mode == 'opencompass':  # its own command: a traceback, if any, is what the user sees
    from opencompass.cli.main import main
    main()
    sys.exit(0)
try:  # a library call: the user reads its exception's message in the task log
    exec(sys.argv[1])
except Exception as exc:
    print(f'error: {type(exc).__name__}: {exc}')
    sys.exit(1)
"""


@dataclass
class Ran:
    rc: int
    out: str
    seconds: float
    peak_mb: float
    timed_out: bool

    def last_line(self) -> str:
        lines = [line for line in self.out.strip().splitlines() if line.strip()]
        return lines[-1][:110] if lines else ''

    def mentions(self, *names) -> bool:
        return all(str(name).lower() in self.out.lower() for name in names)


class Probe:
    """One case's folder and the tree it runs against."""

    def __init__(self, tree: Path, tmp: Path):
        self.tree, self.tmp = tree, tmp

    def _run(self, mode, argv, timeout=120, env=None, memory_gb=None, kill_after=None) -> Ran:
        peak = self.tmp / '.peak'
        command = [sys.executable, '-c', BOOT, str(self.tree), mode, *map(str, argv)]
        if Path('/usr/bin/time').exists():
            command = ['/usr/bin/time', '-q', '-f', '%M', '-o', str(peak), *command]

        def limit():
            os.setsid()
            if memory_gb:
                size = int(memory_gb * 2**30)
                resource.setrlimit(resource.RLIMIT_AS, (size, size))

        environment = {**os.environ, 'MPLBACKEND': 'Agg', **(env or {})}
        start = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=self.tmp,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=limit,
        )
        timed_out = False
        try:
            out, _ = process.communicate(timeout=kill_after or timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            timed_out = kill_after is None
        seconds = time.perf_counter() - start
        text = out.decode('utf-8', 'replace')
        peak_mb = 0.0
        if peak.exists():
            numbers = [line for line in peak.read_text().splitlines() if line.strip().isdigit()]
            peak_mb = int(numbers[-1]) / 1024 if numbers else 0.0
            text = '\n'.join(line for line in text.splitlines() if 'Command terminated' not in line)
        return Ran(process.returncode, text, seconds, peak_mb, timed_out)

    def lveval(self, *argv, **options) -> Ran:
        return self._run('cli', argv, **options)

    def opencompass(self, config: Path, env=None, timeout=600) -> Ran:
        """`opencompass CONFIG` in the case's folder, its tasks importing the tree too."""
        environment = {**(env or {}), 'PYTHONPATH': str(self.tree)}
        return self._run('opencompass', [config, '-w', 'outputs'], env=environment, timeout=timeout)

    def python(self, code: str, **options) -> Ran:
        return self._run('code', [code], **options)

    def path(self, relative: str) -> Path:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write(self, relative: str, text: str) -> Path:
        path = self.path(relative)
        path.write_text(text, 'utf-8')
        return path

    def jsonl(self, relative: str, records) -> Path:
        return self.write(
            relative, ''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in records)
        )


def refusal(ran: Ran, *names) -> tuple[str, str]:
    """A bad input must be refused naming ``names``: exit 0 is silently wrong, a traceback or a
    refusal that does not name them is a crash."""
    if ran.timed_out:
        return UNBOUNDED, f'killed after {ran.seconds:.0f} s'
    if 'Traceback (most recent call last)' in ran.out or ran.rc < 0:
        return CRASH, ran.last_line()
    if ran.rc == 0:
        return WRONG, f'exit 0: {ran.last_line()}'
    if ran.mentions(*names):
        return GOOD, ran.last_line()
    return CRASH, f'names none of {names}: {ran.last_line()}'


def lines_in(path: Path) -> int:
    return path.read_text('utf-8').count('\n') if path.is_file() else -1


# ---- run folders as OpenCompass leaves them -------------------------------------------------

PLAIN_CONFIG = "models = [dict(abbr='m')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"


def run_folder(p: Probe, results: dict, config=PLAIN_CONFIG, name='20260101_000000') -> Path:
    run = p.tmp / 'work' / name
    p.write(f'work/{name}/configs/c.py', config)
    for (model, dataset), content in results.items():
        p.write(f'work/{name}/results/{model}/{dataset}.json', content)
    return run


def board(p: Probe, *extra) -> Ran:
    return p.lveval('leaderboard', p.tmp / 'work', '--out', p.tmp / 'board', *extra)


def report(p: Probe, run: Path) -> Ran:
    return p.lveval('report', run, '--out', p.tmp / 'report')


def config_code_runs(statement: str):
    """A dumped config holding code: unsafe when the code ran (its marker file exists)."""

    def case(p: Probe):
        marker = p.tmp / 'ran'
        code = statement.format(marker=repr(str(marker)))
        run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'}, code)
        ran = board(p)
        if marker.exists():
            return UNSAFE, 'the config ran: its marker file exists'
        return refusal(ran, 'c.py')

    return case


def forged_markdown(command: str, name: str):
    """A model name that would add a row or a live tag to a Markdown table."""

    def case(p: Probe):
        run = run_folder(p, {(name, 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'})
        if command == 'report':
            ran, md = report(p, run), p.tmp / 'report' / 'long_context_report.md'
        else:
            ran, md = board(p), p.tmp / 'board' / 'leaderboard.md'
        if not md.is_file():
            return refusal(ran, 'model')
        text = md.read_text('utf-8')
        if '<img' in text:
            return UNSAFE, 'a raw <img onerror> tag in the Markdown'
        if any(line.lstrip().startswith('| FAKE') for line in text.splitlines()):
            return WRONG, 'the name added a table row'
        return GOOD, 'one escaped cell'

    return case


def formula_cell(command: str, name: str):
    """A model name that a spreadsheet would run as a formula."""

    def case(p: Probe):
        run = run_folder(p, {(name, 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'})
        ran = report(p, run) if command == 'report' else board(p)
        folder = p.tmp / ('report' if command == 'report' else 'board')
        tables = sorted(folder.glob('*.csv'))
        if not tables:
            return refusal(ran, 'model')
        for table in tables:
            with open(table, encoding='utf-8', newline='') as stream:
                for row in csv.reader(stream):
                    if any(cell[:1] in ('=', '+', '@') for cell in row):
                        return UNSAFE, f'{table.name}: a cell starts with {name[0]!r}'
        return GOOD, 'formula cells quoted'

    return case


def model_named_levels(p: Probe):
    run = run_folder(p, {('levels', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'})
    ran = report(p, run)
    tables = list((p.tmp / 'report').glob('lveval_levels*.csv'))
    if len(tables) >= 2:
        return GOOD, ', '.join(sorted(t.name for t in tables))
    if tables:
        return WRONG, 'one lveval_levels.csv for two tables: one overwrote the other'
    return refusal(ran, 'levels')


def result_value(command: str, content: str):
    """A result file whose score is not a number from 0 to 100, or not of a result's shape."""

    def case(p: Probe):
        run = run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): content})
        ran = report(p, run) if command == 'report' else board(p)
        if 'Traceback (most recent call last)' in ran.out:
            return CRASH, ran.last_line()
        written = p.tmp / 'board' / 'leaderboard.json'
        if written.is_file() and (
            'NaN' in written.read_text() or 'Infinity' in written.read_text()
        ):
            return WRONG, 'leaderboard.json holds a bare NaN or Infinity'
        if ran.mentions('LVEval_cmrc_mixup_16k.json'):
            return (GOOD if ran.rc else COUNTED), ran.last_line()
        if ran.rc == 0:
            return WRONG, f'exit 0, the file unnamed: {ran.last_line()}'
        return CRASH, f'the file unnamed: {ran.last_line()}'

    return case


def config_model_without_abbr(p: Probe):
    config = "models = [dict(path='x')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"
    run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'}, config)
    return refusal(board(p), 'c.py')


def refused_run_strict(p: Probe):
    config = "models = [dict(abbr='big')]\ndatasets = [dict(abbr='LVEval_cmrc_mixup_16k')]\n"
    run = run_folder(p, {}, config)
    p.write(
        f'{run.relative_to(p.tmp)}/logs/infer/big/LVEval_cmrc_mixup_16k.out',
        'GPURequestError: asks for 8 GPUs, the nodes offer at most 4\n',
    )
    return refusal(board(p, '--strict'), 'big', 'GPURequestError')


def synthetic_only_strict(p: Probe):
    """Only rows on synthetic data: nothing measured, so --strict must fail saying so."""
    result = '{"score": 90.0, "provenance": {"data_origin": "synthetic"}}'
    run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): result})
    return refusal(board(p, '--strict'), 'nothing measured', 'synthetic data')


def empty_run_folder(p: Probe):
    (p.tmp / 'work' / '20260101_000000').mkdir(parents=True)
    return refusal(board(p, '--strict'), 'work')


def newest_by_name(p: Probe):
    """Two runs of one model: the later by OpenCompass's run name must win, whatever the file
    times say (a copy resets them)."""
    old = run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'})
    new = run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 20.0}'}, name='20260102_000000')
    for folder, stamp in ((old, time.time()), (new, time.time() - 10**7)):
        for path in folder.rglob('*'):
            os.utime(path, (stamp, stamp))
    ran = board(p)
    md = p.tmp / 'board' / 'leaderboard.md'
    text = md.read_text('utf-8') if md.is_file() else ''
    if '20.00' in text:
        return GOOD, 'the later run (20.00) wins'
    if '10.00' in text:
        return WRONG, 'the earlier run (10.00) won on file times'
    return refusal(ran, 'm')


# ---- outputs written in place -----------------------------------------------------------------


def factrecall_args(p: Probe, corpora, level='1k', count='3'):
    return ['build', 'factrecall', '--language', 'en', '--levels', level, '--count', count,
            '--corpora', corpora, '--out', p.tmp / 'data']  # fmt: skip


def failed_rebuild(p: Probe):
    p.lveval(*factrecall_args(p, CORPORA))
    before = lines_in(p.tmp / 'data' / 'factrecall_en_1k.jsonl')
    ran = p.lveval(*factrecall_args(p, p.tmp / 'corpra'))
    after = lines_in(p.tmp / 'data' / 'factrecall_en_1k.jsonl')
    if before == 3 and after != before:
        return WRONG, f'the previous file went from {before} to {after} lines'
    return refusal(ran, 'corpra')


def killed_build(p: Probe):
    """A build killed midway must not leave a file under its final name."""
    ran = p.lveval(*factrecall_args(p, CORPORA, '512k', '200'), kill_after=6)
    files = {f.name: lines_in(f) for f in (p.tmp / 'data').glob('*.jsonl')}
    partial = {name: n for name, n in files.items() if n < 200}
    if ran.rc == 0:
        return GOOD, 'finished before the kill (inconclusive)'
    if partial:
        name, n = next(iter(partial.items()))
        return WRONG, f'{name} left with {n} of 200 records under its final name'
    return GOOD, f'killed after {ran.seconds:.0f} s; no file under a final name'


# ---- lveval inputs ----------------------------------------------------------------------------


def inputs_setup(p: Probe, answer_length=None, **settings) -> Path:
    p.python(
        'from opencompass_lveval.testing import train_tokenizer\n'
        f'train_tokenizer().save_pretrained({str(p.tmp / "tok")!r})'
    )
    p.jsonl(
        'data/cmrc_mixup_16k.jsonl',
        [
            {'input': f'q{i}', 'context': f'c{i} ' * 20, 'answers': [f'a{i}'],
             'answer_keywords': f'a{i}'}
            for i in range(4)
        ],
    )  # fmt: skip
    models = [{'abbr': 'm', 'path': str(p.tmp / 'tok'), 'max_seq_len': 300, **settings}]
    models_text = ', '.join(
        'dict(type=LongContextHF, ' + ', '.join(f'{k}={v!r}' for k, v in m.items()) + ')'
        for m in models
    )
    return p.write(
        'config.py',
        'from mmengine.config import read_base\n'
        'with read_base():\n'
        '    from opencompass_lveval.configs.datasets.lveval.lveval_gen import lveval_datasets\n'
        'from opencompass_lveval.models.hf import LongContextHF\n'
        "datasets = [d for d in lveval_datasets if d['abbr'] == 'LVEval_cmrc_mixup_16k']\n"
        f"for d in datasets:\n    d['path'] = {str(p.tmp / 'data')!r}\n"
        + (
            f"    d['infer_cfg']['inferencer']['max_out_len'] = {answer_length!r}\n"
            if answer_length is not None
            else ''
        )
        + f'models = [{models_text}]\n',
    )


def inputs_limit(limit: str):
    def case(p: Probe):
        config = inputs_setup(p)
        out = p.tmp / 'inputs.jsonl'
        ran = p.lveval('inputs', config, '--out', out, '--limit', limit)
        if ran.rc == 0:
            return WRONG, f'exit 0, {lines_in(out)} records written for --limit {limit}'
        return refusal(ran, '--limit')

    return case


def inputs_misspelled(key: str, value):
    def case(p: Probe):
        config = inputs_setup(p, **{key: value})
        return refusal(p.lveval('inputs', config, '--out', p.tmp / 'inputs.jsonl'), key)

    return case


def inputs_failure_keeps_previous(p: Probe):
    """A second `lveval inputs` whose second model fails must leave the first output whole."""
    config = inputs_setup(p)
    out = p.tmp / 'inputs.jsonl'
    p.lveval('inputs', config, '--out', out)
    good = out.read_text('utf-8') if out.is_file() else None
    text = config.read_text('utf-8').replace(
        'max_seq_len=300)]', "max_seq_len=300), dict(type=LongContextHF, abbr='gone', "
        f"path={str(p.tmp / 'no-such-model')!r}, max_seq_len=300)]"
    )  # fmt: skip
    config.write_text(text, 'utf-8')
    ran = p.lveval('inputs', config, '--out', out)
    now = out.read_text('utf-8') if out.is_file() else None
    if good is not None and now != good and ran.rc != 0:
        return WRONG, 'the failed run replaced the previous output with a partial one'
    return refusal(ran, 'no-such-model')


# ---- model settings against the model's own config.json --------------------------------------

TINY_MODEL = (
    'from opencompass_lveval.testing import save_tiny_llama, train_tokenizer\n'
    'folder = save_tiny_llama({folder!r}, tokenizer=train_tokenizer({texts!r}))\n'
    'train_tokenizer().save_pretrained(folder)\n'  # the tokenizer its files end with
)
PRE_RUN = (
    'from opencompass_lveval.runner.infer_task import check_before_weights\n'
    "model = dict(type='opencompass_lveval.models.hf.LongContextHF', abbr='m', path={path!r}, "
    'max_seq_len={window}, max_out_len={answer})\n'
    "dataset = dict(abbr='LVEval_cmrc_mixup_16k', infer_cfg=dict(inferencer=dict("
    "type='GenInferencer')))\n"
    'check_before_weights(model, [dataset])\n'
    "print('passed the check before the weights')\n"
)


def tiny_model(p: Probe, embedding_texts=None) -> Path:
    """A tiny Llama of 512 positions whose embedding holds the ids of a tokenizer trained on
    ``embedding_texts`` (default: the one saved with it)."""
    folder = p.tmp / 'model'
    ran = p.python(TINY_MODEL.format(folder=str(folder), texts=embedding_texts))
    if not (folder / 'config.json').is_file():
        raise RuntimeError(f'no tiny model: {ran.last_line()}')
    return folder


def pre_run(window=512, answer=64, embedding_texts=None, names=()):
    """The check before the weights on a tiny model: a setting past its config must be
    refused naming ``names``."""

    def case(p: Probe):
        path = tiny_model(p, embedding_texts)
        code = PRE_RUN.format(path=str(path), window=window, answer=answer)
        return refusal(p.python(code), *names)

    return case


def inputs_past_the_model(answer_length=None, window=512, names=()):
    """`lveval inputs --out` with a window or an answer length the model cannot take."""

    def case(p: Probe):
        model = tiny_model(p)
        config = inputs_setup(p, answer_length, path=str(model), max_seq_len=window)
        return refusal(p.lveval('inputs', config, '--out', p.tmp / 'inputs.jsonl'), *names)

    return case


def inputs_hub_id_offline(p: Probe):
    """A hub id found nowhere on this machine: answered at once naming the fix, not after a
    minute of hub retries."""
    config = inputs_setup(p, path='org/no-such-model')
    env = {'HF_HUB_CACHE': str(p.tmp / 'hf-cache'), 'LVEVAL_ALLOW_HUB': '0'}
    ran = p.lveval('inputs', config, '--out', p.tmp / 'inputs.jsonl', env=env)
    if ran.seconds > 10:
        return UNBOUNDED, f'{ran.seconds:.0f} s: {ran.last_line()}'
    return refusal(ran, 'org/no-such-model', 'path=')


# ---- benchmark plugins ------------------------------------------------------------------------

PLUGIN_PROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
[project]
name = "odd-bench"
version = "1.0"
[project.entry-points."opencompass_lveval.benchmarks"]
odd = "odd_bench:Bench"
[tool.setuptools]
py-modules = ["odd_bench"]
"""
LVEVAL_CLASS = 'from opencompass_lveval.lveval.benchmark import LVEval\n\n\n'


def broken_plugin(source: str):
    """A distribution whose benchmark entry point is broken, installed by pip: `lveval score`
    must still score with the built-in LV-Eval and name the distribution and entry point."""

    def case(p: Probe):
        p.write('plugin/odd_bench.py', source)
        p.write('plugin/pyproject.toml', PLUGIN_PROJECT)
        pip = [sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--no-index']
        pip += ['--no-build-isolation', '--target', str(p.tmp / 'site'), str(p.tmp / 'plugin')]
        subprocess.run(pip, check=True, capture_output=True)
        p.jsonl('predictions/cmrc_mixup_16k.jsonl', [{'pred': '北京', 'answers': ['北京']}])
        ran = p.lveval('score', p.tmp / 'predictions', env={'PYTHONPATH': str(p.tmp / 'site')})
        scored = (p.tmp / 'predictions' / 'eval_result' / 'result.json').is_file()
        if 'Traceback (most recent call last)' in ran.out:
            return CRASH, ran.last_line()
        if not scored:
            if ran.rc == 0:
                return WRONG, f'exit 0, nothing scored: {ran.last_line()}'
            return CRASH, f'the built-in score did not run: {ran.last_line()}'
        if ran.mentions('odd-bench', 'odd = odd_bench:Bench'):
            return GOOD, 'scored; the plugin named with its distribution'
        return WRONG, 'scored, the broken plugin unnamed'

    return case


# ---- arguments --------------------------------------------------------------------------------


def argument(*argv, names=(), outside=None, memory_gb=None, within=None):
    """A command with one bad argument: refused naming ``names``; unsafe when it writes
    ``outside``; unbounded when it does not answer within ``within`` seconds."""

    def case(p: Probe):
        args = [p.tmp / a[2:] if isinstance(a, str) and a.startswith('T:') else a for a in argv]
        args = [{'CORPORA': CORPORA, 'BOOK': BOOK}.get(a, a) for a in args]
        ran = p.lveval(*args, memory_gb=memory_gb)
        strays = list(p.tmp.parent.parent.glob(outside)) if outside else []
        if strays:
            for stray in strays:
                stray.unlink()
            return UNSAFE, f'wrote {outside} outside --out'
        if 'MemoryError' in ran.out or (within and ran.seconds > within):
            return UNBOUNDED, f'{ran.seconds:.1f} s, {ran.peak_mb:.0f} MB: {ran.last_line()}'
        return refusal(ran, *names)

    return case


def full_width_level_in_data_check(p: Probe):
    p.jsonl('data/cmrc_mixup_1６k.jsonl', [{'input': 'q', 'context': 'c', 'answers': ['a']}])
    ran = p.lveval('data', 'check', p.tmp / 'data')
    if 'Traceback (most recent call last)' in ran.out:
        return CRASH, ran.last_line()
    if any('1６k' in line and ' ok' in line for line in ran.out.splitlines()):
        return WRONG, 'data check calls cmrc_mixup_1６k ok'
    return GOOD, ran.last_line()


def empty_data_dir_variable(variable: str, code: str, stray: str, content: str):
    """An empty data-folder variable must not mean the current folder (a stray file there)."""

    def case(p: Probe):
        p.write(stray, content)
        ran = p.python(code, env={variable: ''})
        if 'read stray file' in ran.out:
            return WRONG, f'an empty {variable} read {stray} under the current folder'
        return refusal(ran, variable)

    return case


def fifo_in_data_folder(p: Probe):
    p.jsonl('data/cmrc_mixup_512k.jsonl', [{'input': 'q', 'context': 'c', 'answers': ['a']}])
    os.mkfifo(p.tmp / 'data' / 'lic_mixup_512k.jsonl')
    ran = p.lveval('data', 'check', p.tmp / 'data', timeout=15)
    if ran.timed_out:
        return UNBOUNDED, 'data check hung on the FIFO'
    if 'Traceback (most recent call last)' in ran.out:
        return CRASH, ran.last_line()
    if ran.mentions('lic_mixup_512k'):
        return GOOD, 'the FIFO is named and skipped'
    return WRONG, 'the FIFO went unmentioned'


def leaderboard_out_is_a_file(p: Probe):
    run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'})
    p.write('board', 'not a folder')
    return refusal(board(p), 'board')


# ---- builder inputs ---------------------------------------------------------------------------

QUESTION = {
    'question_id': 'q',
    'question': 'How do I sort a list?',
    'all_answers': ['Use sorted().', 'Call list.sort().'],
    'answer': 'A1',
    'tags': ['python'],
}


def bestanswer_source(change: dict, field: str):
    def case(p: Probe):
        questions = [dict(QUESTION, question_id=f'q{i}') for i in range(3)]
        bad = {k: v for k, v in {**questions[1], **change}.items() if v is not None}
        text = json.dumps([questions[0], bad, questions[2]]).replace('"__NaN__"', 'NaN')
        source = p.write('source.json', text)
        ran = p.lveval('build', 'bestanswer', '--source', source, '--setting', '4k', '--out',
                       p.tmp / 'out')  # fmt: skip
        return refusal(ran, 'source.json', field)

    return case


# Twenty good items whose documents fill a 1k context, so a good file builds and only the bad
# item can stop a build.
ITEMS = [
    {'input': f'Who wrote part {i}?', 'answers': [f'Writer {i}'],
     'documents': [f'Part {i} was written by Writer {i}. ' + 'The story goes on. ' * 40]}
    for i in range(20)
]  # fmt: skip


def mixup_item(change: dict, field: str):
    def case(p: Probe):
        bad = {k: v for k, v in {**ITEMS[1], **change}.items() if v is not None}
        lines = [json.dumps(item) for item in ITEMS]
        lines[1] = json.dumps(bad).replace('"__NaN__"', 'NaN')
        items = p.write('items.jsonl', '\n'.join(lines) + '\n')
        ran = p.lveval('build', 'mixup', '--items', items, '--dataset', 'mine', '--language',
                       'en', '--levels', '1k', '--out', p.tmp / 'out')  # fmt: skip
        return refusal(ran, 'items.jsonl', field)

    return case


def mixup_builds(p: Probe):
    """The control: the good items alone build a file (so the cases above test only their item)."""
    ran = p.lveval('build', 'mixup', '--items', p.tmp / 'items.jsonl', '--dataset', 'mine',
                   '--language', 'en', '--levels', '1k', '--out', p.tmp / 'out')  # fmt: skip
    built = lines_in(p.tmp / 'out' / 'mine_1k.jsonl')
    return (GOOD if ran.rc == 0 and built == len(ITEMS) else CRASH), f'{built} records built'


def mixup_rules(rules: str, *names):
    def case(p: Probe):
        path = p.write('rules.json', rules)
        ran = p.lveval('build', 'mixup', '--items', p.tmp / 'items.jsonl', '--rules', path, '--dataset', 'mine',
                       '--language', 'en', '--levels', '1k', '--out', p.tmp / 'out')  # fmt: skip
        return refusal(ran, 'rules.json', *names)

    return case


# ---- unbounded reads --------------------------------------------------------------------------


def leaderboard_with_many_missing(p: Probe):
    """One model measured on one dataset of 101 asked, with 100 task logs of 1 MB: each log must
    be read once, not once per missing dataset."""
    datasets = [f'LVEval_cmrc_mixup_{n}k' for n in range(1001, 1101)]
    asked = [dict(abbr=d) for d in ['LVEval_cmrc_mixup_16k', *datasets]]
    config = f"models = [dict(abbr='m')]\ndatasets = {asked!r}\n"
    run = run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): '{"score": 10.0}'}, config)
    filler = ('loading the model and the data, nothing to report\n' * 20000)[:1_000_000]
    for dataset in datasets:
        p.write(f'{run.relative_to(p.tmp)}/logs/infer/m/{dataset}.out', filler + dataset + '\n')
    ran = board(p)
    figure = f'{ran.seconds:.1f} s, {ran.peak_mb:.0f} MB'
    if ran.seconds > 5:
        return UNBOUNDED, figure
    return (GOOD if ran.rc in (0, 1) and 'Traceback' not in ran.out else CRASH), figure


def bestanswer_growth(p: Probe):
    """The real stackselect source at 1x and 4x: time must grow about linearly, not 16-fold."""
    questions = stackselect_questions()
    seconds = []
    for copies in (1, 4):
        many = [
            dict(q, question_id=f'{q.get("question_id")}-{c}') for c in range(copies)
            for q in questions
        ]  # fmt: skip
        source = p.write(f'source{copies}.json', json.dumps(many))
        ran = p.lveval('build', 'bestanswer', '--source', source, '--setting', '4k', '--tokenizer',
                       'words', '--out', p.tmp / f'out{copies}', timeout=300)  # fmt: skip
        if ran.rc != 0:
            return refusal(ran, 'source')
        seconds.append(ran.seconds)
    growth = seconds[1] / seconds[0]
    figure = f'{len(questions)} questions {seconds[0]:.1f} s, x4 {seconds[1]:.1f} s ({growth:.1f}x)'
    return (UNBOUNDED if growth > 8 else GOOD), figure


def slurm_gpu_kinds(p: Probe):
    ran = p.python(
        'from opencompass_lveval.runner.slurm import gpus_per_node\n'
        "print('gpus', gpus_per_node('node1 gpu:a100:4,gpu:v100:4'))"
    )
    if 'gpus 8' in ran.out:
        return GOOD, '8 GPUs'
    return (WRONG if 'gpus' in ran.out else CRASH), ran.last_line()


# ---- the LLM judge against chat servers on 127.0.0.1, and lveval compare --------------------------

REPO = Path(__file__).resolve().parents[1]


def chat_server(answer):
    """tests/servers.py's OpenAI-compatible chat endpoint on 127.0.0.1 (answers ``answer(prompt)``
    and records what it was asked)."""
    sys.path.insert(0, str(REPO / 'tests'))
    from servers import ChatServer

    return ChatServer(answer)


def judge_setup(p: Probe, name: str, server) -> tuple[Path, Path]:
    """Three cmrc_mixup predictions and a judge config named ``judge`` for ``server``."""
    preds = p.jsonl('preds/cmrc_mixup_16k.jsonl', [
        {'pred': f'answer {i}', 'answers': [f'answer {i}'], 'input': f'question {i}'}
        for i in range(3)
    ]).parent  # fmt: skip
    config = p.write(
        f'{name}.py',
        f"judge = dict(type='LongContextAPI', abbr='judge', path={name!r}, url={server.url!r}, "
        "max_seq_len=8192, tokenizer_path='cl100k_base', retry=0)\n",
    )
    return preds, config


def judged_score(preds: Path):
    path = preds / 'eval_result' / 'judge_result.json'
    found = json.loads(path.read_text('utf-8')) if path.is_file() else {}
    return found.get('cmrc_mixup_16k', {})


def judge_same_name(p: Probe):
    """A second judge under the first one's name, another model at another URL."""
    first, second = chat_server(lambda prompt: '[9]'), chat_server(lambda prompt: '[2]')
    try:
        preds, config_a = judge_setup(p, 'judge-a', first)
        _, config_b = judge_setup(p, 'judge-b', second)
        p.lveval('judge', preds, '--config', config_a)
        ran = p.lveval('judge', preds, '--config', config_b)
    finally:
        first.stop(), second.stop()
    score = judged_score(preds).get('judge_score')
    if ran.rc != 0:
        return refusal(ran, 'judge')
    if not second.asked:
        return WRONG, f'the second judge was asked nothing: judge_score {score} from the first'
    return (GOOD if score == 20.0 else WRONG), f'asked {len(second.asked)} times, {score}'


def judge_echo(p: Probe):
    """A judge that echoes the prompt, whose format example is "[5]"."""
    echo = chat_server(lambda prompt: prompt)
    try:
        preds, config = judge_setup(p, 'echo', echo)
        ran = p.lveval('judge', preds, '--config', config)
    finally:
        echo.stop()
    found = judged_score(preds)
    if ran.rc != 0:
        return refusal(ran, 'judge')
    if 'judge_score' in found:
        return WRONG, f"judge_score {found['judge_score']}: the prompt's example read as a rating"
    return GOOD, f'{found.get("judge", {}).get("unparseable")} of 3 unparseable'


def judge_cache_count_string(p: Probe):
    """A cached verdict whose prompt_tokens is "abc"."""
    server = chat_server(lambda prompt: '[9]')
    try:
        preds, config = judge_setup(p, 'judge-a', server)
        p.lveval('judge', preds, '--config', config)
        for entry in (preds / 'eval_result' / 'judge_cache').rglob('verdicts/*/*.json'):
            stored = json.loads(entry.read_text('utf-8'))
            entry.write_text(json.dumps(dict(stored, prompt_tokens='abc')), 'utf-8')
        ran = p.lveval('judge', preds, '--config', config)
    finally:
        server.stop()
    if 'Traceback (most recent call last)' in ran.out:
        return CRASH, ran.last_line()
    if ran.rc == 0 and judged_score(preds).get('judge_score') == 90.0:
        line = next((x for x in ran.out.splitlines() if x.startswith('cmrc_mixup_16k')), '')
        return COUNTED, f'asked again: {line[-70:]}'
    return refusal(ran, 'prompt_tokens')


def result_judge_count_string(p: Probe):
    result = {'score': 10.0, 'judge': {'samples': 3, 'rated': 3, 'prompt_tokens': 'abc'}}
    run = run_folder(p, {('m', 'LVEval_cmrc_mixup_16k'): json.dumps(result)})
    return refusal(report(p, run), 'LVEval_cmrc_mixup_16k.json', 'prompt_tokens')


def compared(p: Probe, name: str, change=None) -> Path:
    """A run of model ``name`` on 40 cmrc_mixup records of one file, the details naming each
    record as OpenCompass does; ``change`` edits the result."""
    abbr = 'LVEval_cmrc_mixup_16k'
    details = [{'example_abbr': f'{abbr}_{i}', 'score': [float(i % 2)]} for i in range(40)]
    result = {'score': 50.0, 'details': details, 'provenance': {'data_fingerprint': 'f1'}}
    if change:
        change(result)
    config = f'models = [dict(abbr={name!r})]\ndatasets = [dict(abbr={abbr!r})]\n'
    p.write(f'{name}/work/20260101_000000/configs/c.py', config)
    p.write(f'{name}/work/20260101_000000/results/{name}/{abbr}.json', json.dumps(result))
    return p.tmp / name / 'work'


def compare_cell(change, text=None):
    """`lveval compare` of a run with one whose result ``change`` edits: the cmrc_mixup 16k cell
    must be refused (``text``: or, where given, said in the output)."""

    def case(p: Probe):
        b = compared(p, 'b', change)
        if text:
            path = b / '20260101_000000' / 'results' / 'b' / 'LVEval_cmrc_mixup_16k.json'
            path.write_text(path.read_text('utf-8').replace('"TEXT"', text), 'utf-8')
        ran = p.lveval('compare', compared(p, 'a'), b, '--out', p.tmp / 'out')
        table = p.tmp / 'out' / 'comparison.csv'
        if 'Traceback (most recent call last)' in ran.out:
            return CRASH, ran.last_line()
        if not table.is_file():
            return refusal(ran, 'LVEval_cmrc_mixup_16k.json')
        with open(table, encoding='utf-8', newline='') as stream:
            verdict = next(r[-1] for r in csv.reader(stream) if r[1:3] == ['cmrc_mixup', '16k'])
        if verdict.startswith('refused'):
            return GOOD, verdict[:100]
        return WRONG, f'compared: {verdict[:90]}'


# ---- the API client against hostile local servers (issue 37) --------------------------------

PROBE_KEY = 'sk-proj/Ab+Cd=Ef\\Gh-PROBESECRET-9'  # '/', '+', '=', a backslash
SECRET_PART = 'PROBESECRET'
PROMPT = '[[{"role": "HUMAN", "prompt": "Where is the key?"}]]'


def api_run(p: Probe, url: str, settings: str = '', env=None, timeout=60) -> Ran:
    """A GPT row of ``LongContextAPI`` built against ``url`` and asked one prompt, in a fresh
    process: it prints ``built`` once the model is built, then the answer."""
    code = (
        'from opencompass_lveval.models.api import LongContextAPI\n'
        "model = LongContextAPI(path='gpt-4-0613', max_seq_len=8192, tokenizer_path='cl100k_base',"
        f' url={url!r}, cache_dir={str(p.tmp / "cache")!r}, {settings})\n'
        "print('built', flush=True)\n"
        f"print('answer:', repr(model.generate({PROMPT}, 8)[0]))\n"
    )
    return p.python(code, env=env, timeout=timeout)


def cached_texts(p: Probe) -> list[str]:
    return [path.read_text('utf-8') for path in sorted((p.tmp / 'cache').rglob('*.json'))]


def echoed_key(forms):
    """A server that refuses the key and echoes it in ``forms``: unsafe when any of it shows."""

    def case(p: Probe):
        with HostileServer(echo_key(401, forms)) as server:
            ran = api_run(p, server.url, "key_env='PROBE_KEY', retry=0", {'PROBE_KEY': PROBE_KEY})
        if SECRET_PART in ran.out:
            return UNSAFE, 'the key, ' + ' / '.join(forms) + ', is in the error'
        return refusal(ran, 'redacted')

    return case


def later_records(result):  # another test_range of the same file: records 40 to 79
    for index, detail in enumerate(result['details']):
        detail['example_abbr'] = f'LVEval_cmrc_mixup_16k_{40 + index}'


def repeated_record(result):
    result['details'][1]['example_abbr'] = result['details'][0]['example_abbr']


def compare_score_not_mean(p: Probe):
    ran = p.lveval('compare', compared(p, 'a'), compared(p, 'b', lambda r: r.update(score=3.0)))
    if 'Traceback (most recent call last)' in ran.out:
        return CRASH, ran.last_line()
    if ran.mentions('LVEval_cmrc_mixup_16k.json', 'mean'):
        return COUNTED, 'the file and its mean named'
    return WRONG, 'score 3.00 against a mean of 50.00 compared without a word'


def compare_without_results(p: Probe):
    empty = run_folder(p, {}).parent
    ran = p.lveval('compare', empty, compared(p, 'a'))
    if 'several models' in ran.out:
        return CRASH, f'the wrong cause: {ran.last_line()}'
    return refusal(ran, empty)


def compare_synthetic(p: Probe):
    def synthetic(result):
        result['provenance']['data_origin'] = 'synthetic'

    ran = p.lveval('compare', compared(p, 'a'), compared(p, 'b', synthetic))
    if 'Traceback (most recent call last)' in ran.out:
        return CRASH, ran.last_line()
    return (
        GOOD if ran.mentions('synthetic') else WRONG
    ), f'synthetic said: {ran.mentions("synthetic")}'


def unsendable_key(key: str):
    """A key no header can carry: unsafe when it shows; a crash when it fails at the request."""

    def case(p: Probe):
        with HostileServer(completion('x')) as server:
            ran = api_run(p, server.url, "key_env='PROBE_KEY', retry=0", {'PROBE_KEY': key})
        if SECRET_PART in ran.out:
            return UNSAFE, 'the key is in the error'
        if ran.mentions('built'):
            return CRASH, f'built, then failed at the request: {ran.last_line()}'
        return refusal(ran, 'PROBE_KEY')

    return case


def dripping(headers_at_once: bool, settings: str = 'timeout=2, retry=0'):
    """A server that sends a byte every 0.5 s: unbounded when the request outlives 30 s."""

    def case(p: Probe):
        with HostileServer(drip(0.5, headers_at_once)) as server:
            ran = api_run(p, server.url, settings, timeout=30)
        return refusal(ran, 'timeout')

    return case


def timeout_value(value: str):
    """A timeout no request can keep, against a server that answers: refused when the model is
    built, else a crash (it fails at the first request) or silently accepted."""

    def case(p: Probe):
        with HostileServer(completion('answered')) as server:
            ran = api_run(p, server.url, f'timeout={value}, retry=0', timeout=30)
        if ran.mentions('built') and ran.rc != 0 and not ran.timed_out:
            return CRASH, f'built, then failed at the first request: {ran.last_line()}'
        return refusal(ran, 'timeout')

    return case


def huge_reply(declared: bool):
    """200 MB for an 8-token request: unbounded when it is read whole (the peak memory over that
    of a run answered a few bytes), cached or answered."""

    def case(p: Probe):
        with HostileServer(completion('ok')) as server:
            baseline = api_run(p, server.url, 'retry=0').peak_mb
        shutil.rmtree(p.tmp / 'cache')  # the same request: it would be answered from there
        with HostileServer(huge(200 * 2**20, declared)) as server:
            ran = api_run(p, server.url, 'retry=0', timeout=120)
        cached = sum(len(text) for text in cached_texts(p))
        grown = ran.peak_mb - baseline
        if ran.rc == 0 or cached > 2**20 or grown > 200:
            return UNBOUNDED, f'+{grown:.0f} MB peak, {cached / 2**20:.0f} MB cached'
        verdict, said = refusal(ran, 'max_reply_bytes')
        return verdict, f'+{grown:.0f} MB peak: {said}'

    return case


def retry_after_cap(p: Probe):
    """Retry-After: 3600 on every attempt, with ``max_wait_s=1``: unbounded when the cap
    cannot be set (or does not hold)."""

    with HostileServer(throttled('3600')) as server:
        ran = api_run(p, server.url, 'retry=1, max_wait_s=1', timeout=60)
    if ran.mentions('unknown setting'):
        return UNBOUNDED, 'max_wait_s cannot be set: ' + ran.last_line()
    return refusal(ran, 'HTTP 429')


def answer_content(content, expected=None):
    """A 200 whose content is ``content``: silently wrong when the answer differs from
    ``expected`` (the joined parts) or, with no text expected, when anything was answered or
    cached."""

    def case(p: Probe):
        with HostileServer(completion(content)) as server:
            ran = api_run(p, server.url, 'retry=0')
        if expected is not None:
            if ran.mentions(f'answer: {expected!r}'):
                return GOOD, ran.last_line()
            return WRONG, ran.last_line()
        if ran.rc == 0 or cached_texts(p):
            return WRONG, f'answered {ran.last_line()!r}, {len(cached_texts(p))} cached'
        return refusal(ran, 'sample 0')

    return case


def redirected(status: int):
    """A redirect to another local server: silently wrong when the other host answers."""

    def case(p: Probe):
        with HostileServer(completion('the other host')) as other:
            with HostileServer(redirect(status, f'{other.url}/chat/completions')) as server:
                ran = api_run(p, server.url, 'retry=0')
            if other.requests or ran.mentions('the other host'):
                return WRONG, f'{len(other.requests)} request(s) to the other host: ' + (
                    ran.last_line()
                )
        return refusal(ran, other.url)

    return case


def impossible_url(url: str):
    """A URL no request can reach: a crash when it is built and then retried as an outage."""

    def case(p: Probe):
        ran = api_run(p, url, 'retry=5', timeout=120)
        if ran.mentions('built'):
            return CRASH, f'built, then retried for {ran.seconds:.0f} s: {ran.last_line()}'
        return refusal(ran, 'url')

    return case


def cache_entry(change: dict):
    """A cached reply edited to a wrong type: a crash when the resumed run breaks on it, silently
    wrong when it answers from it."""

    def case(p: Probe):
        with HostileServer(completion('Paris')) as server:
            api_run(p, server.url, 'retry=0')
            [entry] = (p.tmp / 'cache').rglob('*.json')
            entry.write_text(json.dumps({**json.loads(entry.read_text()), **change}), 'utf-8')
            ran = api_run(p, server.url, 'retry=0')
            asked = len(server.requests)
        if ran.rc == 0 and ran.mentions("answer: 'Paris'") and asked == 2:
            named = [
                line.split('.json: ')[-1] for line in ran.out.splitlines() if '.json: ' in line
            ]
            return GOOD, f'asked again; {(named or ["the entry not named"])[0][:100]}'
        if ran.rc == 0:
            return WRONG, f'answered from the bad entry: {ran.last_line()}'
        return refusal(ran, entry.name)

    return case


# ---- whole OpenCompass runs that cannot work -------------------------------------------------

KEEP = ('LVEval_cmrc_mixup_16k', 'LVEval_factrecall_en_16k')
BM25 = {'type': 'opencompass_lveval.models.baselines.ExtractiveBaseline', 'abbr': 'bm25',
        'max_out_len': 64, 'batch_size': 8, 'run_cfg': {'num_gpus': 0}}  # fmt: skip


def demo_run(p: Probe, models: list, path='data/demo', env=None, ppl=False) -> Ran:
    """`opencompass` on the tree's own configs/eval_demo.py (its stages) with these models and
    two datasets read from ``path`` (with ``ppl``, one of them TSort in perplexity mode), dumped
    as tests/runs.py does, on demo data."""
    p.lveval('data', 'synth', p.tmp / 'data' / 'demo', '--count', '2')
    keep = KEEP[:1] if ppl else KEEP
    dump = (
        'from mmengine.config import Config\n'
        f'def load(name): return Config.fromfile({str(p.tree / "configs")!r} + name, '
        'format_python_code=False)\n'
        "cfg = load('/eval_demo.py')\n"
        f"cfg.datasets = [dict(d, path={path!r}) for d in cfg.datasets if d['abbr'] in {keep!r}]\n"
        f'if {ppl!r}:\n'
        "    found = load('/datasets/adaleval/adaleval_tsort_ppl.py').adaleval_tsort_ppl_datasets\n"
        "    ppl = [d for d in found if d['abbr'] == 'AdaLEval_tsort_ppl_2k']\n"
        f'    ppl[0].update(path={path!r}, limit=10)\n'  # in place: its class dumps by name
        '    cfg.datasets = cfg.datasets + ppl\n'
        f'cfg.models = {models!r}\n'
        f'cfg.dump({str(p.tmp / "run.py")!r})\n'
    )
    made = p.python(dump)
    if made.rc != 0:
        raise RuntimeError(f'the config did not load: {made.last_line()}')
    return p.opencompass(p.tmp / 'run.py', env=env)


def launched(ran: Ran, dataset: str = '') -> list[str]:
    """The evaluation tasks OpenCompass's runners said they started (with ``dataset``)."""
    return [
        line for line in ran.out.splitlines() if 'launch OpenICLEval[' in line and dataset in line
    ]


def stopped_early(ran: Ran, *names) -> tuple[str, str]:
    """A run that cannot work: silently wrong when it exits 0 or starts evaluation tasks anyway,
    a crash when it ends in a traceback or names none of ``names``."""
    figure = f'{ran.seconds:.0f} s'
    if launched(ran):
        return WRONG, f'{len(launched(ran))} evaluation tasks started, exit {ran.rc}, {figure}'
    outcome, text = refusal(ran, *names)
    return outcome, f'{figure}: {text}'


def run_with_missing_model(p: Probe):
    model = {'type': 'opencompass_lveval.models.hf.LongContextHF', 'abbr': 'mine',
             'path': './no/such/model', 'max_seq_len': 4096, 'run_cfg': {'num_gpus': 0}}  # fmt: skip
    return stopped_early(demo_run(p, [model]), 'no/such/model')


def run_with_missing_data(p: Probe):
    return stopped_early(demo_run(p, [BM25], path='data/nowhere'), 'data/nowhere')


def run_with_gpus_not_here(p: Probe):
    big = {**BM25, 'run_cfg': {'num_gpus': 1}}
    ran = demo_run(p, [big], env={'CUDA_VISIBLE_DEVICES': ''})
    return stopped_early(ran, 'GPU', 'eval_demo.py')


def run_with_failed_inference(p: Probe):
    """A CPU baseline on TSort in perplexity mode: it has no get_ppl, which shows only when that
    dataset's inference calls it. No evaluation task may start for it, and the run's output
    must name the error."""
    ran = demo_run(p, [BM25], ppl=True)
    if launched(ran, 'tsort_ppl'):
        return WRONG, f'its evaluation started anyway, exit {ran.rc} ({ran.seconds:.0f} s)'
    if not launched(ran, KEEP[0]):
        return CRASH, f'the good dataset was not evaluated: {ran.last_line()}'
    if 'does not support ppl' not in ran.out:
        return CRASH, 'the run does not say why the dataset failed'
    return GOOD, f'{ran.seconds:.0f} s, only the good dataset evaluated, the error named'


# ---- serving: replies bound to their requests, the reply store, settings (issue 43) ----------
# Each snippet runs against either tree: it makes requests and reads the store with the API the
# tree has (``serving.request.planned_request`` now; ``plan.PlannedRequest`` before), and
# replicas are scripted HTTP servers in the snippet's process, one answering rightly and one
# misbehaving as ``kind`` says.

SERVE_PRELUDE = r"""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from opencompass_lveval.serving.dispatch import dispatch
from opencompass_lveval.serving.store import ReplyStore
SAMPLING = {'temperature': 0, 'max_tokens': 8, 'stop': []}
try:
    from opencompass_lveval.serving.request import planned_request
    def make(i):
        return planned_request('e', [i] * (20 + i), SAMPLING, f'#{i}', model='m')
    def stored(store, r):
        return (store.read(r.expected())[0] or {}).get('text')
except ImportError:
    from opencompass_lveval.serving.plan import PlannedRequest
    def make(i):
        body = {'model': 'm', 'prompt': [i] * (20 + i), **SAMPLING}
        return PlannedRequest(f'{i:064x}', 28 + i, [i] * (20 + i), 8, body, f'#{i}')
    def stored(store, r):
        return (store.get(r.key) or {}).get('text')

class Replica:
    def __init__(self, name, kind=None, huge=0):
        previous = []
        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def log_message(self, *a): pass
            def do_GET(self):
                self.send_response(200); self.send_header('Content-Length', '0'); self.end_headers()
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                ids = body['prompt']
                right = kind in (None, 'previous', 'no-choices', 'huge')  # else another's text
                text = f'answer {ids[0]}' if right else f'wrong {ids[0]}'
                reply = {'model': body['model'],
                         'choices': [{'text': text + 'x' * huge, 'finish_reason': 'length'}],
                         'usage': {'prompt_tokens': len(ids), 'completion_tokens': 3}}
                previous.append(reply)
                if kind == 'previous':
                    reply = previous[-2] if len(previous) > 1 else reply
                elif kind == 'other-model':
                    reply = {**reply, 'model': 'another'}
                elif kind == 'long':
                    reply = {**reply, 'usage': {**reply['usage'], 'completion_tokens': 3200}}
                elif kind == 'two-choices':
                    reply = {**reply, 'choices': reply['choices'] + [{'text': f'answer {ids[0]}'}]}
                elif kind == 'no-choices':
                    reply = {**reply, 'choices': []}
                data = json.dumps(reply).encode()
                self.send_response(200); self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:
                    pass
        class Quiet(ThreadingHTTPServer):
            daemon_threads = True
            def handle_error(self, *a): pass
        self.server = Quiet(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.name, self.node, self.where = name, 'localhost', {}
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/v1'
    def alive(self): return True
    def stop(self): self.server.shutdown()
    def log_tail(self, chars=3000): return ''
"""


def served_replies(kind: str, huge: int = 0, alone: bool = False):
    """Requests over a replica misbehaving as ``kind`` (``huge``: replies of that many bytes
    more) and a right one (none, ``alone``): silently wrong when a stored reply is not its
    request's answer, unbounded when a reply past 16 MiB is kept, a crash when the stage fails
    naming nothing."""

    def case(p: Probe):
        replicas = '[bad]' if alone else '[bad, Replica("good")]'
        code = SERVE_PRELUDE + (
            'requests = [make(i) for i in range(12)]\n'
            f'bad = Replica("bad", {kind!r}, {huge})\n'
            "store = ReplyStore('store')\n"
            f'dispatch(requests, {replicas}, store, 200, 30)\n'
            "right = sum(1 for i, r in enumerate(requests) if (stored(store, r) or '').startswith(f'answer {i}'))\n"
            "print(f'stored answers of their own request: {right} of 12')\n"
        )
        ran = p.python(code, kill_after=60, memory_gb=6)
        if ran.timed_out or (ran.rc < 0 and ran.seconds >= 59):
            return UNBOUNDED, f'killed after {ran.seconds:.0f} s'
        kept = [f.stat().st_size for f in (p.tmp / 'store').rglob('*.json')]
        if kept and max(kept) > 16 * 2**20:
            return (
                UNBOUNDED,
                f'replies of {max(kept) / 2**20:.0f} MB kept, peak {ran.peak_mb:.0f} MB',
            )
        if 'of their own request: 12 of 12' in ran.out:
            peak = f', peak {ran.peak_mb:.0f} MB' if huge else ''
            return GOOD, f"every stored reply its request's, {ran.seconds:.0f} s{peak}"
        if 'of their own request:' in ran.out:
            return WRONG, ran.last_line()
        return refusal(ran, 'choices')

    return case


def unwritable_reply_store(p: Probe):
    """A store that cannot be written: unbounded when the stage goes on, good when it stops at
    once naming the path."""
    p.write('full', '')
    code = SERVE_PRELUDE + (
        "replica = Replica('r0')\n"
        "dispatch([make(i) for i in range(8)], [replica], ReplyStore('full/store'), 200, 30)\n"
        "print('served')\n"
    )
    ran = p.python(code, kill_after=30)
    if ran.seconds >= 29:
        return UNBOUNDED, f'still running after {ran.seconds:.0f} s, holding its replicas'
    return refusal(ran, 'full/store')


def serve_setting(settings: str, *names):
    """A ServeOnceRunner setting no stage could keep: refused when the runner is built."""

    def case(p: Probe):
        code = (
            'from opencompass_lveval.runner.serve_once import ServeOnceRunner\n'
            "task = dict(type='opencompass_lveval.runner.infer_task.LongContextInferTask')\n"
            f'ServeOnceRunner(task=task, {settings})\n'
            "print('accepted')\n"
        )
        ran = p.python(code)
        if ran.rc == 0 and 'replica_env' in settings:
            return UNSAFE, "accepted: the value is in the run folder's config dump"
        if ran.rc == 0:
            return CRASH, 'accepted at build; the stage fails at launch'
        return refusal(ran, *names)

    return case


def cpu_replicas_past_the_cores(p: Probe):
    """300 CPU replicas on this machine: unbounded when they start, good when refused first."""
    code = (
        'import os\n'
        'try:\n'
        '    from opencompass_lveval.serving.placement import ReplicaSpec\n'
        '    from opencompass_lveval.serving.placement.local import LocalPlacement\n'
        'except ImportError:\n'
        '    from opencompass_lveval.serving.replicas import LocalPlacement, ReplicaSpec\n'
        "specs = [ReplicaSpec(f'r{i}', ['true'], {}, 0) for i in range(300)]\n"
        "placement = LocalPlacement(log_dir='logs')\n"
        "started = (getattr(placement, 'prepare', None) or placement.start)(specs)\n"
        'for replica in started:\n'
        "    getattr(replica, 'stop', lambda: None)() if hasattr(replica, 'process') else None\n"
        'print(f\'started: {len(list(os.scandir("logs")))} servers\')\n'
    )
    ran = p.python(code)
    if 'started: 300' in ran.out:
        return UNBOUNDED, '300 servers started at once'
    return refusal(ran, '300', 'cores')


def cut_replica_journal(p: Probe):
    p.write('logs/replicas.jsonl', '{"replica": "r0", "event": "started"}\n{"replica": "r0", "ev')
    code = (
        'from pathlib import Path\n'
        'from opencompass_lveval.serving.journal import ReplicaJournal\n'
        'print(f\'events read: {len(ReplicaJournal(Path("logs")).records)}\')\n'
    )
    ran = p.python(code)
    if ran.rc == 0 and 'events read: 1' in ran.out:
        return GOOD, 'read line by line, the cut line skipped'
    return refusal(ran, 'replicas.jsonl', 'line 2')


def weights_rewritten_in_place(p: Probe):
    """The same weights folder rewritten with other weights: silently wrong when the engine's
    identity (and so every reply's key) stays the same and -r reuses the old replies."""
    folder = p.tmp / 'model'
    folder.mkdir()
    (folder / 'config.json').write_text('{"hidden_size": 64, "max_position_embeddings": 4096}')
    code = (
        'import os\n'
        f'model = dict(abbr="m", path={str(folder)!r}, max_seq_len=4096)\n'
        'try:\n'
        '    from opencompass_lveval.serving.request import engine_identity as identity\n'
        'except ImportError:\n'
        '    from opencompass_lveval.serving.plan import model_identity as identity\n'
        'def weights(data):\n'
        f"    open(os.path.join({str(folder)!r}, 'model.safetensors'), 'wb').write(data)\n"
        "weights(b'checkpoint A' * 100); before = identity(model)\n"
        "weights(b'checkpoint B' * 100); after = identity(model)\n"
        "print('same engine' if before == after else 'another engine')\n"
    )
    ran = p.python(code)
    if 'another engine' in ran.out:
        return GOOD, 'another engine: every reply asked again'
    if 'same engine' in ran.out:
        return WRONG, "the same keys: -r mixes two checkpoints' answers"
    return refusal(ran, 'model')


SERVING_CASES = {
    **{f'serve-reply-{kind}': served_replies(kind) for kind in (
        'previous', 'other-model', 'long', 'two-choices')},
    'serve-reply-no-choices': served_replies('no-choices', alone=True),
    'serve-reply-20mb': served_replies('huge', huge=20 * 2**20),
    'serve-store-not-writable': unwritable_reply_store,
    'serve-server-argv-string': serve_setting(
        "server_argv='python -m my.server --port {port}'", 'server_argv'),
    'serve-replica-env-token': serve_setting(
        "replica_env={'HF_TOKEN': 'hf_' + 'x' * 30}", 'HF_TOKEN', 'replica_env_from'),
    'serve-300-cpu-replicas': cpu_replicas_past_the_cores,
    'serve-journal-cut': cut_replica_journal,
    'serve-weights-rewritten': weights_rewritten_in_place,
}  # fmt: skip


# ---- runners under faults (issue 43): RayRunner on a one-machine Ray cluster, run folders --------
# Each tree gets its own Ray cluster (two CPUs, no GPU), whose workers import that tree: the
# runner's code before the fixes was unpickled there by reference. Tasks are shell lines.

RAY_PRELUDE = """
import json, os, sys
from mmengine.config import Config
from opencompass.registry import TASKS
from opencompass.tasks.base import BaseTask
from opencompass_lveval.runner.ray_runner import RayRunner


@TASKS.register_module(force=True)
class ProbeTask(BaseTask):  # OpenCompass's command form: its config path given to a shell
    name_prefix, log_subdir, output_subdir = 'Probe', 'logs/probe', 'probe'

    def __init__(self, cfg):
        super().__init__(cfg)
        self.num_gpus = 0

    def get_command(self, cfg_path, template):
        return template.format(task_cmd=self.model_cfgs[0]['shell'].replace('CFG', cfg_path))

    def run(self):  # only its command runs
        pass


def task(abbr, shell, work='run'):
    model = dict(abbr=abbr, shell=shell)
    return Config(dict(models=[model], datasets=[[dict(abbr='d')]], work_dir=os.path.abspath(work)))


def launch(tasks, **settings):
    status = RayRunner(dict(type='ProbeTask'), **settings).launch(tasks)
    print('status', json.dumps(status), flush=True)
"""
_RAY_HEADS: dict = {}


def probe_ray(tree: Path, env: dict | None = None) -> str:
    """The address of a one-node Ray cluster whose processes import ``tree`` (and get ``env``),
    started at the first call for them and stopped when the probe ends."""
    key = (str(tree), json.dumps(env, sort_keys=True))
    if key not in _RAY_HEADS:
        from servers import free_port

        port = free_port()
        head = subprocess.Popen(
            [str(Path(sys.executable).with_name('ray')), 'start', '--head', '--block',
             '--node-ip-address=127.0.0.1', f'--port={port}', '--num-cpus=2', '--num-gpus=0',
             '--include-dashboard=false', '--disable-usage-stats',
             '--object-store-memory=100000000'],
            env={**os.environ, 'PYTHONPATH': str(tree), **(env or {})}, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=stop_with_parent,
        )  # fmt: skip
        atexit.register(_stop_group, head)
        _RAY_HEADS[key] = f'127.0.0.1:{port}'
        time.sleep(8)  # the head and its raylet start
    return _RAY_HEADS[key]


def stop_with_parent() -> None:
    """In ``ray start --block``: SIGTERM (it stops what it started) when the probe dies."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _stop_group(head: subprocess.Popen) -> None:
    head.terminate()
    try:
        head.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)


def ray_run(p: Probe, body: str, address: str | None = None, env=None, timeout=120) -> Ran:
    """``body`` after ``RAY_PRELUDE`` in the case's folder, ``RAY_ADDRESS`` the tree's cluster
    (or ``address``)."""
    environment = {'RAY_ADDRESS': address or probe_ray(p.tree), 'PYTHONPATH': str(p.tree)}
    return p.python(RAY_PRELUDE + body, env={**environment, **(env or {})}, timeout=timeout)


def statuses(ran: Ran) -> list | None:
    line = next((line for line in ran.out.splitlines() if line.startswith('status ')), None)
    return json.loads(line[len('status ') :]) if line else None


def ray_address(kind: str):
    """``RAY_ADDRESS`` naming a port nothing listens on, one that never answers, or an HTTP
    server: refused within the default limit, naming the address, or unbounded."""

    def case(p: Probe):
        from servers import HostileServer, SilentPort, free_port

        if kind == 'closed':
            server, address = contextlib.nullcontext(), f'127.0.0.1:{free_port()}'
        elif kind == 'silent':
            server = SilentPort()
            address = server.address
        else:
            server = HostileServer(lambda handler, body: handler.send_error(404))
            address = server.url.split('/')[2]
        with server:
            ran = ray_run(p, "launch([task('a', 'true')])", address=address, timeout=75)
        outcome, detail = refusal(ran, address)
        return outcome, f'{ran.seconds:.0f} s: {detail}'

    return case


def ray_num_cpus(value: str, judge_at_build: bool):
    """``num_cpus`` no node can give (64 on 2 CPUs) or no number can be (inf): refused with the
    reason before anything reaches the cluster, or waiting (unbounded) or crashing."""

    def case(p: Probe):
        ran = ray_run(p, f"launch([task('a', 'true')], num_cpus={value})", timeout=75)
        log = p.tmp / 'run' / 'logs' / 'probe' / 'a' / 'd.out'
        said = log.read_text() if log.is_file() else ''
        if ran.timed_out:
            return UNBOUNDED, f'no answer after {ran.seconds:.0f} s'
        if judge_at_build:
            return refusal(ran, 'num_cpus', 'inf')
        if statuses(ran) == [['Probe[a/d]', 1]] and 'num_cpus' in said and '64' in said:
            return GOOD, f'{ran.seconds:.0f} s: {said.strip()[:90]}'
        return CRASH, f'{ran.seconds:.0f} s: {ran.last_line()}'

    return case


def ray_rerun_only_node_lost(p: Probe):
    """The journal of an earlier stage marks the only node lost (its live id): the task must run
    at once, not wait the deadline (60 s here) twice."""
    nodes = ray_run(p, 'import ray\nray.init()\nprint("node", ray.nodes()[0]["NodeID"])')
    node = next(line.split()[1] for line in nodes.out.splitlines() if line.startswith('node '))
    lost = {'task': 'Probe[x/d]', 'attempt': 1, 'host': 'lvnode9', 'node_id': node,
            'outcome': 'deadline', 'lost': True}  # fmt: skip
    p.write('run/logs/ray_runner.jsonl', json.dumps(lost) + '\n')
    ran = ray_run(p, "launch([task('a', 'true')], deadline_s=60)", timeout=100)
    if ran.timed_out or ran.seconds > 60:
        return UNBOUNDED, f'{ran.seconds:.0f} s (deadline 60 s): {ran.last_line()}'
    if statuses(ran) != [['Probe[a/d]', 0]]:
        return CRASH, ran.last_line()
    return GOOD, f'ran in {ran.seconds:.0f} s'


def ray_task_leaves_processes(p: Probe):
    mark = f'sleep 1732.{os.getpid()}'
    ran = ray_run(p, f"launch([task('a', '{mark}1 & setsid nohup {mark}2 >/dev/null 2>&1 &')])")
    left = _processes(mark)
    for pid in left:  # the probe's own leftovers
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if statuses(ran) != [['Probe[a/d]', 0]]:
        return CRASH, ran.last_line()
    if left:
        return UNBOUNDED, f'{len(left)} processes left running after the task ended'
    return GOOD, 'exit 0, no process left'


def _processes(start: str) -> list[int]:
    found = []
    for cmdline in Path('/proc').glob('[0-9]*/cmdline'):
        with contextlib.suppress(OSError):
            if cmdline.read_bytes().replace(b'\0', b' ').decode().startswith(start):
                found.append(int(cmdline.parent.name))
    return found


def ray_node_without_package_code(p: Probe):
    """A node whose Python has the package's metadata but imports a broken copy of its code
    (its processes' PYTHONPATH): the run must stop naming the node."""
    shadow = p.write(
        'shadow/opencompass_lveval/__init__.py', 'import missing_code_of_the_package\n'
    )
    address = probe_ray(p.tree, {'PYTHONPATH': str(shadow.parents[1])})
    ran = ray_run(p, "launch([task('a', 'true'), task('b', 'true')])", address=address)
    host = socket.gethostname()
    if ran.rc == 0:
        return CRASH, f'exit 0, {statuses(ran)}, the node not named: {ran.last_line()}'
    return refusal(ran, host, 'missing_code_of_the_package')


def ray_journal_line(line: str):
    """A journal line that is JSON but no object, or cut: named and skipped, or a crash, or
    dropped without a word."""

    def case(p: Probe):
        p.write('run/logs/ray_runner.jsonl', line)
        ran = ray_run(p, "launch([task('a', 'true')])")
        if 'Traceback' in ran.out or statuses(ran) is None:
            return CRASH, ran.last_line()
        if 'ray_runner.jsonl, line 1' in ran.out:
            return GOOD, 'named and skipped, the task ran'
        return WRONG, 'the line dropped without a word'

    return case


def ray_two_drivers(p: Probe):
    """A second driver on a run folder while the first one's task runs: the task must run once,
    the second driver refused naming the first."""
    ran_file, deadline = p.tmp / 'ran.txt', time.monotonic() + 90
    body = f"launch([task('a', 'echo ran >> {ran_file}; sleep 20')])"
    first = threading.Thread(target=ray_run, args=(p, body))
    first.start()
    while not ran_file.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    second = ray_run(p, body)
    first.join()
    runs = lines_in(ran_file)
    if runs > 1:
        return WRONG, f'the task ran {runs} times at once, no word of the other driver'
    return refusal(second, 'another driver', 'pid')


def ray_run_folder(name: str):
    """The run started in a folder named ``name``: the task must get its config path as one
    word, and nothing in the name may run."""

    def case(p: Probe):
        folder = p.path(f'{name}/x').parent
        folder.mkdir(parents=True, exist_ok=True)
        check = 'python3 -c "import sys; assert len(sys.argv) == 2, sys.argv[1:]" CFG'
        ran = ray_run(p, f"os.chdir({str(folder)!r})\nlaunch([task('a', {check!r})])")
        if list(p.tmp.rglob('INJECTED')):
            return UNSAFE, 'the folder name ran: INJECTED was created'
        if statuses(ran) != [['Probe[a/d]', 0]]:
            log = folder / 'run' / 'logs' / 'probe' / 'a' / 'd.out'
            said = log.read_text().strip().splitlines()[-1:] if log.is_file() else ran.last_line()
            return CRASH, f'the task failed: {said}'
        return GOOD, 'the task got its config path, nothing injected'

    return case


def local_run_folder_injection(p: Probe):
    """The same folder name under the package's LocalRunner, whose task command holds it."""
    folder = p.path('r$(touch INJECTED)x/x').parent
    folder.mkdir(parents=True, exist_ok=True)
    body = RAY_PRELUDE.replace('from opencompass_lveval.runner.ray_runner import RayRunner', '')
    body += (
        'from opencompass_lveval.runner.local import CheckedLocalRunner\n'
        f'os.chdir({str(folder)!r})\n'
        "runner = CheckedLocalRunner(task=dict(type='ProbeTask'), max_num_workers=1)\n"
        "print('status', json.dumps(runner.launch([task('a', 'test -f CFG')])))\n"
    )
    ran = p.python(body, env={'PYTHONPATH': str(p.tree), 'CUDA_VISIBLE_DEVICES': ''})
    if list(p.tmp.rglob('INJECTED')):
        return UNSAFE, 'the folder name ran: INJECTED was created'
    if statuses(ran) != [['Probe[a/d]', 0]]:
        return CRASH, ran.last_line()
    return GOOD, 'the task got its config path, nothing injected'


def ray_secret_by_name(p: Probe):
    """A variable the node lacks, passed by name: the task sees it, no file holds it."""
    secret = 'sk-probe-' + os.urandom(8).hex()
    body = "launch([task('a', 'test -n \"$PROBE_SECRET\"')], task_env_from=['PROBE_SECRET'])"
    ran = ray_run(p, body, env={'PROBE_SECRET': secret})
    holding = [f for f in p.tmp.rglob('*') if f.is_file() and secret.encode() in f.read_bytes()]
    if holding:
        return UNSAFE, f'its value is in {holding[0].relative_to(p.tmp)}'
    if statuses(ran) != [['Probe[a/d]', 0]]:
        return CRASH, f'no way to pass it: {ran.last_line()}'
    return GOOD, 'the task saw it, no file holds it'


LOAD_LVEVAL = (
    'from opencompass_lveval.lveval import data\n'
    "source = data.locate(data.default_data_dir(), 'cmrc_mixup_16k')\n"
    "print('read stray file', source)"
)
LOAD_ADALEVAL = (
    'from opencompass_lveval.adaleval.data import load_task\n'
    "load_task('tsort', '2k', None, limit=1)\n"
    "print('read stray file')"
)
LVEVAL_RECORD = {'input': 'q', 'context': 'c', 'answers': ['a'], 'answer_keywords': ''}
IMG = '<img src=x onerror=alert(1)>'
FORGED_ROW = 'ok\n| FAKE | 99.00 | 99.00 |'
BUILD_TSORT = ['build', 'tsort', '--books', 'BOOK', '--setting', '2k', '--out', 'T:out']
TSORT_RECORD = {'book_id': 1, 'para_offset': [0, 1, 2, 3], 'answer': [2, 1, 4, 3],
                'prompt': 'Put the four parts in order.'}  # fmt: skip
FACTRECALL = ['build', 'factrecall', '--language', 'en', '--corpora', 'CORPORA', '--out', 'T:out']
SYNTH = ['data', 'synth', 'T:synth']

CASES = {
    # code from run folders
    'config-import-touch': config_code_runs(
        "import pathlib\nmodels = [dict(abbr=pathlib.Path({marker}).touch() or 'm')]\n"
    ),
    'config-open-write': config_code_runs(
        "open({marker}, 'w').write('x')\nmodels = [dict(abbr='m')]\n"
    ),
    'config-dunder-import': config_code_runs(
        "models = [dict(abbr=__import__('os').system('touch ' + {marker}) and 'm')]\n"
    ),
    'config-exec': config_code_runs("exec('open(' + repr({marker}) + ', \"w\")')\nmodels = []\n"),
    'config-lambda': config_code_runs("models = [dict(abbr=(lambda: open({marker}, 'w'))())]\n"),
    # forged tables
    'report-md-row': forged_markdown('report', FORGED_ROW),
    'report-md-img': forged_markdown('report', IMG),
    'board-md-row': forged_markdown('leaderboard', FORGED_ROW),
    'board-md-img': forged_markdown('leaderboard', IMG),
    'board-csv-equals': formula_cell('leaderboard', '=HYPERLINK("x";"y")'),
    'board-csv-plus': formula_cell('leaderboard', '+1+1'),
    'board-csv-at': formula_cell('leaderboard', '@SUM(1)'),
    'report-csv-equals': formula_cell('report', '=1+1'),
    'report-model-named-levels': model_named_levels,
    # results that are not numbers, and files of the wrong shape
    **{
        f'{command}-score-{label}': result_value(command, content)
        for command in ('board', 'report')
        for label, content in {
            'true': '{"score": true}',
            'string': '{"score": "99.5"}',
            'nan': '{"score": NaN}',
            'infinity': '{"score": Infinity}',
            'above-100': '{"score": 12345}',
            'negative': '{"score": -3}',
            'list-file': '[1, 2]',
            'provenance-list': '{"score": 10.0, "provenance": [1, 2]}',
        }.items()
    },
    'board-config-model-without-abbr': config_model_without_abbr,
    # --strict and which run is newest
    'strict-refused-run': refused_run_strict,
    'strict-empty-run-folder': empty_run_folder,
    'strict-synthetic-only': synthetic_only_strict,
    'newest-run-by-name': newest_by_name,
    # outputs written in place
    'failed-rebuild': failed_rebuild,
    'killed-build': killed_build,
    'failed-inputs-keeps-previous': inputs_failure_keeps_previous,
    # arguments taken on trust
    'inputs-limit-0': inputs_limit('0'),
    'inputs-limit-negative': inputs_limit('-1'),
    'tsort-count-0': argument(*BUILD_TSORT, '--count', '0', names=['--count']),
    'tsort-count-negative': argument(*BUILD_TSORT, '--count', '-3', names=['--count']),
    'factrecall-count-0': argument(
        *FACTRECALL, '--levels', '1k', '--count', '0', names=['--count']
    ),  # fmt: skip
    'synth-count-0': argument(*SYNTH, '--count', '0', names=['--count']),
    'synth-scale-0': argument(*SYNTH, '--scale', '0', names=['--scale']),
    'synth-scale-negative': argument(*SYNTH, '--scale', '-1', names=['--scale']),
    'factrecall-scale-0': argument(
        *FACTRECALL, '--levels', '1k', '--count', '1', '--scale', '0', names=['--scale']
    ),  # fmt: skip
    'factrecall-level-full-width': argument(
        *FACTRECALL, '--levels', '1６k', '--count', '1', names=['1６k']
    ),  # fmt: skip
    'factrecall-level-0k': argument(*FACTRECALL, '--levels', '0k', '--count', '1', names=['0k']),
    'factrecall-level-huge': argument(
        *FACTRECALL,
        '--levels',
        '16k,100000k',
        '--count',
        '1',
        names=['100000k'],
        memory_gb=6,
        within=5,
    ),  # fmt: skip
    'tsort-setting-huge': argument(
        *BUILD_TSORT,
        '--setting',
        '100000000k',
        '--count',
        '1',
        names=['100000000k'],
        memory_gb=6,
        within=5,
    ),  # fmt: skip
    'data-check-full-width-level': full_width_level_in_data_check,
    'inputs-misspelled-input': inputs_misspelled('input', 'official'),
    'inputs-misspelled-conversation': inputs_misspelled('conversaton', 'llama2'),
    'inputs-misspelled-max-seq-len': inputs_misspelled('max_seq_lne', 400),
    # model settings against the model's own config.json
    'pre-run-window-past-positions': pre_run(window=4096, names=['max_seq_len', '512']),
    'pre-run-tokenizer-past-embedding': pre_run(
        embedding_texts=['a small vocabulary'], names=['tokenizer', 'vocab_size']
    ),
    'pre-run-max-out-len-0': pre_run(answer=0, names=['max_out_len']),
    'pre-run-max-out-len-negative': pre_run(answer=-5, names=['max_out_len']),
    'inputs-window-past-positions': inputs_past_the_model(
        window=4096, names=['max_seq_len', '512']
    ),
    'inputs-max-out-len-negative': inputs_past_the_model(-5, names=['max_out_len']),
    'inputs-hub-id-offline': inputs_hub_id_offline,
    # benchmark plugins
    'plugin-exits-at-import': broken_plugin('import sys\n\nsys.exit(0)\n'),
    'plugin-argparse-at-import': broken_plugin(
        'import argparse\n\nparser = argparse.ArgumentParser()\n'
        'parser.add_argument("--size", required=True)\nparser.parse_args()\n'
    ),
    'plugin-abstract': broken_plugin(
        'from opencompass_lveval.framework.benchmarks import Benchmark\n\n\n'
        'class Bench(Benchmark):\n    name, title = "odd", "Odd"\n'
    ),
    'plugin-init-raises': broken_plugin(
        LVEVAL_CLASS + 'class Bench(LVEval):\n    name = "odd"\n\n'
        '    def __init__(self):\n        raise RuntimeError("no licence key")\n'
    ),
    'plugin-name-of-a-builtin': broken_plugin(LVEVAL_CLASS + 'Bench = LVEval\n'),
    'plugin-import-error': broken_plugin('import no_such_module_here\n'),
    'mixup-dataset-outside-out': argument(
        'build',
        'mixup',
        '--items',
        'T:items.jsonl',
        '--dataset',
        '../../probe_outside',
        '--language',
        'en',
        '--levels',
        '1k',
        '--out',
        'T:out',
        names=['--dataset'],
        outside='**/probe_outside_*.jsonl',
    ),  # fmt: skip
    'empty-lveval-data-dir': empty_data_dir_variable(
        'LVEVAL_DATA_DIR', LOAD_LVEVAL, 'cmrc_mixup_16k.jsonl', json.dumps(LVEVAL_RECORD) + '\n'
    ),
    'empty-adaleval-data-dir': empty_data_dir_variable(
        'ADALEVAL_DATA_DIR', LOAD_ADALEVAL, 'textsort_2k.json', json.dumps([TSORT_RECORD])
    ),
    'fifo-in-data-folder': fifo_in_data_folder,
    'leaderboard-out-is-a-file': leaderboard_out_is_a_file,
    # builder inputs
    'bestanswer-gold-a0': bestanswer_source({'answer': 'A0'}, 'answer'),
    'bestanswer-gold-a99': bestanswer_source({'answer': 'A99'}, 'answer'),
    'bestanswer-no-tags': bestanswer_source({'tags': None}, 'tags'),
    'bestanswer-tags-string': bestanswer_source({'tags': 'python'}, 'tags'),
    'bestanswer-no-answers': bestanswer_source({'all_answers': None}, 'all_answers'),
    'bestanswer-answers-string': bestanswer_source(
        {'all_answers': 'Use sorted().'}, 'all_answers'
    ),  # fmt: skip
    'bestanswer-question-nan': bestanswer_source({'question': '__NaN__'}, 'question'),
    'mixup-documents-string': mixup_item({'documents': 'd e f'}, 'documents'),
    'mixup-answers-string': mixup_item({'answers': 'Mary'}, 'answers'),
    'mixup-keywords-list': mixup_item({'answer_keywords': ['Mary']}, 'answer_keywords'),
    'mixup-no-input': mixup_item({'input': None}, 'input'),
    'mixup-input-nan': mixup_item({'input': '__NaN__'}, 'input'),
    'mixup-good-items-build': mixup_builds,
    'rules-empty-original': mixup_rules('{"": "X"}', "''"),
    'rules-number-substitute': mixup_rules('{"the": 1}', 'the'),
    'rules-nan-substitute': mixup_rules('{"the": NaN}', 'NaN'),
    'rules-pair-of-one': mixup_rules('[["the"]]', 'the'),
    # unbounded reads
    'board-100-missing-datasets': leaderboard_with_many_missing,
    'bestanswer-source-x4': bestanswer_growth,
    # the API client against hostile servers, careless settings (issue 37)
    **{
        f'api-key-echoed-{name}': echoed_key([form])
        for name, form in {
            'url-encoded': 'url-encoded',
            'url-encoded-slash-kept': 'url-encoded, / kept',
            'url-encoded-lower-hex': 'url-encoded, lower-case hex',
            'form-encoded': 'form-encoded',
            'json-escaped': 'json-escaped',
            'json-escaped-slash': 'json-escaped, / escaped',
            'repr': 'repr',
        }.items()
    },
    'api-key-newline': unsendable_key(PROBE_KEY + '\n'),
    'api-key-curly-quotes': unsendable_key('\u201c' + PROBE_KEY + '\u201d'),
    'api-drip-headers': dripping(headers_at_once=False),
    'api-drip-body': dripping(headers_at_once=True),
    'api-timeout-none-drip': dripping(headers_at_once=False, settings='timeout=None, retry=0'),
    'api-timeout-0': timeout_value('0'),
    'api-timeout-negative': timeout_value('-5'),
    'api-huge-reply': huge_reply(declared=False),
    'api-huge-reply-declared': huge_reply(declared=True),
    'api-retry-after-3600': retry_after_cap,
    'api-content-null': answer_content(None),
    'api-content-number': answer_content(42),
    'api-content-parts': answer_content(
        [{'type': 'text', 'text': 'Par'}, {'type': 'text', 'text': 'is'}], expected='Paris'
    ),
    'api-redirect-301': redirected(301),
    'api-redirect-302': redirected(302),
    'api-redirect-307': redirected(307),
    'api-url-no-host': impossible_url('http:///v1'),
    'api-url-port-99999': impossible_url('http://127.0.0.1:99999/v1'),
    'api-url-port-letters': impossible_url('http://127.0.0.1:80a/v1'),
    'api-cache-prompt-tokens-string': cache_entry({'prompt_tokens': 'abc'}),
    'api-cache-text-number': cache_entry({'text': 42}),
    # Slurm
    'slurm-two-gpu-kinds': slurm_gpu_kinds,
    # the LLM judge against chat servers on 127.0.0.1
    'judge-same-name-other-model': judge_same_name,
    'judge-echoes-the-prompt': judge_echo,
    'judge-cache-count-string': judge_cache_count_string,
    'result-judge-count-string': result_judge_count_string,
    # lveval compare
    'compare-other-test-range': compare_cell(later_records),
    'compare-repeated-record': compare_cell(repeated_record),
    'compare-negative-record-scores': compare_cell(
        lambda r: [d.update(score=[-3.0]) for d in r['details']]
    ),
    'compare-record-score-1e400': compare_cell(
        lambda r: r['details'][0].update(score=['TEXT']), text='1e400'
    ),
    'compare-score-not-its-mean': compare_score_not_mean,
    'compare-run-without-results': compare_without_results,
    'compare-synthetic-data': compare_synthetic,
    # whole runs
    'run-missing-model-folder': run_with_missing_model,
    'run-missing-data-folder': run_with_missing_data,
    'run-gpus-not-here': run_with_gpus_not_here,
    'run-failed-inference': run_with_failed_inference,
    # serving (issue 43): replies bound to their requests, the reply store, settings
    **SERVING_CASES,
    # runners under faults (issue 43): RayRunner on a one-machine Ray cluster, run folders
    'ray-address-closed-port': ray_address('closed'),
    'ray-address-silent-port': ray_address('silent'),
    'ray-address-http-server': ray_address('http'),
    'ray-num-cpus-64': ray_num_cpus('64', judge_at_build=False),
    'ray-num-cpus-inf': ray_num_cpus("float('inf')", judge_at_build=True),
    'ray-rerun-only-node-lost': ray_rerun_only_node_lost,
    'ray-task-leaves-processes': ray_task_leaves_processes,
    'ray-node-without-package-code': ray_node_without_package_code,
    'ray-journal-not-an-object': ray_journal_line('[1, 2]\n'),
    'ray-journal-cut-line': ray_journal_line('{"task": "Probe[x/d]", "attem'),
    'ray-two-drivers': ray_two_drivers,
    'ray-run-folder-space': ray_run_folder('run folder'),
    'ray-run-folder-injection': ray_run_folder('r$(touch INJECTED)x'),
    'local-run-folder-injection': local_run_folder_injection,
    'ray-secret-by-name': ray_secret_by_name,
}


def setup_items(tmp: Path) -> None:
    (tmp / 'items.jsonl').write_text(''.join(json.dumps(i) + '\n' for i in ITEMS), 'utf-8')


def probe(tree: Path, names: list[str]) -> dict[str, tuple[str, str]]:
    outcomes = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix='probe-') as folder:
            tmp = Path(folder) / 'a' / 'b'
            tmp.mkdir(parents=True)
            setup_items(tmp)
            start = time.perf_counter()
            try:
                outcomes[name] = CASES[name](Probe(tree, tmp))
            except Exception as exc:  # the probe's own failure, shown, never counted as good
                outcomes[name] = ('probe failed', f'{type(exc).__name__}: {exc}'[:110])
            print(f'  {name}: {outcomes[name][0]} ({time.perf_counter() - start:.1f} s)',
                  file=sys.stderr, flush=True)  # fmt: skip
    return outcomes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('trees', nargs='+', help='source trees (checkouts) to probe, in order')
    parser.add_argument('--cases', help='comma-separated case names (default: all)')
    parser.add_argument('--json', help='also write the outcomes here')
    args = parser.parse_args(argv)
    names = args.cases.split(',') if args.cases else list(CASES)
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        parser.error(f'unknown cases: {", ".join(unknown)}')
    trees = [Path(t).resolve() for t in args.trees]
    results = {}
    for tree in trees:
        print(f'probing {tree}', file=sys.stderr)
        results[str(tree)] = probe(tree, names)
    header = '| case | ' + ' | '.join(t.name for t in trees) + ' |'
    print(header + '\n|' + '---|' * (len(trees) + 1))
    for name in names:
        cells = [f'{results[str(t)][name][0]}: {results[str(t)][name][1]}' for t in trees]
        print(f'| `{name}` | ' + ' | '.join(c.replace('|', '\\|') for c in cells) + ' |')
    print(f'\n{len(names)} cases\n\n| outcome | ' + ' | '.join(t.name for t in trees) + ' |')
    print('|' + '---|' * (len(trees) + 1))
    counts = {str(t): Counter(o for o, _ in results[str(t)].values()) for t in trees}
    for outcome in OUTCOMES + ['probe failed']:
        if any(counts[str(t)][outcome] for t in trees) or outcome in OUTCOMES:
            print(
                f'| {outcome} | ' + ' | '.join(str(counts[str(t)][outcome]) for t in trees) + ' |'
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False), 'utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
