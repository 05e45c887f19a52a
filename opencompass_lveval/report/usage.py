"""What a run cost, per model and length level. ``LongContextInferTask`` puts a usage record beside
each prediction (prompt and completion tokens: an API model's as its server counted them, with
whether the local count agreed, cache hits and cost; an in-process model's as it received and
generated them; cuts; latency) and keeps each dataset's totals, inference wall time and GPUs in
``{abbr}.inference.json`` beside its predictions. Reports and leaderboards read those small files,
never the predictions again, and add tokens per second.

Runs without them (other wrappers, older runs) give no table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.errors import ReportError
from ..framework.sizes import level_key
from .results import dataset_of
from .tables import Table, number

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
        # a two-call answer's record counts its calls that reached a server (``requests``)
        fresh = record.get('sent') is True and record.get('cached') is not True
        self.sent += record.get('requests', 1) if fresh else 0
        self.cached += record.get('cached') is True
        self.cut += record.get('truncated') is True
        self.prompt_tokens += max(int(number(record.get('prompt_tokens')) or 0), 0)
        self.completion_tokens += max(int(number(record.get('completion_tokens')) or 0), 0)
        self.mismatched += record.get('prompt_tokens_match') is False
        self.latency_s += max(number(record.get('latency_s')) or 0.0, 0.0)
        cost = number(record.get('cost_usd'))
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost


def usage_totals(records: list) -> dict:
    """The totals of a dataset's usage records (``None`` for predictions without one), as the
    infer task keeps them beside the predictions."""
    total = UsageTotal()
    for record in records:
        if isinstance(record, dict):
            total.add(record)
    return {name: value for name, value in vars(total).items() if name not in ('wall_s', 'gpus')}


INFERENCE_SUFFIX = '.inference.json'


def inference_record_path(predictions: Path) -> Path:
    """Where the infer task keeps a predictions file's totals, wall time and GPUs: beside it,
    under a name OpenCompass's own readers never match."""
    return predictions.with_name(predictions.stem + INFERENCE_SUFFIX)


COUNTS = ('records', 'sent', 'cached', 'cut', 'prompt_tokens', 'completion_tokens', 'mismatched')


def read_inference_record(path: Path) -> Optional[UsageTotal]:
    """A dataset's totals, wall time and GPUs from its ``{abbr}.inference.json`` (None where
    the file is missing or holds no usage); values that are not numbers count as none."""
    try:
        stored = json.loads(path.read_text(encoding='utf-8'))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ReportError(f'{path}: not a readable inference record ({exc})') from None
    usage = stored.get('usage') if isinstance(stored, dict) else None
    if not isinstance(usage, dict):
        return None
    total = UsageTotal()
    for name in COUNTS:
        setattr(total, name, int(max(number(usage.get(name)) or 0, 0)))
    total.latency_s = max(number(usage.get('latency_s')) or 0.0, 0.0)
    total.cost_usd = number(usage.get('cost_usd'))
    total.wall_s = max(number(stored.get('wall_s')) or 0.0, 0.0)
    total.gpus = int(max(number(stored.get('gpus')) or 0, 0))
    return total


def merge(into: UsageTotal, other: UsageTotal) -> None:
    """Add ``other`` to ``into``: sums, the most GPUs, costs where given."""
    for name, value in vars(other).items():
        if name == 'cost_usd':
            if value is not None:
                into.cost_usd = (into.cost_usd or 0.0) + value
        elif name == 'gpus':
            into.gpus = max(into.gpus, value)
        else:
            setattr(into, name, getattr(into, name) + value)


def read_usage(run: Path) -> dict[str, dict[tuple[str, str], UsageTotal]]:
    """model -> (benchmark title, level) -> totals, from the inference records of the run."""
    from ..framework import benchmarks

    totals: dict[str, dict[tuple[str, str], UsageTotal]] = {}
    for path in sorted((run / 'predictions').glob(f'*/*{INFERENCE_SUFFIX}')):
        abbr = dataset_of(path.name.removesuffix(INFERENCE_SUFFIX))
        for benchmark in benchmarks.BENCHMARKS:
            cell = benchmark.split_abbr(abbr)
            if cell is not None:
                break
        else:
            continue
        found = read_inference_record(path)
        if found is None or not found.records:
            continue
        cells = totals.setdefault(path.parent.name, {})
        merge(cells.setdefault((benchmark.title, cell[1]), UsageTotal()), found)
    return totals


def usage_tables(run: Path, labels: dict[str, str]) -> list[Table]:
    """One table per model with usage records: a line per benchmark and level, then the sum;
    titled with the model's label (``labels``, its name where it has none)."""
    tables = []
    for model, cells in sorted(read_usage(run).items()):
        rows, grand = [], UsageTotal()
        for (title, level), total in sorted(
            cells.items(), key=lambda c: (c[0][0], level_key(c[0][1]))
        ):
            rows.append([title, level, *_values(total)])
            merge(grand, total)
        rows.append(['all', '', *_values(grand)])
        title = f'Usage and cost: {labels.get(model, model)}'
        tables.append(Table(title, f'usage_{model}', HEADER, rows))
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
