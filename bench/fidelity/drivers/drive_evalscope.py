"""The fixed set scored by evalscope's ``longbench_v2`` and ``openai_mrcr`` benchmarks, as its
evaluator scores a reply: the adapter from evalscope's registry (``get_benchmark``); each record
made a ``Sample`` by the adapter's ``record_to_sample`` (OpenAI MRCR: the same fields built
here, because its ``record_to_sample`` counts tokens with tiktoken's ``o200k_base``, a file
downloaded at run time; the bin index, which only places a sample in the per-bin table, is
``bin_index_for(0)``); a completed ``TaskState`` holding the reply as the model's output;
``adapter.calculate_metrics(state)`` (its ``filter_prediction``, ``extract_answer`` and
``match_score``); ``adapter.aggregate_subset`` per subset (LongBench v2: short, medium, long by
the record's ``length``); the report's ``Category`` of those subsets, whose score is the mean
over samples rounded to 4 decimals (a fraction; here x100). evalscope has no RULER and no LV-Eval
benchmark, and no MRCR v2.
"""

from __future__ import annotations

from common import run
from evalscope.api.dataset import Sample
from evalscope.api.evaluator import TaskState
from evalscope.api.model import ModelOutput
from evalscope.api.registry import get_benchmark
from evalscope.benchmarks.openai_mrcr.utils import bin_index_for
from evalscope.config import TaskConfig
from evalscope.report.report import Category, Subset

MODEL = 'fixed-predictions'
CONFIG = TaskConfig(model=MODEL, datasets=['longbench_v2', 'openai_mrcr'], eval_type='mock_llm')


def reported(adapter, samples: list[tuple[Sample, str]], metric: str, overall: dict) -> float:
    """The report's score of ``samples`` (each with its reply), points."""
    by_subset: dict[str, list] = {}
    for number, (sample, reply) in enumerate(samples):
        sample.id = number
        state = TaskState(
            MODEL, sample, output=ModelOutput.from_content(MODEL, reply), completed=True
        )
        by_subset.setdefault(sample.subset_key or 'default', []).append(
            adapter.calculate_metrics(state)
        )
    subsets = []
    for name, scores in by_subset.items():
        found = [
            a
            for a in adapter.aggregate_subset(name, scores)
            if a.metric_name == metric and all(a.dimensions.get(k) == v for k, v in overall.items())
        ]
        subsets.append(Subset(name=name, score=found[0].score, num=found[0].num))
    return 100 * Category(name='default', subsets=subsets).score


def longbench_v2(task: dict) -> list[float]:
    adapter = get_benchmark('longbench_v2', CONFIG)
    records = task['parts'][0]['records']
    samples = [(adapter.record_to_sample(r), r['reply']) for r in records]
    return [reported(adapter, samples, 'accuracy', {})]


def mrcr(task: dict) -> list[float] | None:
    if task['name'] != 'mrcr_openai':
        return None  # evalscope has OpenAI MRCR only
    adapter = get_benchmark('openai_mrcr', CONFIG)
    samples = [
        (
            Sample(
                input=[],
                target=r['answer'],
                metadata={
                    'random_string_to_prepend': r['random_string_to_prepend'],
                    'bin_index': bin_index_for(0),
                },
            ),
            r['response'],
        )
        for r in task['parts'][0]['records']
    ]
    return [reported(adapter, samples, 'mrcr_score', {'scope': 'overall'})]


if __name__ == '__main__':
    run({'LongBench v2': longbench_v2, 'MRCR': mrcr}, ['evalscope'])
