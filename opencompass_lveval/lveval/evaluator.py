"""The OpenCompass evaluator for LV-Eval, a thin layer over the pure functions of metrics.py."""

from __future__ import annotations

from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS

from ..provenance import provenance
from .metrics import METRICS, Judgement, judge_all, subset_score


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
