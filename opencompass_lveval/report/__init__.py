"""Per-length reports: how a model degrades as its context grows.

Reads an OpenCompass run folder (``results.py``), computes the tables (``tables.py``), writes
Markdown and CSV (``writers.py``) and the papers' plots (``plots.py``) beside OpenCompass's own
summary; everything is recomputed from files, nothing is re-run. ``summarizer.py`` adapts it to
OpenCompass's summarizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..adaleval.tasks import TASKS as ADALEVAL_TASKS
from ..errors import ReportError
from ..lveval.tasks import TASKS as LVEVAL_TASKS
from .plots import plot_heatmaps, plot_lines
from .results import find_run, read_results, score
from .tables import (
    Table,
    adaleval_settings,
    adaleval_tables,
    average_row,
    factrecall_heatmap,
    lveval_levels,
    lveval_table,
    mean,
)
from .writers import to_markdown, write_csv

__all__ = ['ReportError', 'write_report']


def write_report(work_dir: str | Path, out_dir: Optional[str | Path] = None) -> list[Path]:
    """Write every table (Markdown, CSV) and plot (PNG) for a run; return the written paths,
    the Markdown report after the plots and before the CSV files."""
    run = find_run(work_dir)
    results = read_results(run)
    out = Path(out_dir) if out_dir else run / 'summary'
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    tables: list[Table] = []
    averages: dict[str, list] = {}
    levels = lveval_levels({abbr: None for model in results.values() for abbr in model})
    for model, model_results in results.items():
        table = lveval_table(model, model_results, levels)
        if table:
            tables.append(table)
            averages[model] = average_row(table, levels)
        tables.extend(adaleval_tables(model, model_results))
    if averages:
        tables.insert(
            0,
            Table(
                'LV-Eval average score by length level',
                'lveval_levels',
                ['model'] + levels + ['avg'],
                [[m] + row + [mean(row)] for m, row in averages.items()],
            ),
        )
        path = out / 'lveval_levels.png'
        plot_lines(
            path,
            'LV-Eval: average over 11 datasets',
            levels,
            averages,
            'length level (English words / Chinese characters)',
            'average score (%)',
        )
        written.append(path)
    for task in ADALEVAL_TASKS:
        settings = adaleval_settings(task, results)
        if not settings:
            continue
        accuracy = {
            m: [score(r, task.abbr(s), 'accuracy') for s in settings] for m, r in results.items()
        }
        chance = [
            next(
                (
                    v
                    for r in results.values()
                    if (v := score(r, task.abbr(s), 'random_guess')) is not None
                ),
                None,
            )
            for s in settings
        ]
        path = out / f'adaleval_{task.name}_accuracy.png'
        plot_lines(
            path,
            f'Ada-LEval {task.name}: accuracy by setting',
            settings,
            accuracy,
            'setting (tokens)',
            'accuracy (%)',
            {'chance (uniform random answer)': chance},
        )
        written.append(path)
    for model, model_results in results.items():
        grids = {
            t.name: g
            for t in LVEVAL_TASKS
            if t.haystack and (g := factrecall_heatmap(model_results, t.name, levels))
        }
        if grids:
            path = out / f'factrecall_heatmap_{model}.png'
            plot_heatmaps(path, model, grids, levels)
            written.append(path)
    if not tables:
        raise ReportError(f'{run}/results has no LV-Eval or Ada-LEval results')
    markdown = out / 'long_context_report.md'
    markdown.write_text('\n'.join(to_markdown(t) for t in tables), encoding='utf-8')
    written.append(markdown)
    for table in tables:
        path = out / f'{table.stem}.csv'
        write_csv(table, path)
        written.append(path)
    return written
