"""The OpenCompass summarizer: its usual table, then the per-length report of ``write_report``.

Levels past the official five (``512k``...) need no summarizer edit: for every LV-Eval level
among the run's datasets that the configured groups do not cover, a ``LVEval_{level}`` group (the
average over the 11 datasets) and its rows are added.
"""

from __future__ import annotations

from opencompass.summarizers import DefaultSummarizer

from ..errors import ReportError
from ..lveval.entries import level_groups
from ..lveval.tasks import split_abbr
from ..sizes import by_size
from . import write_report


class LongContextSummarizer(DefaultSummarizer):
    """OpenCompass's summary, then the per-length tables and plots of ``write_report``."""

    def __init__(self, config, dataset_abbrs=None, summary_groups=None, **kwargs) -> None:
        summary_groups = list(summary_groups or [])
        named = {group['name'] for group in summary_groups}
        subsets = [
            (dataset['abbr'], found[1])
            for dataset in config.get('datasets', [])
            if (found := split_abbr(dataset.get('abbr', ''))) and f'LVEval_{found[1]}' not in named
        ]
        extra = by_size(level for _, level in subsets)
        if extra:
            summary_groups += level_groups(extra)
            if dataset_abbrs is not None:
                dataset_abbrs = (
                    list(dataset_abbrs)
                    + [f'LVEval_{level}' for level in extra]
                    + [abbr for abbr, _ in subsets]
                )
        super().__init__(
            config, dataset_abbrs=dataset_abbrs, summary_groups=summary_groups, **kwargs
        )

    def summarize(self, *args, **kwargs):
        outcome = super().summarize(*args, **kwargs)
        try:
            written = write_report(self.work_dir)
        except ReportError as exc:  # nothing of ours in this run: OpenCompass's summary stands
            self.logger.warning(str(exc))
        else:
            self.logger.info(f'long-context report: {written[0].parent}')
        return outcome
