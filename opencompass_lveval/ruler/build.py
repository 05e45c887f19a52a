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
from .tasks import DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_TEMPLATE, RulerTask, task_named
from .tokens import TokenCounter, rebuilt, token_counter

FILE_NAME = 'validation.jsonl'
KEY_SUFFIX = '.key.json'
# Bumped when a change here changes the bytes generated: cached files are then built again.
GENERATOR_VERSION = 1


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
) -> Job:
    """One task at one length: the job, its ``records`` set, its binary-search ``probes``
    kept."""
    task = task_named(task) if isinstance(task, str) else task
    if length < 1 or count < 1:
        raise RulerBuildError(
            f'length and count must be whole numbers from 1, not {length}, {count}'
        )
    job = Job(
        task, length, count, seed, task.prompt_template(template), counter.count, inputs, punkt
    )
    job.records = GENERATORS[task.kind](job)
    return job


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
    task_name: str, length: int, settings: Settings, counter, out: Path, key: Optional[dict]
) -> tuple[Path, float]:
    """One file: generated, written atomically, its key beside it where the build is a cache.
    In a worker process ``counter`` is ``TokenCounter.portable()``, rebuilt there."""
    start = time.perf_counter()
    counter = counter if isinstance(counter, TokenCounter) else rebuilt(*counter)
    job = generate(
        task_name,
        length,
        counter,
        settings.inputs,
        seed=settings.seed,
        count=settings.count,
        template=settings.template,
        punkt=settings.punkt,
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
) -> list[Path]:
    """Every (task, length) file under ``out``, ``workers`` processes at a time (default: one
    per core, at most one per file); with ``reuse``, files whose key is unchanged are kept."""
    rows = [task_named(task) for task in tasks]
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
    for length in sorted(set(lengths), reverse=True):  # the longest first: they take longest
        for row in rows:
            key = _key(row, length, settings, counter.fingerprint) if reuse else None
            path = data_path(out, row.name, length)
            if key is not None and _is_current(path, key):
                kept.append(path)
            else:
                plan.append((row.name, length, settings, counter, Path(out), key))
    built = _run(plan, workers, log)
    return sorted(kept + built)


def _run(plan: list[tuple], workers: Optional[int], log) -> list[Path]:
    """Each planned file, in this process or ``workers`` spawned ones (a counter that cannot
    travel, ``portable()`` None, keeps it here)."""
    workers = max(1, min(workers or os.cpu_count() or 1, len(plan)))
    if plan and plan[0][3].portable() is None:
        workers = 1
    say = log or (lambda line: None)
    if workers == 1:
        done = [_build_one(*item) for item in plan]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context('spawn')  # tokenizers' threads and fork do not mix
        travelling = [(*item[:3], item[3].portable(), *item[4:]) for item in plan]
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            done = list(pool.map(_build_one, *zip(*travelling)))
    for path, seconds in done:
        say(f'built {path} in {seconds:.1f} s')
    return [path for path, _ in done]


def model_data(
    tokenizer: Path,
    cache: Path,
    tasks: Sequence[str],
    lengths: Sequence[int],
    inputs: Optional[Path] = None,
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    template: str = DEFAULT_TEMPLATE,
    workers: Optional[int] = None,
    log=None,
) -> Path:
    """The folder of a model's RULER data under ``cache``, built where missing or out of date:
    ``cache/<tokenizer sha256, 16 digits>-<template>-seed<seed>-n<count>/<length>/<task>/``.
    The tokenizer's pipeline is kept in ``cache/tokenizers`` (no transformers load next time)."""
    counter = token_counter(tokenizer, cache=Path(cache) / 'tokenizers')
    folder = Path(cache) / f'{counter.fingerprint[:16]}-{template}-seed{seed}-n{count}'
    build(
        tokenizer,
        tasks,
        lengths,
        folder,
        inputs,
        seed=seed,
        count=count,
        template=template,
        workers=workers,
        reuse=True,
        counter=counter,
        log=log,
    )
    return folder
