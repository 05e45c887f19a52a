"""MRCR's files, read as they are published.

OpenAI MRCR (openai/mrcr): parquet files, one row per sample: ``prompt`` (a JSON array of chat
messages, as text), ``answer`` (the random string then the needle), ``random_string_to_prepend``,
``n_needles``, ``desired_msg_index``, ``total_messages``, ``n_chars`` and, in the December 2025
revision, ``date_added``. Columns are read straight into Arrow (``pyarrow.parquet``), only those
asked for; a prompt becomes Python text only when its row is taken.

MRCR v2 (eval_hub ``download.sh``): CSV files of the DataFrame ``generate_mrcr_v2`` returns:
``queries`` (the whole prompt), ``answer``, ``context_len``, ``answer_token_count``, ``view_ops``
(the final question), ``num_relevant``, ``answer_context_position``,
``index_positions_of_seeds`` and ``relevant_context_positions`` (tuples and lists written as
Python prints them). GDM's script needs only ``queries`` and ``answer``; the rest is read where
present. A row's needles and bucket come from the file's name. Rows are read one at a time (a
1M-token prompt is one CSV field of megabytes).
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..files.atomic import atomic_open
from ..files.errors import MRCRDataError
from .prompts import chat_messages
from .tasks import NEEDLES, openai_file_needles, v2_file_cell

OPENAI_REQUIRED = ('prompt', 'answer', 'random_string_to_prepend', 'n_needles')
OPENAI_OPTIONAL = ('desired_msg_index', 'total_messages', 'n_chars', 'date_added')
V2_REQUIRED = ('queries', 'answer')
V2_COLUMNS = (
    'queries',
    'answer',
    'context_len',
    'answer_token_count',
    'view_ops',
    'num_relevant',
    'answer_context_position',
    'index_positions_of_seeds',
    'relevant_context_positions',
)
_INTEGERS = ('context_len', 'answer_token_count', 'num_relevant')
_NUMBER = re.compile(r'-?\d+')
_FETCH = 'see docs/mrcr.md for where to get the files'


def openai_files(root: str | Path, needles: Iterable[int] = NEEDLES) -> list[Path]:
    """The openai/mrcr parquet files under ``root`` for ``needles``, in needle then name order."""
    root = Path(root)
    found = sorted(
        (needle, path.as_posix())
        for path in root.rglob('*.parquet')
        if (needle := openai_file_needles(path.name)) in set(needles)
    )
    if not found:
        raise MRCRDataError(
            f'{root} holds no openai/mrcr files ({{n}}needle/{{n}}needle_0.parquet or '
            f'{{n}}needle.parquet); {_FETCH}'
        )
    return [Path(path) for _, path in found]


def read_openai(path: str | Path, prompts: bool = True):
    """The Arrow table of one openai/mrcr file: the required columns (``prompt`` only when
    ``prompts``) and the optional ones present, each checked for its type."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException) as exc:
        raise MRCRDataError(f'{path} is no readable parquet file ({exc}); {_FETCH}') from None
    lacking = [name for name in OPENAI_REQUIRED if name not in names]
    if lacking:
        raise MRCRDataError(f'{path} lacks the column(s) {", ".join(lacking)}; {_FETCH}')
    wanted = [n for n in OPENAI_REQUIRED if prompts or n != 'prompt']
    table = pq.read_table(path, columns=wanted + [n for n in OPENAI_OPTIONAL if n in names])
    for name in table.column_names:
        kind = table.schema.field(name).type
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        if (name == 'n_needles' and not pa.types.is_integer(kind)) or (
            name in OPENAI_REQUIRED and name != 'n_needles' and not text
        ):
            raise MRCRDataError(f'{path}: column {name} has type {kind}; {_FETCH}')
    return table


def openai_records(table) -> Iterator[dict]:
    """The rows of ``read_openai``'s table as dicts, one batch converted at a time."""
    for batch in table.to_batches():
        yield from batch.to_pylist()


def openai_token_count(record: dict, count_tokens: Callable[[str], int]) -> int:
    """What OpenAI bins a sample by: the tokens of every message's content and of the answer
    (``count_tokens``: tiktoken ``o200k_base``'s length for the published bins)."""
    messages = chat_messages(record['prompt'])
    return sum(count_tokens(m['content']) for m in messages) + count_tokens(record['answer'])


def v2_files(root: str | Path, needles: Iterable[int] = NEEDLES) -> list[Path]:
    """MRCR v2 files under ``root`` named as download.sh names them, by needles then bucket."""
    root = Path(root)
    found = sorted(
        (cell, path.as_posix())
        for path in root.rglob('*.csv')
        if (cell := v2_file_cell(path.name)) and cell[0] in set(needles)
    )
    if not found:
        raise MRCRDataError(
            f'{root} holds no MRCR v2 files (mrcr_v2p1_{{n}}needle_..._text_style_fast.csv); '
            f'{_FETCH}'
        )
    return [Path(path) for _, path in found]


def _numbers(text: str) -> list[int]:
    return [int(n) for n in _NUMBER.findall(text)]


def v2_row(raw: dict, where: str) -> dict:
    """One CSV row with its integers and positions as numbers (only the columns present)."""
    row = {name: raw[name] for name in V2_COLUMNS if name in raw and raw[name] is not None}
    for name in _INTEGERS:
        if name in row:
            if not re.fullmatch(r'-?\d+(\.0)?', row[name].strip()):
                raise MRCRDataError(f'{where}: {name} must be a whole number, found {row[name]!r}')
            row[name] = int(float(row[name]))
    if 'answer_context_position' in row:
        row['answer_context_position'] = tuple(_numbers(row['answer_context_position']))
    if 'index_positions_of_seeds' in row:
        row['index_positions_of_seeds'] = _numbers(row['index_positions_of_seeds'])
    if 'relevant_context_positions' in row:
        flat = _numbers(row['relevant_context_positions'])
        row['relevant_context_positions'] = [tuple(flat[i : i + 2]) for i in range(0, len(flat), 2)]
    return row


def iter_v2_rows(path: str | Path) -> Iterator[dict]:
    """The rows of one MRCR v2 CSV file, each with ``needles`` and ``bucket`` from its name
    (None where the name is not download.sh's)."""
    path = Path(path)
    cell = v2_file_cell(path.name)
    csv.field_size_limit(sys.maxsize)  # a row holds a whole prompt
    try:
        with open(path, encoding='utf-8', newline='') as stream:
            reader = csv.DictReader(stream)
            lacking = [n for n in V2_REQUIRED if n not in (reader.fieldnames or ())]
            if lacking:
                raise MRCRDataError(f'{path} has no column(s) {", ".join(lacking)}; {_FETCH}')
            for number, raw in enumerate(reader, 2):
                row = v2_row(raw, f'{path}, line {number}')
                row['needles'], row['bucket'] = cell if cell else (row.get('num_relevant'), None)
                yield row
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise MRCRDataError(f'{path} cannot be read as UTF-8 CSV ({exc}); {_FETCH}') from None


def write_v2_csv(rows: Iterable[dict], path: str | Path) -> Path:
    """Rows in the official CSV layout (the DataFrame's columns, tuples and lists as Python
    prints them), written atomically."""
    with atomic_open(path, newline='') as stream:
        writer = csv.writer(stream, lineterminator='\n')
        writer.writerow(V2_COLUMNS)
        for row in rows:
            writer.writerow([_cell(row[name]) for name in V2_COLUMNS])
    return Path(path)


def _cell(value) -> str:
    if isinstance(value, list):
        return '[' + ', '.join(_cell(v) for v in value) + ']'
    if isinstance(value, tuple):
        return '(' + ', '.join(_cell(v) for v in value) + ')'
    return str(value)
