# OpenCompass's LV-Eval summary (same group names, so existing leaderboards keep working), plus
# per-level averages (levels past 256k in the run get theirs too); the run's summary/ folder also
# gets the per-length tables and plots.
from opencompass_lveval.report.summarizer import LongContextSummarizer

_entries = __import__('opencompass_lveval.lveval.entries', fromlist=['lveval_summary_groups'])

summarizer = dict(
    type=LongContextSummarizer,
    dataset_abbrs=_entries.lveval_summary_abbrs(),
    summary_groups=_entries.lveval_summary_groups(),
)
del _entries
