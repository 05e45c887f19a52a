"""What a run cost, per model and length level, from the usage record beside each prediction
(``LongContextInferTask`` writes them): prompt and completion tokens (an API model's as its server
counted them, with whether the local count agreed, cache hits and cost; an in-process model's
as it received and generated them), cuts, latency, and each dataset's inference wall time and
GPUs (``{abbr}.inference.json`` beside its predictions), with tokens per second.

Runs without usage records (other wrappers, older runs) give no table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ReportError
from ..sizes import parse_size
from ..tables import Table, number
from .results import dataset_of

HEADER = [
    'benchmark',
    'level',
    'records',
    'requests sent',
    'from cache',
    'cut',
    'prompt tokens',
    'completion tokens',
    'server != local count',
    'latency s',
    'wall s',
    'GPUs',
    'tokens/s',
    'USD',
]


@dataclass
class UsageTotal:
    records: int = 0
    sent: int = 0
    cached: int = 0
    cut: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    mismatched: int = 0
    latency_s: float = 0.0
    wall_s: float = 0.0
    gpus: int = 0
    cost_usd: Optional[float] = None

    def add(self, record: dict) -> None:
        self.records += 1
        self.sent += record.get('sent') is True and record.get('cached') is not True
        self.cached += record.get('cached') is True
        self.cut += record.get('truncated') is True
        self.prompt_tokens += max(int(number(record.get('prompt_tokens')) or 0), 0)
        self.completion_tokens += max(int(number(record.get('completion_tokens')) or 0), 0)
        self.mismatched += record.get('prompt_tokens_match') is False
        self.latency_s += max(number(record.get('latency_s')) or 0.0, 0.0)
        cost = number(record.get('cost_usd'))
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost


def _records(path: Path) -> list[dict]:
    """The usage records of one predictions file (OpenCompass's index -> entry JSON)."""
    try:
        predictions = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as exc:
        raise ReportError(f'{path}: not a readable predictions file ({exc})') from None
    if not isinstance(predictions, dict):
        raise ReportError(f'{path}: a predictions file maps indices to entries; this is not one')
    return [
        entry['usage']
        for entry in predictions.values()
        if isinstance(entry, dict) and isinstance(entry.get('usage'), dict)
    ]


def _inference_record(path: Path) -> dict:
    """The wall time and GPUs of the inference that wrote ``path`` ({} where none was kept)."""
    try:
        record = json.loads(path.with_name(f'{path.stem}.inference.json').read_text('utf-8'))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def read_usage(run: Path) -> dict[str, dict[tuple[str, str], UsageTotal]]:
    """model -> (benchmark title, level) -> totals, for the datasets whose predictions carry
    usage records."""
    from .. import benchmarks

    totals: dict[str, dict[tuple[str, str], UsageTotal]] = {}
    for path in sorted((run / 'predictions').glob('*/*.json')):
        if path.name.startswith('tmp_') or path.name.endswith('.inference.json'):
            continue
        for benchmark in benchmarks.BENCHMARKS:
            cell = benchmark.split_abbr(dataset_of(path))
            if cell is not None:
                break
        else:
            continue
        records = _records(path)
        if not records:
            continue
        total = totals.setdefault(path.parent.name, {}).setdefault(
            (benchmark.title, cell[1]), UsageTotal()
        )
        for record in records:
            total.add(record)
        inference = _inference_record(path)
        total.wall_s += max(number(inference.get('wall_s')) or 0.0, 0.0)
        total.gpus = max(total.gpus, int(number(inference.get('gpus')) or 0))
    return totals


def usage_tables(run: Path) -> list[Table]:
    """One table per model with usage records: a line per benchmark and level, then the sum."""
    tables = []
    for model, cells in sorted(read_usage(run).items()):
        rows, grand = [], UsageTotal()
        for (title, level), total in sorted(
            cells.items(), key=lambda c: (c[0][0], parse_size(c[0][1]))
        ):
            rows.append([title, level, *_values(total)])
            for name, value in vars(total).items():
                if name == 'cost_usd':
                    if value is not None:
                        grand.cost_usd = (grand.cost_usd or 0.0) + value
                elif name == 'gpus':
                    grand.gpus = max(grand.gpus, value)
                else:
                    setattr(grand, name, getattr(grand, name) + value)
        rows.append(['all', '', *_values(grand)])
        tables.append(Table(f'Usage and cost: {model}', f'usage_{model}', HEADER, rows))
    return tables


def _values(total: UsageTotal) -> list:
    tokens = total.prompt_tokens + total.completion_tokens
    return [
        total.records,
        total.sent,
        total.cached,
        total.cut,
        total.prompt_tokens,
        total.completion_tokens,
        total.mismatched,
        round(total.latency_s, 2),
        round(total.wall_s, 2) if total.wall_s else None,
        total.gpus,
        round(tokens / total.wall_s, 1) if total.wall_s else None,
        round(total.cost_usd, 4) if total.cost_usd is not None else None,
    ]
