# OpenCompass's LV-Eval summary (same group names, so existing leaderboards keep working), plus
# per-level averages (levels past 256k in the run get theirs too); the run's summary/ folder also
# gets the per-length tables and plots.
from opencompass_lveval.report.summarizer import LongContextSummarizer

summarizer = dict(
    type=LongContextSummarizer,
    **__import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('lveval')
    .summary_config(),
)
