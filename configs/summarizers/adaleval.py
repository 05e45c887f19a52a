# Ada-LEval: accuracy per task and per setting, then every metric of every (task, setting):
# accuracy, instruction following, copy instruction (with chance), random guess; all in %.
# The run's summary/ folder also gets task x setting tables and accuracy plots.
from opencompass_lveval.report.summarizer import LongContextSummarizer

_entries = __import__('opencompass_lveval.adaleval.entries', fromlist=['adaleval_summary_groups'])

summarizer = dict(
    type=LongContextSummarizer,
    dataset_abbrs=_entries.adaleval_summary_abbrs(),
    summary_groups=_entries.adaleval_summary_groups(),
)
del _entries
