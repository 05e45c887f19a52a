"""What an LLM judge did, per model and dataset: the samples it rated, those whose reply held no
rating (unparseable), the failed requests, its tokens and its cost.

Read from each result's ``judge`` record (``evaluators/judge.py``), so a judge that rated nothing
shows too, with the counts that say why: OpenCompass's summary then has only an empty
``judge_score`` cell per subset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..files.errors import ReportError
from .tables import Table, number

COUNTS = ('samples', 'rated', 'unparseable', 'failed')
TOKENS = ('prompt_tokens', 'completion_tokens')


def check_judge_record(path: Path, result: dict) -> None:
    """A result's judge record (each replica's, where it holds ``samples``): its counts and
    tokens whole numbers >= 0 and its cost a number >= 0, else an error naming the file."""
    kept = result.get('judge')
    for record in kept if isinstance(kept, list) else [kept]:
        if not isinstance(record, dict) or 'samples' not in record:
            continue
        for key in (*COUNTS, *TOKENS, 'cached'):
            value = record.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ReportError(
                    f'{path}: judge.{key} is {value!r}, not a whole number >= 0; judge the run '
                    'again or remove the file'
                )
        cost = record.get('cost_usd')
        if cost is not None and (number(cost) is None or cost < 0):
            raise ReportError(
                f'{path}: judge.cost_usd is {cost!r}, not a number >= 0; judge the run again or '
                'remove the file'
            )


def judge_records(results: dict[str, dict[str, dict]]) -> dict[str, dict[str, dict]]:
    """model -> dataset abbr -> the result's ``judge`` record (its replicas' counts summed, where
    OpenCompass keeps one per replica), for results a judge went over."""
    found: dict[str, dict[str, dict]] = {}
    for model, by_abbr in results.items():
        for abbr, result in by_abbr.items():
            kept = result.get('judge')
            replicas = kept if isinstance(kept, list) else [kept]
            replicas = [r for r in replicas if isinstance(r, dict) and number(r.get('samples'))]
            if replicas:
                found.setdefault(model, {})[abbr] = _summed(replicas)
    return found


def _summed(replicas: list[dict]) -> dict:
    record: dict = {'model': replicas[0].get('model')}
    record['settings_digest'] = replicas[0].get('settings_digest')
    for key in COUNTS + TOKENS:
        record[key] = sum(int(number(r.get(key)) or 0) for r in replicas)
    costs = [number(r.get('cost_usd')) for r in replicas]
    known = [c for c in costs if c is not None]
    record['cost_usd'] = sum(known) if known else None
    return record


def dataset_of(abbr: str) -> str:
    """The dataset a subset belongs to (``LVEval_cmrc_mixup_16k`` -> ``cmrc_mixup``), by the
    benchmark whose subset it is; the abbreviation itself where none claims it."""
    from ..framework import benchmarks

    for benchmark in benchmarks.BENCHMARKS:
        split = benchmark.split_abbr(abbr)
        if split is not None:
            return getattr(split[0], 'name', str(split[0]))
    return abbr


def judge_tables(results: dict[str, dict[str, dict]]) -> list[Table]:
    """One table per judged model: a row per dataset (its levels together) and one for all."""
    tables = []
    for model, records in judge_records(results).items():
        groups: dict[str, list[dict]] = {}
        for abbr, record in records.items():
            groups.setdefault(dataset_of(abbr), []).append(record)
        rows = [_row(name, group) for name, group in groups.items()]
        rows.append(_row('all', list(records.values())))
        tables.append(
            Table(
                f'LLM judge ({", ".join(judge_labels(records.values()))}) of {model}: rated, '
                'unparseable, failed, cost',
                f'judge_counts_{model}',
                ['dataset', *COUNTS, 'prompt tokens', 'completion tokens', 'cost (USD)'],
                rows,
            )
        )
    return tables


def judge_labels(records) -> list[str]:
    """The judges' names; judges of other settings under one name are told apart by their
    settings digests (results from before the digest show none)."""
    by_name: dict[str, set[str]] = {}
    for record in records:
        by_name.setdefault(str(record.get('model')), set()).add(str(record.get('settings_digest')))
    return sorted(
        name if len(digests) == 1 else f'{name} [settings {", ".join(sorted(digests))}]'
        for name, digests in by_name.items()
    )


def _row(label: str, records: list[dict]) -> list:
    summed = _summed(records)
    cost: Optional[float] = summed['cost_usd']
    return [
        label,
        *(summed[key] for key in COUNTS + TOKENS),
        None if cost is None else round(cost, 4),
    ]


def unrated_lines(results: dict[str, dict[str, dict]]) -> list[str]:
    """A line per model whose judge rated nothing in some subsets: which, and what came back."""
    lines = []
    for model, records in judge_records(results).items():
        empty = {abbr: r for abbr, r in records.items() if not r.get('rated') and r['samples']}
        if not empty:
            continue
        unparseable = sum(r['unparseable'] for r in empty.values())
        failed = sum(r['failed'] for r in empty.values())
        lines.append(
            f'LLM judge: nothing rated for {model} in {len(empty)} subsets '
            f'({", ".join(sorted(empty))}): {unparseable} replies held no rating, {failed} '
            "requests failed; their judge_score is empty. The report's judge table counts them; "
            "each result's judge.problems holds the first replies."
        )
    return lines
