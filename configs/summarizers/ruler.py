# RULER: the average over the 13 tasks at each length (the papers' table), the average of every
# cell (RULER_avg), each category (niah, vt, cwe, fwe, qa) over the lengths and at each one, then
# every task and length; the run's summary/ folder also gets the per-length tables and plots.
from opencompass_lveval.report.summarizer import LongContextSummarizer

summarizer = dict(
    type=LongContextSummarizer,
    **__import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('ruler')
    .summary_config(),
)
