"""Build RULER data: ``<out>/<length>/<task>/validation.jsonl`` exactly as the official
``prepare.py`` writes it, one file per (task, length), files built in parallel processes (each
file's random stream is sequential, so a file is one process's work).

``model_data`` is the per-model cache a run uses: one folder per tokenizer (its files' sha256),
seed, count and template, each file kept with a key of what made it (task, length, the inputs'
digests, the word lists' version) and built again only when that key changes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.atomic import atomic_open, write_text
from . import inputs as files
from .generators import GENERATORS, Job, RulerBuildError
from .tasks import DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_TEMPLATE, TASKS, RulerTask, task_named
from .tokens import (
    TokenCounter,
    rebuilt,
    token_counter,
    tokenizer_fingerprint,
    tokenizer_folder,
)

FILE_NAME = 'validation.jsonl'
KEY_SUFFIX = '.key.json'
# Bumped when a change here changes the bytes generated: cached files are then built again.
GENERATOR_VERSION = 1
TASK_ORDER = {task.name: number for number, task in enumerate(TASKS)}


def data_path(out: Path, task: str, length: int) -> Path:
    """Where a file goes: the official layout."""
    return Path(out) / str(length) / task / FILE_NAME


def manifest_text(records: Iterable[dict]) -> str:
    """JSON lines as RULER's ``write_manifest`` writes them (``json.dump``, ASCII escapes)."""
    return ''.join(json.dumps(record, ensure_ascii=True) + '\n' for record in records)


def task_inputs(task: RulerTask, inputs: Optional[Path], punkt: Optional[Path]) -> list[Path]:
    """The input files a task reads (none for the tasks drawn from word lists alone)."""
    if task.kind == 'qa':
        return [Path(inputs) / files.QA_READERS[task.args['dataset']][0]]
    if task.kind == 'common_words_extraction':
        return [Path(inputs) / files.ENGLISH_WORDS]
    if task.args.get('type_haystack') == 'essay':
        return [Path(inputs) / files.ESSAYS, *files.punkt_files(punkt)]
    return []


def generate(
    task: RulerTask | str,
    length: int,
    counter: TokenCounter,
    inputs: Optional[Path] = None,
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    template: str = DEFAULT_TEMPLATE,
    punkt: Optional[Path] = None,
    progress=None,
    ahead: Optional[int] = None,
) -> Job:
    """One task at one length: the job, its ``records`` set, its binary-search ``probes``
    kept; ``progress(n)`` is told as samples are done, ``ahead`` samples are counted together
    (default ``counted_ahead``; the bytes are the same whatever it is)."""
    task = task_named(task) if isinstance(task, str) else task
    if length < 1 or count < 1:
        raise RulerBuildError(
            f'length and count must be whole numbers from 1, not {length}, {count}'
        )
    job = Job(
        task,
        length,
        count,
        seed,
        task.prompt_template(template),
        counter.count,
        inputs,
        punkt,
        counter.count_many,
        ahead or counted_ahead(length),
        progress,
    )
    job.records = GENERATORS[task.kind](job)
    return job


def counted_ahead(length: int) -> int:
    """Samples drawn ahead and counted together: two per core, fewer for long prompts (the
    batch's token lists are held at once: 16 at 128k, 2 at 1m)."""
    return max(1, min(2 * (os.cpu_count() or 1), (1 << 21) // length))


@dataclass(frozen=True)
class Settings:
    """What every file of one build shares."""

    inputs: Optional[Path]
    seed: int
    count: int
    template: str
    punkt: Optional[Path]


def _needs_punkt(tasks: Sequence[RulerTask]) -> bool:
    return any(task.args.get('type_haystack') == 'essay' for task in tasks)


def _key(task: RulerTask, length: int, settings: Settings, fingerprint: str) -> dict:
    from importlib.metadata import version

    used = task_inputs(task, settings.inputs, settings.punkt)
    return {
        'task': task.name,
        'length': length,
        'seed': settings.seed,
        'count': settings.count,
        'template': settings.template,
        'tokenizer': fingerprint,
        'inputs': files.file_digest(*used) if used else None,
        'wonderwords': version('wonderwords')
        if task.kind in ('niah', 'common_words_extraction')
        else None,
        'generator': GENERATOR_VERSION,
    }


def _build_one(
    task_name: str,
    length: int,
    settings: Settings,
    counter,
    out: Path,
    key: Optional[dict],
    progress=None,
) -> tuple[Path, float]:
    """One file: generated, written atomically, its key beside it where the build is a cache.
    In a worker process ``counter`` is ``TokenCounter.portable()``, rebuilt there, and
    ``progress`` a queue that hears of the samples done."""
    start = time.perf_counter()
    counter = counter if isinstance(counter, TokenCounter) else rebuilt(*counter)
    tell = getattr(progress, 'put', progress)
    job = generate(
        task_name,
        length,
        counter,
        settings.inputs,
        seed=settings.seed,
        count=settings.count,
        template=settings.template,
        punkt=settings.punkt,
        progress=tell,
    )
    path = data_path(out, task_name, length)
    with atomic_open(path) as stream:
        stream.write(manifest_text(job.records))
    if key is not None:
        write_text(path.with_name(path.name + KEY_SUFFIX), json.dumps(key, indent=1) + '\n')
    return path, time.perf_counter() - start


def _is_current(path: Path, key: dict) -> bool:
    saved = path.with_name(path.name + KEY_SUFFIX)
    try:
        return path.is_file() and json.loads(saved.read_text(encoding='utf-8')) == key
    except (OSError, ValueError):
        return False


def build(
    tokenizer: Path,
    tasks: Sequence[str],
    lengths: Sequence[int],
    out: Path,
    inputs: Optional[Path] = None,
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    template: str = DEFAULT_TEMPLATE,
    workers: Optional[int] = None,
    reuse: bool = False,
    counter: Optional[TokenCounter] = None,
    log=None,
    cells: Optional[Sequence[tuple[str, int]]] = None,
) -> list[Path]:
    """Every (task, length) file under ``out`` (or those of ``cells``, (task, length) pairs),
    ``workers`` processes at a time (default: one per core, at most one per file); with
    ``reuse``, files whose key is unchanged are kept."""
    cells = sorted(
        set(cells if cells is not None else [(t, n) for t in tasks for n in lengths]),
        key=lambda cell: (-cell[1], TASK_ORDER[cell[0]]),  # the longest first: they take longest
    )
    rows = [task_named(task) for task in dict.fromkeys(task for task, _ in cells)]
    punkt = files.punkt_folder(inputs) if _needs_punkt(rows) else None
    settings = Settings(Path(inputs) if inputs else None, seed, count, template, punkt)
    for row in rows:  # every input there before any work starts
        for path in task_inputs(row, settings.inputs, punkt):
            if not path.is_file():
                raise files.RulerInputError(
                    f'{path}: not found; RULER {row.name} reads it, {files.GET_INPUTS}'
                )
        row.prompt_template(template)
    counter = counter or token_counter(tokenizer)
    plan, kept = [], []
    for task, length in cells:
        key = _key(task_named(task), length, settings, counter.fingerprint) if reuse else None
        path = data_path(out, task, length)
        if key is not None and _is_current(path, key):
            kept.append(path)
        else:
            plan.append((task, length, settings, counter, Path(out), key))
    built = _run(plan, workers, log)
    return sorted(kept + built)


def _run(plan: list[tuple], workers: Optional[int], log) -> list[Path]:
    """Each planned file, in this process or ``workers`` spawned ones (a counter that cannot
    travel, ``portable()`` None, keeps it here), with a progress bar of samples on a terminal."""
    from tqdm import tqdm

    workers = max(1, min(workers or os.cpu_count() or 1, len(plan)))
    if plan and plan[0][3].portable() is None:
        workers = 1
    say = log or (lambda line: None)
    total = sum(item[2].count for item in plan)
    with tqdm(total=total, unit='sample', desc='RULER data', disable=None, leave=False) as bar:
        if workers == 1:
            done = []
            for item in plan:
                done.append(_build_one(*item, bar.update))
                say(f'built {done[-1][0]} in {done[-1][1]:.1f} s')
        else:
            done = _in_processes(plan, workers, bar, say)
    return [path for path, _ in done]


def _in_processes(plan: list[tuple], workers: int, bar, say) -> list[tuple[Path, float]]:
    """The files built by ``workers`` spawned processes (tokenizers' threads and fork do not
    mix), longest first as planned; each file's samples move the bar as they are done."""
    import multiprocessing
    import queue
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    context = multiprocessing.get_context('spawn')
    with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context) as pool:
        heard = manager.Queue()
        futures = [
            pool.submit(_build_one, *item[:3], item[3].portable(), *item[4:], heard)
            for item in plan
        ]
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            try:
                while True:
                    bar.update(heard.get_nowait())
            except queue.Empty:
                pass
            for future in finished:
                path, seconds = future.result()
                say(f'built {path} in {seconds:.1f} s')
        return [future.result() for future in futures]


def folder_name(fingerprint: str, template: str, seed: int, count: int) -> str:
    """A model's folder in the cache: ``<tokenizer sha256, 16 digits>-<template>-seed<seed>-n<count>``."""
    return f'{fingerprint[:16]}-{template}-seed{seed}-n{count}'


# What a dataset config's ``data`` holds: the settings of a model's build.
DATA_SETTINGS = ('tokenizer', 'seed', 'count', 'template', 'inputs')


def data_settings(data: dict) -> dict:
    """A dataset config's ``data`` with the official defaults filled in; an unknown key or a
    missing tokenizer is an error naming it."""
    from ..files.errors import DataError

    unknown = sorted(set(data) - set(DATA_SETTINGS))
    if unknown or not data.get('tokenizer'):
        raise DataError(
            f'RULER dataset config data={data!r}: give its tokenizer (the model folder) and '
            f'any of {", ".join(DATA_SETTINGS[1:])}'
            + (f'; {", ".join(unknown)} unknown' if unknown else '')
        )
    return dict(
        tokenizer=str(data['tokenizer']),
        seed=data.get('seed', DEFAULT_SEED),
        count=data.get('count', DEFAULT_COUNT),
        template=data.get('template', DEFAULT_TEMPLATE),
        inputs=data.get('inputs'),
    )


def model_folder(cache: Path, data: dict) -> Path:
    """Where ``model_data`` puts the files of a dataset config's ``data`` under ``cache``: by
    the fingerprint of the model's tokenizer files (they are hashed, not loaded)."""
    found = data_settings(data)
    fingerprint = tokenizer_fingerprint(tokenizer_folder(found['tokenizer']))
    name = folder_name(fingerprint, found['template'], found['seed'], found['count'])
    return Path(cache) / name


def model_data(
    tokenizer: Path,
    cache: Path,
    cells: Sequence[tuple[str, int]],
    inputs: Optional[Path] = None,
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    template: str = DEFAULT_TEMPLATE,
    workers: Optional[int] = None,
    log=None,
) -> Path:
    """The folder of a model's RULER data under ``cache`` (``folder_name``), its ``cells``
    ((task, length) pairs) built where missing or out of date; the official layout inside.
    The tokenizer's pipeline is kept in ``cache/tokenizers`` (no transformers load next time)."""
    counter = token_counter(tokenizer, cache=Path(cache) / 'tokenizers')
    folder = Path(cache) / folder_name(counter.fingerprint, template, seed, count)
    build(
        tokenizer,
        (),
        (),
        folder,
        inputs,
        seed=seed,
        count=count,
        template=template,
        workers=workers,
        reuse=True,
        counter=counter,
        log=log,
        cells=cells,
    )
    return folder
