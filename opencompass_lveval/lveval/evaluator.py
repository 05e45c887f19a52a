"""The OpenCompass evaluators for LV-Eval: the official metric (a thin layer over the pure
functions of metrics.py), and the same plus the paper's LLM judge (``LVEvalJudgeEvaluator``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS

from ..evaluators.judge import GPT4_0613_JUDGE, MAX_OUT_LEN, Judge, judge_name
from ..evaluators.judge import summarise as summarise_judge
from ..files.responses import response_text
from ..report.provenance import provenance
from ..report.tables import file_part
from .metrics import METRICS, Judgement, judge_all, subset_score
from .tasks import TASKS_BY_NAME

JUDGE_CACHE = 'judge_cache'  # in the work folder: one folder per judge


def summarise(judgements: list[Judgement], non_string_predictions: int) -> dict:
    """The subset score, and in words how many samples the gate zeroed, how many keyword strings
    normalised to nothing (the official code crashes on those), how many ROUGE calls failed and
    how many predictions were not strings.

    The counts are text so that OpenCompass's summarizer, which averages every number it finds,
    keeps reporting ``score`` alone.
    """
    return {
        'score': subset_score([j.score for j in judgements]),
        'diagnostics': (
            f'{sum(j.keyword_gate_failed for j in judgements)} keyword gate failed, '
            f'{sum(j.keywords_unusable for j in judgements)} unusable keywords, '
            f'{sum(j.error is not None for j in judgements)} metric errors, '
            f'{non_string_predictions} non-string predictions, '
            f'{len(judgements)} samples'
        ),
    }


@ICL_EVALUATORS.register_module()
class LVEvalEvaluator(BaseEvaluator):
    """Scores one LV-Eval subset with its official metric (``metric`` names a METRICS entry)."""

    def __init__(self, metric: str, pred_postprocessor=None) -> None:
        if metric not in METRICS:
            raise ValueError(f'Unknown LV-Eval metric {metric!r}; choose from {sorted(METRICS)}')
        super().__init__(pred_postprocessor=pred_postprocessor)
        self.metric = metric

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        keywords = (
            test_set['answer_keywords']
            if 'answer_keywords' in test_set.column_names
            else [''] * len(references)
        )
        judgements = judge_all(self.metric, predictions, references, keywords)
        result = summarise(judgements, sum(not isinstance(p, str) for p in predictions))
        result['provenance'] = provenance(test_set, metric=self.metric)
        result['details'] = [
            {
                'pred': prediction,
                'answer': answers[0],
                'answer_keywords': keyword,
                'score': judgement.score,
                'keyword_gate_failed': judgement.keyword_gate_failed,
                'keywords_unusable': judgement.keywords_unusable,
                'metric_error': judgement.error,
            }
            for prediction, answers, keyword, judgement in zip(
                predictions, references, keywords, judgements
            )
        ]
        return result


@ICL_EVALUATORS.register_module()
class LVEvalJudgeEvaluator(LVEvalEvaluator):
    """The official metric (``score`` and its keys, unchanged) plus the LLM judge of the LV-Eval
    v2 paper: the dataset's rating prompt (the task table's ``judge_prompt``) per sample, sent
    at temperature 0 to ``judge`` (a ``LongContextAPI`` model config; default the paper's
    gpt-4-0613), ``[n]`` read as n/10. Adds ``judge_score`` (percent, over the rated samples),
    ``judge_diagnostics`` and ``judge`` (counts, tokens, cost, problems); each sample's detail
    gains ``judge_rating`` and ``judge_problem``.

    ``dataset``: the LV-Eval dataset name (``cmrc_mixup``). ``cache_dir``: the judge's cache
    (default ``{work_dir}/judge_cache/{judge}``, beside the run's results), so a killed or
    repeated evaluation pays nothing twice. ``judge_model``: a ready object with the
    ``chat(messages, max_out_len, temperature)`` of ``LongContextAPI`` instead of ``judge``.
    """

    def __init__(
        self,
        dataset: str,
        judge: Optional[dict] = None,
        metric: Optional[str] = None,
        cache_dir: Optional[str] = None,
        max_out_len: int = MAX_OUT_LEN,
        concurrency: int = 4,
        judge_model: Any = None,
        pred_postprocessor=None,
    ) -> None:
        if dataset not in TASKS_BY_NAME:
            raise ValueError(
                f'Unknown LV-Eval dataset {dataset!r}; choose from {sorted(TASKS_BY_NAME)}'
            )
        self.task = TASKS_BY_NAME[dataset]
        super().__init__(metric or self.task.metric, pred_postprocessor=pred_postprocessor)
        self.judge_config = dict(judge) if judge is not None else None
        self.cache_dir = cache_dir
        self.max_out_len, self.concurrency = max_out_len, concurrency
        self.judge_model = judge_model

    def judge(self) -> Judge:
        config = self.judge_config if self.judge_config is not None else GPT4_0613_JUDGE
        cache_dir = self.cache_dir
        out_dir = getattr(self, '_out_dir', None)  # OpenCompass: {work_dir}/results/{model}/{abbr}
        if cache_dir is None and out_dir:
            cache_dir = Path(out_dir).parents[2] / JUDGE_CACHE / file_part(judge_name(config))
        return Judge(
            config,
            cache_dir,
            model=self.judge_model,
            max_out_len=self.max_out_len,
            concurrency=self.concurrency,
        )

    def score(self, predictions: list, references: list, test_set) -> dict:
        result = super().score(predictions, references, test_set)
        if 'error' in result:
            return result
        columns = getattr(test_set, 'column_names', ())
        questions = test_set['input'] if 'input' in columns else [''] * len(references)
        prompts = [
            self.task.judge_request(question, answers[0], response_text(prediction))
            for question, answers, prediction in zip(questions, references, predictions)
        ]
        judge = self.judge()
        verdicts = judge.rate_all(prompts)
        result.update(summarise_judge(verdicts, judge))
        result['provenance']['judge'] = judge.name
        result['provenance']['judge_settings'] = judge.digest
        for detail, verdict in zip(result['details'], verdicts):
            detail['judge_rating'] = verdict.rating
            detail['judge_problem'] = verdict.problem
        # The details last, as before: OpenCompass's result files read best that way.
        result['details'] = result.pop('details')
        return result
