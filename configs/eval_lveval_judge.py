# LV-Eval's predictions scored again with the LLM judge of the LV-Eval v2 paper (no inference):
#   opencompass configs/eval_lveval_judge.py -m eval -r 20260101_120000   # the finished run
# The work folder, models and datasets are eval_lveval.py's (change them there or here); each
# result keeps its keyword score (`score`) and gains `judge_score` and the judge's counts, tokens
# and cost. Results already judged are skipped, and the judge's cache
# ({work_dir}/{run}/judge_cache/{judge}) spares every sample it has rated: a killed run resumes.
# The judge: any OpenAI-compatible model; default the paper's gpt-4-0613 ($OPENAI_API_KEY).
from mmengine.config import read_base
from opencompass.runners import LocalRunner

from opencompass_lveval.lveval.evaluator import LVEvalJudgeEvaluator
from opencompass_lveval.report.summarizer import LongContextSummarizer
from opencompass_lveval.runner.judge_task import JudgeEvalTask, JudgePartitioner

with read_base():
    from .eval_lveval import datasets, models, work_dir

_judge = __import__('opencompass_lveval.evaluators.judge', fromlist=['GPT4_0613_JUDGE'])
_tasks = __import__('opencompass_lveval.lveval.tasks', fromlist=['split_abbr'])
_lveval = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named('lveval')

# For another judge, e.g. a local server:
#   judge = dict(type='LongContextAPI', abbr='qwen2.5-72b-judge', path='Qwen/Qwen2.5-72B-Instruct',
#                url='http://127.0.0.1:8000/v1', max_seq_len=32768, tokenizer_path='/models/qwen')
judge = dict(_judge.GPT4_0613_JUDGE)
for _dataset in datasets:
    _dataset['eval_cfg'] = dict(
        evaluator=dict(
            type=LVEvalJudgeEvaluator,
            dataset=_tasks.split_abbr(_dataset['abbr'])[0].name,
            metric=_dataset['eval_cfg']['evaluator']['metric'],
            judge=judge,
        ),
        pred_role='BOT',
    )
eval = dict(
    partitioner=dict(type=JudgePartitioner, n=11),
    runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=JudgeEvalTask)),
)
# Both scores in OpenCompass's summary, per dataset, level and group; the run's summary/ folder
# gets the per-length tables with the judge beside the keyword score and their agreement.
_summary = _lveval.summary_config()
summarizer = dict(
    type=LongContextSummarizer,
    dataset_abbrs=[
        (abbr, metric) for abbr in _summary['dataset_abbrs'] for metric in ('score', 'judge_score')
    ],
    summary_groups=_summary['summary_groups'],
)
del _judge, _tasks, _lveval, _summary, _dataset
