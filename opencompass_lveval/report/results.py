"""Reading finished OpenCompass runs: which run folder, and its per-dataset result files.

A work folder (``-w``) holds one folder per run (``20260101_120000/``), each with
``results/{model}/{dataset abbr}.json`` as OpenCompass's evaluation tasks wrote them.
"""

from __future__ import annotations

import glob
import json
import math
import re
import sys
from pathlib import Path
from typing import Optional

from ..files.errors import ReportError
from .tables import number


def run_folders(work_dir: str | Path) -> list[Path]:
    """The run folders of a work folder, oldest first; ``work_dir`` itself if it is a run."""
    work_dir = Path(work_dir)
    if (work_dir / 'results').is_dir():
        return [work_dir]
    runs = (
        sorted(p for p in work_dir.glob('*') if (p / 'results').is_dir())
        if work_dir.is_dir()
        else []
    )
    if not runs:
        raise ReportError(
            f'{work_dir} holds no OpenCompass results (no results/ folder in it or '
            'in a run folder below it); run `opencompass CONFIG -w WORK_DIR` first '
            'and point at WORK_DIR or one of its run folders.'
        )
    return runs


def find_run(work_dir: str | Path) -> Path:
    """The run folder: ``work_dir`` itself if it holds ``results/``, else its newest run."""
    return run_folders(work_dir)[-1]


def _refuse_constant(name: str):
    raise ValueError(f'{name} is not a number JSON allows')


def _too_large(literal: str) -> ValueError:
    shown = literal if len(literal) <= 40 else f'{literal[:40]}...'
    return ValueError(f'the number {shown} is too large for a float')


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _too_large(literal)
    return value


def _float_sized_int(literal: str) -> int:
    value = int(literal)
    if abs(value) > sys.float_info.max:
        raise _too_large(literal)
    return value


def load_json(text: str):
    """JSON as results hold it: NaN, Infinity and numbers too large for a float (``1e400``,
    which Python reads as infinity) are refused, so every number read is a finite float."""
    return json.loads(
        text,
        parse_constant=_refuse_constant,
        parse_float=_finite_float,
        parse_int=_float_sized_int,
    )


def check_result(path: Path, result) -> dict:
    """A result file's content, checked: a JSON object whose metrics (those the benchmark of its
    dataset reports) and per-record scores are numbers from 0 to 100, whose judge record (where
    an LLM judge rated it) holds counts that are whole numbers, and whose provenance is an object
    (or one per replica); anything else is an error naming the file, so a broken or forged file
    never becomes a silent wrong score or a row without its data fingerprint."""
    from ..framework import benchmarks
    from .judging import check_judge_record

    if not isinstance(result, dict):
        raise ReportError(
            f'{path} holds {type(result).__name__}, not a result object; re-run its evaluation'
        )
    for benchmark in benchmarks.BENCHMARKS:
        plain = benchmark.split_abbr(path.stem) is not None
        if plain:
            _check_metrics(path, result, benchmark.result_metrics)
        if plain or benchmark.keeps_variant(path.stem):
            _check_record_scores(path, benchmark.record_scores(result) or [])
        for metric in benchmark.metrics if plain else ():
            if metric != benchmark.interval_metric:
                _check_record_scores(path, benchmark.record_scores(result, metric) or [], metric)
    check_judge_record(path, result)
    provenance = result.get('provenance', {})
    replicas = provenance if isinstance(provenance, list) else [provenance]
    if not all(isinstance(replica, dict) for replica in replicas):
        raise ReportError(
            f'{path}: provenance is {provenance!r}, not an object (or a list of objects, one per '
            'replica); re-run its evaluation or remove the file'
        )
    return result


def _check_metrics(path: Path, result: dict, metrics) -> None:
    for metric in metrics:
        value = result.get(metric)
        if value is None:
            continue
        if number(value) is None or not 0 <= value <= 100:
            raise ReportError(
                f'{path}: {metric} is {value!r}, not a number from 0 to 100; re-run its '
                'evaluation or remove the file'
            )


def _check_record_scores(path: Path, scores: list[float], metric: str = 'score') -> None:
    """Per-record scores (in percent, as ``record_scores`` gives them) from 0 to 100."""
    for index, score in enumerate(scores):
        if not 0 <= score <= 100:
            raise ReportError(
                f'{path}: the {metric} of record {index} in its details is {score:g}% (in percent), '
                'not from 0 to 100; re-run its evaluation or remove the file'
            )


def read_results(run: Path) -> dict[str, dict[str, dict]]:
    """model -> dataset abbr -> the result JSON OpenCompass wrote, checked (``check_result``)."""
    results: dict[str, dict[str, dict]] = {}
    for path in sorted((run / 'results').glob('*/*.json')):
        try:
            found = load_json(path.read_text(encoding='utf-8'))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ReportError(f'{path} is not valid JSON ({exc}); re-run its evaluation') from exc
        results.setdefault(path.parent.name, {})[path.stem] = check_result(path, found)
    if not results:
        raise ReportError(f'{run}/results holds no result files; the evaluation did not finish')
    return results


def prediction_parts(folder: Path, abbr: str) -> list[Path]:
    """A dataset's predictions files in record order: OpenCompass writes ``{abbr}.json``, or
    ``{abbr}_0.json``, ``{abbr}_1.json``... when it splits a dataset (never a file beside them,
    such as ``{abbr}.inference.json``)."""
    whole = folder / f'{abbr}.json'
    if whole.is_file():
        return [whole]
    part = re.compile(re.escape(abbr) + r'_(\d+)\.json')
    numbered = [
        (int(match[1]), path)
        for path in folder.glob(f'{glob.escape(abbr)}_*.json')
        if (match := part.fullmatch(path.name))
    ]
    return [path for _, path in sorted(numbered)]


def origin_prompts(run: Path, model: str, abbr: str) -> Optional[list]:
    """The origin prompts of a dataset's predictions in a run, in record order (OpenCompass
    writes ``{abbr}.json``, or ``{abbr}_0.json``, ``{abbr}_1.json``... when it splits one); None
    where there are none or a file cannot be read."""
    prompts = []
    for part in prediction_parts(run / 'predictions' / model, abbr):
        try:
            found = json.loads(part.read_text(encoding='utf-8'))
        except (OSError, ValueError):
            return None
        prompts += [found[key].get('origin_prompt') for key in sorted(found, key=int)]
    return prompts or None


def prompt_text(prompt) -> str:
    """The text of an OpenCompass ``origin_prompt``: a string, or the last HUMAN round's."""
    if isinstance(prompt, str):
        return prompt
    rounds = [p.get('prompt', '') for p in prompt or [] if isinstance(p, dict)]
    return rounds[-1] if rounds else ''


def dataset_of(stem: str) -> str:
    """The dataset abbreviation of a predictions file's stem (``{abbr}`` or ``{abbr}_N``);
    callers check it against the benchmarks."""
    return re.sub(r'_\d+$', '', stem)


def detail_value(detail: dict, key: str):
    """A per-sample value of OpenCompass's ``details``: it wraps each in a list, one item per
    replica (the first is taken); a bare value is taken as it is."""
    value = detail[key]
    return value[0] if isinstance(value, list) else value


def synthetic_models(results: dict[str, dict[str, dict]]) -> list[str]:
    """The models of ``read_results`` with any result measured on synthetic data (its provenance,
    an object or one per replica, says ``data_origin: synthetic``)."""

    def origins(provenance) -> list:
        found = provenance if isinstance(provenance, list) else [provenance]
        return [p.get('data_origin') for p in found if isinstance(p, dict)]

    return [
        model
        for model, by_dataset in results.items()
        if any('synthetic' in origins(r.get('provenance')) for r in by_dataset.values())
    ]


def synthetic_note(models: list[str]) -> str:
    """The line a report opens with when some of its numbers come from synthetic data."""
    return (
        f'**Synthetic data**: {", ".join(models)} were measured on the data of `lveval data synth`; '
        'these numbers test the pipeline, not the models, and are no result to compare or rank.\n'
    )
