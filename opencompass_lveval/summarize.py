"""Per-length reports: how a model degrades as its context grows.

Reads an OpenCompass run folder (``results/{model}/{dataset}.json``, details included) and writes,
beside OpenCompass's own summary:
- LV-Eval: a dataset x level table per model with task-type groups and a per-level average row,
  and a model x level table of those averages (the LV-Eval paper's Figure 4a);
- Ada-LEval: per task, a metric x setting table per model (accuracy, instruction following, copy
  instruction and its chance rate, random guess);
- plots: average score by level per model, Ada-LEval accuracy by setting, and for factrecall a
  needle position x level heatmap per model from the per-sample scores (the paper's Figure 5).
Markdown and CSV for every table; everything is recomputed from files, nothing is re-run.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from opencompass.summarizers import DefaultSummarizer

from .adaleval.tasks import TASKS as ADALEVAL_TASKS
from .configs import ADALEVAL_METRICS
from .lveval.tasks import GROUPS, LEVELS, TASKS

FACTRECALL = ('factrecall_en', 'factrecall_zh')
POSITION_BUCKETS = 10


class ReportError(ValueError):
    """The folder holds no results to report on; the message says what to do."""


@dataclass
class Table:
    name: str
    stem: str  # file name of its CSV, without extension
    header: list[str]
    rows: list[list]

    def markdown(self) -> str:
        def cell(value) -> str:
            return '-' if value is None else f'{value:.2f}' if isinstance(value, float) else str(value)
        lines = [f'### {self.name}', '', '| ' + ' | '.join(self.header) + ' |',
                 '|' + '---|' * len(self.header)]
        lines += ['| ' + ' | '.join(cell(v) for v in row) + ' |' for row in self.rows]
        return '\n'.join(lines) + '\n'

    def write_csv(self, path: Path) -> None:
        with open(path, 'w', newline='', encoding='utf-8') as stream:
            writer = csv.writer(stream)
            writer.writerow(self.header)
            writer.writerows([['' if v is None else round(v, 2) if isinstance(v, float) else v
                               for v in row] for row in self.rows])


def find_run(work_dir: str | Path) -> Path:
    """The run folder: ``work_dir`` itself if it holds ``results/``, else its newest run."""
    work_dir = Path(work_dir)
    if (work_dir / 'results').is_dir():
        return work_dir
    runs = sorted(p for p in work_dir.glob('*') if (p / 'results').is_dir()) \
        if work_dir.is_dir() else []
    if not runs:
        raise ReportError(f'{work_dir} holds no OpenCompass results (no results/ folder in it or '
                          'in a run folder below it); run `opencompass CONFIG -w WORK_DIR` first '
                          'and point `lveval report` at WORK_DIR or one of its run folders.')
    return runs[-1]


def read_results(run: Path) -> dict[str, dict[str, dict]]:
    """model -> dataset abbr -> the result JSON OpenCompass wrote."""
    results: dict[str, dict[str, dict]] = {}
    for path in sorted((run / 'results').glob('*/*.json')):
        try:
            results.setdefault(path.parent.name, {})[path.stem] = json.loads(
                path.read_text(encoding='utf-8'))
        except ValueError as exc:
            raise ReportError(f'{path} is not valid JSON ({exc}); re-run its evaluation') from exc
    if not results:
        raise ReportError(f'{run}/results holds no result files; the evaluation did not finish')
    return results


def _mean(values: list[Optional[float]]) -> Optional[float]:
    """Average of the values, or None when any is missing (a partial average would mislead).
    Not rounded: tables round only when written."""
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def _score(results: dict, abbr: str, metric: str = 'score') -> Optional[float]:
    value = results.get(abbr, {}).get(metric)
    return float(value) if isinstance(value, (int, float)) else None


def lveval_table(model: str, results: dict) -> Optional[Table]:
    """Datasets, task-type groups and the per-level average, by level, for one model."""
    grid = {task.name: [_score(results, task.abbr(level)) for level in LEVELS] for task in TASKS}
    if all(v is None for row in grid.values() for v in row):
        return None
    rows = [[name] + values + [_mean(values)] for name, values in grid.items()]
    for name, members in [(group, [t.name for t in TASKS if t.group == group]) for group in GROUPS]\
            + [('average', [t.name for t in TASKS])]:
        values = [_mean([grid[m][i] for m in members]) for i in range(len(LEVELS))]
        rows.append([name] + values + [_mean([v for m in members for v in grid[m]])])
    return Table(f'LV-Eval, {model}', f'lveval_{model}', ['dataset'] + list(LEVELS) + ['avg'],
                 rows)


def lveval_average_row(table: Table) -> list[Optional[float]]:
    return table.rows[-1][1:1 + len(LEVELS)]


def adaleval_tables(model: str, results: dict) -> list[Table]:
    """Per task: every metric by setting, for one model."""
    tables = []
    for task in ADALEVAL_TASKS:
        settings = [s for s in task.settings if task.abbr(s) in results]
        if not settings:
            continue
        rows = [[metric] + [_score(results, task.abbr(s), metric) for s in settings]
                for metric in ADALEVAL_METRICS]
        tables.append(Table(f'Ada-LEval {task.name}, {model}', f'adaleval_{task.name}_{model}',
                            ['metric'] + settings, rows))
    return tables


def factrecall_heatmap(results: dict, dataset: str) -> Optional[list[list[Optional[float]]]]:
    """Mean per-sample score (%) by needle depth bucket (rows) and level (columns).

    The official factrecall files put the needle at evenly spaced depths in record order, so a
    record's index gives its depth. Up to ten buckets, fewer when there are fewer samples.
    """
    levels = [results.get(f'LVEval_{dataset}_{level}', {}).get('details') for level in LEVELS]
    sizes = [len(details) for details in levels if details]
    if not sizes:
        return None
    buckets = min(POSITION_BUCKETS, min(sizes))
    grid: list[list[Optional[float]]] = [[None] * len(LEVELS) for _ in range(buckets)]
    for column, details in enumerate(levels):
        if not details:
            continue
        scores = [_detail_score(d) for d in details]
        for bucket in range(buckets):
            chunk = scores[bucket * len(scores) // buckets:(bucket + 1) * len(scores) // buckets]
            grid[bucket][column] = 100 * sum(chunk) / len(chunk)
    return grid


def _detail_score(detail: dict) -> float:
    """A sample's score from OpenCompass's details (a list per replica, or a bare value)."""
    value = detail['score']
    return float(value[0] if isinstance(value, list) else value)


def _plot_lines(path: Path, title: str, x_labels: list[str], series: dict[str, list],
                x_label: str, y_label: str, dashed: Optional[dict[str, list]] = None) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(7, 4.2))
    positions = list(range(len(x_labels)))
    for label, values in series.items():
        points = [(x, v) for x, v in zip(positions, values) if v is not None]
        axes.plot([p[0] for p in points], [p[1] for p in points], marker='o', label=label)
    for label, values in (dashed or {}).items():
        points = [(x, v) for x, v in zip(positions, values) if v is not None]
        axes.plot([p[0] for p in points], [p[1] for p in points], linestyle='--', color='grey',
                  label=label)
    axes.set_xticks(positions, x_labels)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize='small')
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _plot_heatmaps(path: Path, model: str, grids: dict[str, list]) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    figure, axes = plt.subplots(1, len(grids), figsize=(4.5 * len(grids) + 1, 4.6), squeeze=False,
                                constrained_layout=True)
    for number, (axis, (dataset, grid)) in enumerate(zip(axes[0], grids.items())):
        values = np.array([[np.nan if v is None else v for v in row] for row in grid])
        image = axis.imshow(values, cmap='RdYlGn', vmin=0, vmax=100, aspect='auto')
        axis.set_xticks(range(len(LEVELS)), LEVELS)
        axis.set_yticks(range(len(grid)), [f'{100 * b // len(grid)}%' for b in range(len(grid))])
        axis.set_xlabel('length level')
        if number == 0:
            axis.set_ylabel('needle depth (start of bucket)')
        axis.set_title(dataset)
    figure.colorbar(image, ax=axes[0].tolist(), label='score (%)')
    figure.suptitle(f'factrecall by needle depth and length, {model}')
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_report(work_dir: str | Path, out_dir: Optional[str | Path] = None) -> list[Path]:
    """Write every table (Markdown, CSV) and plot (PNG) for a run; return the written paths."""
    run = find_run(work_dir)
    results = read_results(run)
    out = Path(out_dir) if out_dir else run / 'summary'
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    tables: list[Table] = []
    averages: dict[str, list] = {}
    for model, model_results in results.items():
        table = lveval_table(model, model_results)
        if table:
            tables.append(table)
            averages[model] = lveval_average_row(table)
        tables.extend(adaleval_tables(model, model_results))
    if averages:
        tables.insert(0, Table('LV-Eval average score by length level', 'lveval_levels',
                               ['model'] + list(LEVELS) + ['avg'],
                               [[m] + row + [_mean(row)] for m, row in averages.items()]))
        path = out / 'lveval_levels.png'
        _plot_lines(path, 'LV-Eval: average over 11 datasets', list(LEVELS), averages,
                    'length level (English words / Chinese characters)', 'average score (%)')
        written.append(path)
    for task in ADALEVAL_TASKS:
        settings = [s for s in task.settings
                    if any(task.abbr(s) in model_results for model_results in results.values())]
        if not settings:
            continue
        accuracy = {m: [_score(r, task.abbr(s), 'accuracy') for s in settings]
                    for m, r in results.items()}
        chance = [next((v for r in results.values()
                        if (v := _score(r, task.abbr(s), 'random_guess')) is not None), None)
                  for s in settings]
        path = out / f'adaleval_{task.name}_accuracy.png'
        _plot_lines(path, f'Ada-LEval {task.name}: accuracy by setting', settings, accuracy,
                    'setting (tokens)', 'accuracy (%)', {'chance (uniform random answer)': chance})
        written.append(path)
    for model, model_results in results.items():
        grids = {d: g for d in FACTRECALL if (g := factrecall_heatmap(model_results, d))}
        if grids:
            path = out / f'factrecall_heatmap_{model}.png'
            _plot_heatmaps(path, model, grids)
            written.append(path)
    if not tables:
        raise ReportError(f'{run}/results has no LV-Eval or Ada-LEval results')
    markdown = out / 'long_context_report.md'
    markdown.write_text('\n'.join(t.markdown() for t in tables), encoding='utf-8')
    written.append(markdown)
    for table in tables:
        path = out / f'{table.stem}.csv'
        table.write_csv(path)
        written.append(path)
    return written


class LongContextSummarizer(DefaultSummarizer):
    """OpenCompass's summary, then the per-length tables and plots of ``write_report``."""

    def summarize(self, *args, **kwargs):
        outcome = super().summarize(*args, **kwargs)
        try:
            written = write_report(self.work_dir)
        except ReportError as exc:  # nothing of ours in this run: OpenCompass's summary stands
            self.logger.warning(str(exc))
        else:
            self.logger.info(f'long-context report: {written[0].parent}')
        return outcome
