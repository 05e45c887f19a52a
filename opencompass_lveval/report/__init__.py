"""Per-length reports: how a model degrades as its context grows.

Reads an OpenCompass run folder (``results.py``), asks every benchmark for its tables and plots
(each benchmark's ``report`` module), and writes Markdown and CSV (``writers.py``) beside
OpenCompass's own summary; everything is recomputed from files, nothing is re-run.
``summarizer.py`` adapts it to OpenCompass's summarizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import quote

from ..files.atomic import write_text
from ..files.errors import ReportError
from .judging import judge_tables
from .results import find_run, read_results, synthetic_models, synthetic_note
from .tables import SYNTHETIC_MARK, file_part, synthetic_label
from .usage import usage_tables
from .writers import to_markdown, write_csv, write_intervals_csv

__all__ = ['ReportError', 'write_report']


def write_report(work_dir: str | Path, out_dir: Optional[str | Path] = None) -> list[Path]:
    """Write every table (Markdown, CSV) and plot (PNG) for a run; return the written paths,
    the Markdown report after the plots and before the CSV files. A model measured on synthetic
    data is labelled so in every table and plot (``synthetic_label``, as on the board); file
    names keep its name."""
    from ..framework import benchmarks

    run = find_run(work_dir)
    results = read_results(run)
    out = Path(out_dir) if out_dir else run / 'summary'
    out.mkdir(parents=True, exist_ok=True)
    synthetic = synthetic_models(results)
    labels = {model: synthetic_label(model) if model in synthetic else model for model in results}
    shown = {labels[model]: found for model, found in results.items()}
    tables, written = [], []
    for benchmark in benchmarks.BENCHMARKS:
        found, plots = benchmark.report(shown, out)
        tables += found
        written += plots
    for benchmark in benchmarks.BENCHMARKS:
        maps, plots = depth_maps(benchmark, run, results, out, labels)
        tables += maps
        written += plots
    if not tables:
        titles = ' or '.join(b.title for b in benchmarks.BENCHMARKS)
        raise ReportError(f'{run}/results has no {titles} results')
    tables += usage_tables(run, labels) + judge_tables(shown)
    markdown = out / 'long_context_report.md'
    note = [synthetic_note(synthetic)] if synthetic else []
    if any(table.intervals for table in tables):
        from .intervals import BRACKETS_NOTE, RESAMPLES

        note.append(BRACKETS_NOTE.format(resamples=RESAMPLES) + '\n')
    figures = [
        f'![{p.stem}]({quote(p.relative_to(out).as_posix())})'
        for p in written
        if p.suffix == '.png'
    ]
    shown_figures = ['### Plots\n\n' + '\n\n'.join(figures) + '\n'] if figures else []
    write_text(markdown, '\n'.join(note + [to_markdown(t) for t in tables] + shown_figures))
    written.append(markdown)
    stems = (table.stem.replace(SYNTHETIC_MARK, '') for table in tables)
    for table, stem in zip(tables, unique_stems(stems)):
        path = out / f'{stem}.csv'
        write_csv(table, path)
        written.append(path)
    if any(table.intervals for table in tables):
        path = out / 'intervals.csv'
        write_intervals_csv(tables, path)
        written.append(path)
    return written


def depth_maps(
    benchmark, run: Path, results: dict, out: Path, labels: dict[str, str]
) -> tuple[list, list[Path]]:
    """A benchmark's depth maps for every model: as tables, and one PNG per model and kind of
    map (``lveval_score_by_answer_depth_{model}.png``...), titled with the model's label."""
    from .depth import as_table
    from .plots import plot_depth_maps

    tables, plots = [], []
    for model, found in results.items():
        depths = {
            abbr: record
            for abbr, result in found.items()
            if (record := benchmark.record_depths(run, model, abbr, result)) is not None
        }
        scores = {
            abbr: record
            for abbr, result in found.items()
            if (record := benchmark.record_scores(result)) is not None
        }
        others = {
            metric: {
                abbr: record
                for abbr, result in found.items()
                if (record := benchmark.record_scores(result, metric)) is not None
            }
            for metric in extra_metrics(benchmark)
        }
        maps = benchmark.depth_maps(found, scores, depths, **metric_scores(others))
        tables += [as_table(m, labels[model], model) for m in maps]
        for stem in dict.fromkeys(m.stem for m in maps):
            path = out / f'{stem}_{file_part(model)}.png'
            plot_depth_maps(path, labels[model], [m for m in maps if m.stem == stem])
            plots.append(path)
    return tables, plots


def extra_metrics(benchmark) -> list[str]:
    """The metrics a benchmark scores per record besides its headline."""
    return [metric for metric in benchmark.metrics if metric != benchmark.interval_metric]


def metric_scores(others: dict) -> dict:
    """``depth_maps``' keyword for the other metrics' scores, given only where there are some
    (a benchmark with one metric may define ``depth_maps`` without it)."""
    return {'metric_scores': others} if others else {}


def unique_stems(stems) -> list[str]:
    """File-name-safe stems, none repeated: a model named ``levels`` gets ``lveval_levels_2``
    rather than overwriting the level table's ``lveval_levels``."""
    seen, unique = set(), []
    for stem in map(file_part, stems):
        candidate, number = stem, 1
        while candidate in seen:
            number += 1
            candidate = f'{stem}_{number}'
        seen.add(candidate)
        unique.append(candidate)
    return unique
