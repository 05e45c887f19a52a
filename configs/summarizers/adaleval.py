# Ada-LEval: accuracy per task and per setting, then every metric of every (task, setting):
# accuracy, instruction following, copy instruction (with chance), random guess; all in %.
# The run's summary/ folder also gets task x setting tables and accuracy plots.
from opencompass_lveval.report.summarizer import LongContextSummarizer

summarizer = dict(
    type=LongContextSummarizer,
    **__import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('adaleval')
    .summary_config(),
)
