# OpenCompass's LV-Eval summary (same group names, so existing leaderboards keep working).
_configs = __import__('opencompass_lveval.configs', fromlist=['lveval_summary_groups'])

summarizer = dict(
    dataset_abbrs=_configs.lveval_summary_abbrs(),
    summary_groups=_configs.lveval_summary_groups(),
)
del _configs
