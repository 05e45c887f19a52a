"""What a run cost, per model and length level: the usage records API models leave beside each
prediction (``models/api.py``: prompt and completion tokens as the server counted them, whether
the local count agreed, latency, cache hits, cuts, cost), totalled from the predictions files.

Runs without usage records (in-process models, older runs) give no table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ReportError
from ..sizes import parse_size
from ..tables import Table, number

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


def read_usage(run: Path) -> dict[str, dict[tuple[str, str], UsageTotal]]:
    """model -> (benchmark title, level) -> totals, for the datasets whose predictions carry
    usage records."""
    from .. import benchmarks

    totals: dict[str, dict[tuple[str, str], UsageTotal]] = {}
    for path in sorted((run / 'predictions').glob('*/*.json')):
        if path.name.startswith('tmp_'):
            continue
        for benchmark in benchmarks.BENCHMARKS:
            cell = benchmark.split_abbr(path.stem)
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
                else:
                    setattr(grand, name, getattr(grand, name) + value)
        rows.append(['all', '', *_values(grand)])
        tables.append(Table(f'Usage and cost: {model}', f'usage_{model}', HEADER, rows))
    return tables


def _values(total: UsageTotal) -> list:
    return [
        total.records,
        total.sent,
        total.cached,
        total.cut,
        total.prompt_tokens,
        total.completion_tokens,
        total.mismatched,
        round(total.latency_s, 2),
        round(total.cost_usd, 4) if total.cost_usd is not None else None,
    ]
