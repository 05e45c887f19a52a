"""The fixed set of predictions every scorer is given, and the official scores of it.

Everything comes from the golden sets in ``tests/data/golden`` (made by running the official code):

- RULER: the 390 predictions of ``ruler/scorer/cases.jsonl`` (30 per task, raw replies and the
  gold ``outputs``); official: ``evaluate.py``'s ``summary.csv``.
- LV-Eval: the 55 official-format prediction files (``pred``, ``answers``, ``gold_ans``);
  official: ``evaluation.py``'s ``result.json``. A task is a dataset: its five levels' scores
  averaged, each level scored as a subset.
- LongBench v2: for each setting (0-shot, chain of thought, no context, RAG with 8 chunks) the
  32 records of ``data.json`` and the replies ``responses.json`` gave pred.py at the 2,000-token
  budget (the 8,000 budget got the same replies, so the same table); official: ``result.py``'s
  ``result.txt``. And the 113 answer-extraction cases; official: ``extract_answer``'s letter
  judged against the case's answer.
- MRCR: GDM's 252 metric cases (12 texts x 21 kinds; the 6 edge inputs of non-string or
  ill-formed values left out: a harness reading its hash from the question cannot be given them)
  and OpenAI's 255 grade cases with a string reply; official: each case's official score.

Synthetic where a golden case lacks what a scorer needs, the same for every scorer: a record
around each extraction case (difficulty ``easy``, length ``short``, four choices), with a seeded
answer letter for the 17 cases that have none; an MRCR v2 question ``Prepend <hash> to ...``
from which OpenCompass's loader reads the hash; and one RULER task the golden predictions lack,
``qa_1 one of several answers``: qa_1's golden questions with several distinct accepted answers,
each answered with an accepted answer that leaves another out (official score 100 by
construction: ``string_match_part`` counts a sample when any accepted answer occurs).
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[2] / 'tests' / 'data' / 'golden'

RULER, LVEVAL, LONGBENCH_V2, MRCR = 'RULER', 'LV-Eval', 'LongBench v2', 'MRCR'
FAMILIES = (RULER, LVEVAL, LONGBENCH_V2, MRCR)

# LongBench v2 settings: (task name, result file suffix, responses.json kinds in call order, rag).
LONGBENCH_V2_SETTINGS = (
    ('0shot', '', ('0shot',), 0),
    ('cot', '_cot', ('cot', 'cot_ans'), 0),
    ('no_context', '_no_context', ('no_context',), 0),
    ('rag_8', '_rag_8', ('rag',), 8),
)
LONGBENCH_V2_MODEL = 'llama2_sp-2k'
EXTRACTION = 'extraction'
MRCR_V2, MRCR_OPENAI = 'mrcr_v2', 'mrcr_openai'
SEED = 45  # the synthetic parts' draws
PARTIAL_QA = 'qa_1 one of several answers'


@dataclass(frozen=True)
class Part:
    """What one scorer call sees: a subset's records, and the official score of it (points)."""

    name: str
    official: float
    records: list = field(repr=False)


@dataclass(frozen=True)
class Task:
    """One row of the table: a task of a family, scored as the mean of its parts' scores, each
    rounded to the decimals the official code prints (``decimals``)."""

    family: str
    name: str
    decimals: int
    parts: tuple[Part, ...]
    meta: dict = field(default_factory=dict)

    @property
    def official(self) -> float:
        return task_score([part.official for part in self.parts], self.decimals)

    @property
    def key(self) -> str:
        return f'{self.family} {self.name}'


def task_score(part_scores: list[float], decimals: int) -> float:
    """A task's score from its parts' scores: each rounded as the official prints, averaged."""
    rounded = [round(score, decimals) for score in part_scores]
    return round(sum(rounded) / len(rounded), decimals)


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding='utf-8') as stream:
        return [json.loads(line) for line in stream if line.strip()]


def ruler_tasks(golden: Path) -> list[Task]:
    """The 13 RULER tasks in summary.csv's order, 30 raw predictions each."""
    with open(golden / 'ruler' / 'scorer' / 'pred' / 'summary.csv', newline='') as stream:
        rows = {row[0]: row[1:] for row in csv.reader(stream)}
    official = dict(zip(rows['Tasks'], map(float, rows['Score'])))
    cases = [case for case in _jsonl(golden / 'ruler' / 'scorer' / 'cases.jsonl') if 'pred' in case]
    tasks = []
    for name, score in official.items():
        mine = [case for case in cases if case['task'] == name]
        records = [{'pred': case['pred'], 'outputs': case['outputs']} for case in mine]
        meta = {'metric': mine[0]['metric'], 'length': 4096}
        tasks.append(Task(RULER, name, 2, (Part(name, score, records),), meta))
    return tasks + [_ruler_one_of_several(golden)]


PARTIAL_TEMPLATES = ('{}', 'Answer: {}', 'It is {}, as the passage says.')


def _ruler_one_of_several(golden: Path) -> Task:
    """qa_1's questions with several distinct accepted answers (golden data at 4096 tokens),
    each answered with an accepted answer that leaves another out, in three wordings. The
    golden predictions never do this, so the official score is by construction: the reply holds
    an accepted answer, and string_match_part counts 1 when any is found: 100."""
    records = []
    for sample in _jsonl(golden / 'ruler' / 'data' / '4096' / 'qa_1' / 'validation.jsonl'):
        answers = sample['outputs']
        for answer in dict.fromkeys(answers):
            others = [a for a in answers if a.lower() not in answer.lower()]
            for template in PARTIAL_TEMPLATES if others else ():
                records.append({'pred': template.format(answer), 'outputs': answers})
    meta = {'metric': 'string_match_part', 'length': 4096, 'as': 'qa_1'}
    return Task(RULER, PARTIAL_QA, 2, (Part(PARTIAL_QA, 100.0, records),), meta)


def lveval_tasks(golden: Path) -> list[Task]:
    """The 11 LV-Eval datasets, each with its five level files as parts."""
    folder = golden / 'lveval'
    with open(folder / 'official_result' / 'result.json', encoding='utf-8') as stream:
        official = json.load(stream)
    by_dataset: dict[str, list[Part]] = {}
    for subset, score in official.items():
        dataset = subset.rpartition('_')[0]
        records = [
            {'pred': line['pred'], 'answers': line['answers'], 'gold_ans': line.get('gold_ans')}
            for line in _jsonl(folder / f'{subset}.jsonl')
        ]
        by_dataset.setdefault(dataset, []).append(Part(subset, score, records))
    return [Task(LVEVAL, name, 2, tuple(parts)) for name, parts in sorted(by_dataset.items())]


def _official_overall(golden: Path) -> dict[str, float]:
    lines = (golden / 'longbench_v2' / 'result.txt').read_text('utf-8').split('\n')
    return {line.split('\t')[0]: float(line.split('\t')[1]) for line in lines[1:]}


def longbench_v2_tasks(golden: Path) -> list[Task]:
    """The four settings (records with every reply, in call order) and the extraction cases."""
    folder = golden / 'longbench_v2'
    with open(folder / 'data.json', encoding='utf-8') as stream:
        data = {record['_id']: record for record in json.load(stream)}
    with open(folder / 'responses.json', encoding='utf-8') as stream:
        responses = {entry['_id']: entry['responses'] for entry in json.load(stream)['records']}
    overall = _official_overall(golden)
    tasks = []
    for name, suffix, kinds, rag in LONGBENCH_V2_SETTINGS:
        records = []
        for record_id, record in data.items():
            replies = [responses[record_id][kind] for kind in kinds]
            if replies[0] == '':  # pred.py makes no second call after an empty first reply
                replies = replies[:1]
            records.append({**record, 'replies': replies})
        official = overall[LONGBENCH_V2_MODEL + suffix]
        part = Part(LONGBENCH_V2_MODEL + suffix, official, records)
        tasks.append(Task(LONGBENCH_V2, name, 1, (part,), {'setting': kinds[0], 'rag': rag}))
    tasks.append(_extraction_task(folder))
    return tasks


def _extraction_task(folder: Path) -> Task:
    cases = _jsonl(folder / 'extract_cases.jsonl')
    draw = random.Random(SEED)
    for case in cases:  # the 17 'extra' cases have no answer: a seeded letter
        if case['answer'] is None:
            case['answer'] = draw.choice('ABCD')
    right = sum(case['official_extracted'] == case['answer'] for case in cases)
    records = [
        {
            '_id': f'extract-{number:03d}',
            'difficulty': 'easy',
            'length': 'short',
            'question': 'Which choice is right?',
            'choice_A': 'first',
            'choice_B': 'second',
            'choice_C': 'third',
            'choice_D': 'fourth',
            'answer': case['answer'],
            'context': '',
            'replies': [case['response']],
        }
        for number, case in enumerate(cases)
    ]
    part = Part(EXTRACTION, 100 * right / len(cases), records)
    return Task(LONGBENCH_V2, EXTRACTION, 2, (part,), {'setting': EXTRACTION, 'rag': 0})


def mrcr_tasks(golden: Path) -> list[Task]:
    """MRCR v2 (GDM's metric) and OpenAI MRCR (the card's grade), one part each."""
    folder = golden / 'mrcr'
    v2 = [
        {
            'prediction': case['prediction'],
            'target': case['target'],
            'question': f'Prepend {case["target"][:12]} to the first text about the sea in a '
            'formal style. Do not include any other text in your response.',
            'official': case['official_score'],
        }
        for case in _jsonl(folder / 'gdm_mrcr_v2_metric_cases.jsonl')
        if not case['id'].startswith('gdm-edge-')
    ]
    openai = [
        {
            'response': case['response'],
            'answer': case['answer'],
            'random_string_to_prepend': case['random_string_to_prepend'],
            'official': case['official_score'],
        }
        for case in _jsonl(folder / 'openai_mrcr_grade_cases.jsonl')
        if isinstance(case['response'], str)
    ]
    return [
        Task(MRCR, name, 2, (Part(name, 100 * sum(r['official'] for r in rows) / len(rows), rows),))
        for name, rows in ((MRCR_V2, v2), (MRCR_OPENAI, openai))
    ]


def fixed_set(golden: Path = GOLDEN) -> list[Task]:
    """Every task of the four families, in the table's order."""
    return (
        ruler_tasks(golden) + lveval_tasks(golden) + longbench_v2_tasks(golden) + mrcr_tasks(golden)
    )


def payload(tasks: list[Task]) -> list[dict]:
    """The fixed set as JSON for a harness's driver: each task's family, name, meta and parts
    (records without the official scores; each LongBench v2 record with ``reply``, its last
    call's reply, which is '' where the chain of thought's first reply was empty)."""
    out = []
    for task in tasks:
        parts = []
        for part in task.parts:
            records = [
                {k: v for k, v in r.items() if k not in ('official', 'retrieved_context')}
                for r in part.records
            ]
            if task.family == LONGBENCH_V2:
                for record in records:
                    record['reply'] = record['replies'][-1]
            parts.append({'name': part.name, 'records': records})
        out.append({'family': task.family, 'name': task.name, 'meta': task.meta, 'parts': parts})
    return out
