"""The OpenCompass evaluator for Ada-LEval, over the pure functions of extraction.py/metrics.py."""

from __future__ import annotations

from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS

from ..report.provenance import provenance
from .extraction import MODES
from .metrics import judge, summarise
from .tasks import task_named


@ICL_EVALUATORS.register_module()
class AdaLEvalEvaluator(BaseEvaluator):
    """Accuracy, instruction-following and copy-instruction rates (with chance) and the random
    guess rate for one task at one setting. ``extraction``: 'strict' (default) or 'official'."""

    def __init__(self, task: str, extraction: str = 'strict', pred_postprocessor=None) -> None:
        if extraction not in MODES:
            raise ValueError(f'extraction must be one of {MODES}, not {extraction!r}')
        super().__init__(pred_postprocessor=pred_postprocessor)
        self.task, self.extraction = task_named(task), extraction

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        num_choices = test_set['num_choice']
        answers = [self.task.reference(r) for r in references]
        extractions = judge(self.task, predictions, answers, num_choices, self.extraction)
        result = summarise(self.task, predictions, extractions, num_choices)
        result['provenance'] = provenance(test_set, extraction=self.extraction)
        result['diagnostics'] = (
            f'{result.pop("samples")} samples, {self.extraction} extraction, '
            f'{result.pop("official_errors")} where the official code crashes, '
            f'{result.pop("non_string_predictions")} non-string predictions'
        )
        result['details'] = [
            {
                'pred': prediction,
                'answer': answer,
                'extracted': e.extracted,
                'correct': e.hit,
                'official_error': e.official_error,
            }
            for prediction, answer, e in zip(predictions, answers, extractions)
        ]
        return result
