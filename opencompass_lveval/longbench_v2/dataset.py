"""LongBench v2 in OpenCompass: one dataset per (setting, length) read from the official
``data.json``, and the evaluator giving pred.py's judgement.

The dataset streams ``data.json`` (``data.py``) and keeps the records of its length. What the
prompt template fills depends on the mode:

- ``default``: the setting's document (the context, or the retrieved chunks), question and
  choices, stripped, filled in one pass into the template (``prompt_fields``); the document is
  the part a middle cut may shorten.
- ``official``: the whole prompt as pred.py makes it (sequential replaces: a record's own
  placeholders are filled too), one column ``prompt``; models in official mode cut it as pred.py
  does.

The evaluator reads each reply as pred.py does (stripped, ``extract_answer``, ``pred == answer``).
In official mode a reply of ``''`` drops the record (pred.py writes no line for it: it counts
neither right nor wrong); in default mode it counts wrong. Per record, the details keep the
judgement, the letter read, difficulty and length (result.py's table is made from them: the
benchmark's report), and the result the accuracy of the records kept and per difficulty.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

from ..files.columnar import ColumnarDataset
from ..files.errors import LongBenchV2DataError
from ..framework import benchmarks
from ..framework.factors import factor_means
from ..report.provenance import provenance
from . import prompts, requests
from .data import iter_records
from .extraction import extract_answer
from .prompts import FIELDS
from .tasks import RECORD_FIELDS, setting_named

DATA_FILE = 'data.json'
JUDGE = 'judge'  # the details' per-record judgement (pred == answer)


def data_file(path: str | Path) -> Path:
    """``data.json`` in the folder ``path``, or ``path`` itself where it is a file."""
    path = Path(path)
    return path if path.is_file() else path / DATA_FILE


def prompt_fields(record: dict, setting, rag: int) -> dict:
    """Default mode's columns of one record: the setting's document and the question and
    choices, each stripped as pred.py strips them."""
    values = prompts.fields(record, requests.document(record, setting, rag))
    return {field: values[placeholder] for placeholder, field in FIELDS.items()}


@LOAD_DATASET.register_module()
class LongBenchV2Dataset(ColumnarDataset):
    """The records of one length of ``data.json`` under ``path``, prompted for one setting."""

    @staticmethod
    def read_table(
        path: str, setting: str, length: str, mode: str = 'default', rag: int = 0
    ) -> tuple[pa.Table, str, bool]:
        file, row = data_file(path), setting_named(setting)
        prompts.check_mode(mode)
        if row.uses_retrieval and rag < 1:
            raise LongBenchV2DataError(
                f'{file}: the rag setting takes the first rag chunks of each record; set rag= '
                "(pred.py's --rag N) to 1 or more in the dataset config"
            )
        digest, columns = hashlib.sha1(f'{setting}:{mode}:{rag}'.encode()), []
        for record in iter_records(file, RECORD_FIELDS, retrieval=row.uses_retrieval):
            if record['length'] != length:
                continue
            kept = {name: record[name] for name in RECORD_FIELDS if name != 'context'}
            if mode == 'official':
                kept['prompt'] = requests.first_prompt(record, row, mode, rag)
            else:
                kept.update(prompt_fields(record, row, rag))
            for value in kept.values():
                digest.update(value.encode('utf-8', 'surrogatepass') + b'\0')
            columns.append(kept)
        table = pa.Table.from_pylist(columns) if columns else _empty(mode)
        return table, digest.hexdigest()[:16], benchmarks.is_synthetic(file.parent)


def _empty(mode: str) -> pa.Table:
    names = [n for n in RECORD_FIELDS if n != 'context'] + (
        ['prompt'] if mode == 'official' else list(FIELDS.values())
    )
    return pa.table({name: pa.array([], pa.string()) for name in dict.fromkeys(names)})


@ICL_EVALUATORS.register_module()
class LongBenchV2Evaluator(BaseEvaluator):
    """pred.py's judgement per record, the accuracy (percent) of the records kept and per
    difficulty; ``mode='official'`` drops a record whose reply is ``''`` (see the module)."""

    def __init__(self, mode: str = 'default', pred_postprocessor=None) -> None:
        super().__init__(pred_postprocessor=pred_postprocessor)
        self.mode = prompts.check_mode(mode)

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        rows = list(test_set) if len(test_set) else []
        details, dropped = [], 0
        for reply, row in zip(predictions, rows):
            reply = '' if reply is None else str(reply)
            if self.mode == 'official' and reply == '':
                dropped += 1
                continue
            letter = extract_answer(reply.strip())
            details.append(
                {
                    'pred': reply,
                    'answer': row['answer'],
                    'extracted': letter,
                    JUDGE: letter == row['answer'],
                    'difficulty': row['difficulty'],
                    'length': row['length'],
                    '_id': row['_id'],
                }
            )
        scores = [100.0 * d[JUDGE] for d in details]
        factors = benchmarks.named('longbench_v2').factors
        return {
            'accuracy': sum(scores) / len(scores) if scores else 0.0,
            **factor_means(factors, {'accuracy': scores}, details),
            'provenance': provenance(test_set, mode=self.mode, dropped_empty_replies=dropped),
            'details': details,
        }
