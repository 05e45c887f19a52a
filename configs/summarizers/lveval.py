# OpenCompass's LV-Eval summary (same group names, so existing leaderboards keep working), plus
# per-level averages; the run's summary/ folder also gets the per-length tables and plots.
from opencompass_lveval.summarize import LongContextSummarizer

_configs = __import__('opencompass_lveval.configs', fromlist=['lveval_summary_groups'])

summarizer = dict(
    type=LongContextSummarizer,
    dataset_abbrs=_configs.lveval_summary_abbrs(),
    summary_groups=_configs.lveval_summary_groups(),
)
del _configs
