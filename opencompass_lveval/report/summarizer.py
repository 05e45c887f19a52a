"""The OpenCompass summarizer: its usual table, then the per-length report of ``write_report``.

Levels past the official ones (``512k``...) need no summarizer edit: every benchmark adds the
groups (and rows) the configured ones lack for the run's datasets; LV-Eval, for example, a
``LVEval_{level}`` group (the average over the 11 datasets) per extra level.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from opencompass.summarizers import DefaultSummarizer

from ..files.errors import ReportError
from ..framework import benchmarks
from . import write_report
from .judging import unrated_lines
from .results import find_run, read_results, synthetic_models, synthetic_note
from .rounding import rounded

# What OpenCompass's summarizer prints before repeating its table as Markdown.
MARKDOWN_REPEAT = '\n\nThe markdown format results is as below:'


class LongContextSummarizer(DefaultSummarizer):
    """OpenCompass's summary, then the per-length tables and plots of ``write_report``."""

    def __init__(self, config, dataset_abbrs=None, summary_groups=None, **kwargs) -> None:
        summary_groups = list(summary_groups or [])
        named = {group['name'] for group in summary_groups}
        abbrs = [dataset.get('abbr', '') for dataset in config.get('datasets', [])]
        for benchmark in benchmarks.BENCHMARKS:
            groups, rows = benchmark.summary_groups(abbrs, named)
            summary_groups += groups
            if dataset_abbrs is not None and rows:
                dataset_abbrs = list(dataset_abbrs) + rows
        super().__init__(
            config, dataset_abbrs=dataset_abbrs, summary_groups=summary_groups, **kwargs
        )

    def _calculate_group_metrics(self, raw_results, parsed_results, dataset_metrics, modes):
        """OpenCompass's group averages, rounded by the rule every report table follows: it
        prints the binary average with '%.2f', which can differ from the report in the last digit.
        """
        found = super()._calculate_group_metrics(
            raw_results, parsed_results, dataset_metrics, modes
        )
        groups = {group['name'] for group in self.summary_groups}
        for results in found[1].values():
            for name in groups & results.keys():
                results[name] = {
                    metric: rounded(value) if isinstance(value, float) else value
                    for metric, value in results[name].items()
                }
        return found

    def summarize(self, *args, **kwargs):
        """OpenCompass's table once (it prints it twice, plain and as Markdown), then where the
        summary files and the per-length report are."""
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            outcome = super().summarize(*args, **kwargs)
        table, _, _ = printed.getvalue().partition(MARKDOWN_REPEAT)
        print(table.rstrip('\n'))
        summary = Path(self.work_dir) / 'summary'
        print(f'\nsummary files (txt, csv, md): {summary}')
        try:
            written = write_report(self.work_dir)
        except ReportError as exc:  # nothing of ours in this run: OpenCompass's summary stands
            self.logger.warning(str(exc))
        else:
            report = next(path for path in written if path.suffix == '.md')
            print(f'per-length report (tables, CSV, plots): {report}')
            results = read_results(find_run(self.work_dir))
            synthetic = synthetic_models(results)
            if synthetic:
                print(synthetic_note(synthetic).replace('**', '').rstrip())
            for line in unrated_lines(results):
                print(line)
        return outcome
