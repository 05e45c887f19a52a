"""Find and read official LV-Eval files: plain ``{dataset}_{level}.jsonl`` or the per-dataset zips.

A file is parsed once, by Arrow's JSON reader, straight into the columns the benchmark needs (the
long contexts never become Python objects), and its text is checked to be valid UTF-8. Only when
that fast path fails is the file read again: line by line, to name the exact line and field and
say how to fix it, or, for records larger than Arrow's block, once more with a block that holds
the longest line (records of any size load). Any size is a level (``512k``, ``1000k``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Optional

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.json as pa_json

from ..files.errors import LVEvalDataError
from ..framework.benchmarks import is_synthetic
from ..framework.datacheck import folder_from_env, shown, walk_regular
from ..framework.sizes import by_size
from .tasks import LEVELS, TASKS, split_subset, subset_of_file

HF_REPO = 'Infinigence/LVEval'
DATA_DIR_ENV = 'LVEVAL_DATA_DIR'
GET_DATA_HINT = (
    f'Download the official zips once (Hugging Face dataset {HF_REPO}, files {{dataset}}.zip), copy '
    f'them to the cluster and point the loader at their folder (config `path=` or ${DATA_DIR_ENV}); '
    'zips are read without unpacking, unpacked {dataset}_{level}.jsonl files at any depth work too.'
)

REQUIRED_STRING_FIELDS = ('input', 'context')
RECORD_SCHEMA = pa.schema(
    [
        ('input', pa.string()),
        ('context', pa.string()),
        ('answers', pa.list_(pa.string())),
        ('answer_keywords', pa.string()),
    ]
)
_PARSE_OPTIONS = pa_json.ParseOptions(
    explicit_schema=RECORD_SCHEMA, unexpected_field_behavior='ignore'
)
# Arrow parses a file in blocks and a record must fit in one; 4 MB holds every official record
# (a 256k-word context is about 1.8 MB). Larger records get a second parse with a larger block.
BLOCK_SIZE = 4 << 20
_STRADDLING = 'straddl'  # Arrow's "straddling object straddles two block boundaries"
_DAMAGED_ZIP = (zipfile.BadZipFile, zlib.error, EOFError)
DIGEST = 'digest'  # schema metadata key: the digest of the bytes a table was parsed from


@dataclass(frozen=True)
class SubsetSource:
    """Where one subset's records live: a plain file, or a member of a zip archive."""

    path: Path
    member: Optional[str] = None

    def __str__(self) -> str:
        return f'{self.path}::{self.member}' if self.member else str(self.path)

    @contextlib.contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        """The raw bytes of the subset's JSON lines (a zip member is streamed, not unpacked)."""
        if self.member is None:
            with open(self.path, 'rb') as stream:
                yield stream
        else:
            with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as stream:
                yield stream


def find_subsets(root: str | os.PathLike) -> dict[str, SubsetSource]:
    """Every LV-Eval subset under ``root``, at any depth, plain files preferred over zip members.

    Two plain files (or two zip members) for one subset are an error: silently picking one could
    score the wrong data.
    """
    root = Path(root)
    if not root.is_dir():
        raise LVEvalDataError(f'LV-Eval data folder {shown(root)} does not exist. {GET_DATA_HINT}')
    plain: dict[str, list[SubsetSource]] = {}
    zipped: dict[str, list[SubsetSource]] = {}
    for folder, files in walk_regular(root):
        for filename in files:
            path = folder / filename
            subset = subset_of_file(filename)
            if subset:
                plain.setdefault(subset, []).append(SubsetSource(path))
            elif filename.endswith('.zip'):
                for member in _zip_members(path):
                    zipped.setdefault(subset_of_file(member), []).append(SubsetSource(path, member))
    found = {}
    for subset in {**zipped, **plain}:
        candidates = plain.get(subset) or zipped[subset]
        if len(candidates) > 1:
            raise LVEvalDataError(
                f'Subset {subset} is present {len(candidates)} times under {shown(root)}: '
                f'{", ".join(map(str, candidates))}. Keep one copy.'
            )
        found[subset] = candidates[0]
    return found


def locate_in_zip(archive: Path, subset: str) -> SubsetSource:
    """The member of one downloaded zip that holds ``subset``."""
    for member in _zip_members(archive):
        if subset_of_file(member) == subset:
            return SubsetSource(archive, member)
    raise LVEvalDataError(f'{archive} has no {subset}.jsonl; download it again. {GET_DATA_HINT}')


def _zip_members(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as archive:
            return [name for name in archive.namelist() if subset_of_file(name)]
    except zipfile.BadZipFile as exc:
        raise LVEvalDataError(
            f'{path} is not a readable zip archive ({exc}); download it again.'
        ) from exc


def locate(root: str | os.PathLike, subset: str) -> SubsetSource:
    """The source of one subset, or an error that says what is missing and how to get it."""
    split_subset(subset)
    found = find_subsets(root)
    if subset not in found:
        raise LVEvalDataError(
            f'LV-Eval subset {subset} ({subset}.jsonl) not found under {shown(root)}. '
            f'{GET_DATA_HINT}'
        )
    return found[subset]


class _Digesting:
    """A read-only stream that hashes the bytes it hands on: the file's content digest comes
    from the one parse, with no second read."""

    def __init__(self, stream: IO[bytes], digest) -> None:
        self.stream, self.digest = stream, digest
        self.closed = False  # Arrow checks it before reading

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.digest.update(chunk)
        return chunk


def _parse(source: SubsetSource, block_size: int) -> tuple[pa.Table, str]:
    """The table and the digest of the bytes it came from."""
    # One thread: measured on a 90 MB subset, Arrow's thread pool kept 5x the file in flight and
    # was no faster than a single reader (bench/bench_loader.py).
    options = pa_json.ReadOptions(use_threads=False, block_size=block_size)
    digest = hashlib.sha1(usedforsecurity=False)  # a fingerprint; the fastest here
    with source.open() as stream:
        table = pa_json.read_json(
            _Digesting(stream, digest), read_options=options, parse_options=_PARSE_OPTIONS
        )
    return table, digest.hexdigest()


def _longest_line(source: SubsetSource, chunk_size: int = 16 << 20) -> int:
    """Bytes in the longest line, from a streaming pass (nothing is decoded or kept)."""
    longest = current = 0
    with source.open() as stream:
        while chunk := stream.read(chunk_size):
            pieces = chunk.split(b'\n')
            current += len(pieces[0])
            if len(pieces) > 1:
                longest = max(longest, current, *map(len, pieces[1:-1]))
                current = len(pieces[-1])
    return max(longest, current)


def read_subset(source: SubsetSource) -> pa.Table:
    """Parse one subset into an Arrow table (input, context, answers, answer_keywords).

    Missing ``answer_keywords`` (some loogle releases) become ``''``, which skips the keyword gate.
    The digest of the file's bytes is the table's ``digest`` (schema metadata): the data's
    fingerprint in caches and in the results' provenance.
    """
    try:
        try:
            table, digest = _parse(source, BLOCK_SIZE)
        except pa.ArrowInvalid as exc:
            if _STRADDLING not in str(exc):
                raise
            table, digest = _parse(source, _longest_line(source) + 1)
        table.validate(full=True)  # the reader does not check UTF-8 inside strings
    except FileNotFoundError as exc:
        raise LVEvalDataError(f'{source} does not exist. {GET_DATA_HINT}') from exc
    except _DAMAGED_ZIP as exc:
        raise LVEvalDataError(
            f'{source}: the zip archive is damaged ({exc}); download it again. {GET_DATA_HINT}'
        ) from exc
    except pa.ArrowInvalid as exc:
        _raise_first_problem(source, fallback=str(exc))
    if table.num_rows == 0:
        raise LVEvalDataError(f'{source} holds no records; download it again. {GET_DATA_HINT}')
    if (
        any(table[name].null_count for name in ('input', 'context', 'answers'))
        or pa.compute.min(pa.compute.list_value_length(table['answers'])).as_py() == 0
    ):
        _raise_first_problem(source, fallback='a required field is missing, null or empty')
    keywords = table['answer_keywords'].fill_null('')
    table = table.set_column(
        table.schema.get_field_index('answer_keywords'), 'answer_keywords', keywords
    )
    return table.replace_schema_metadata({DIGEST: digest})


def table_digest(table: pa.Table) -> str:
    """The content digest ``read_subset`` recorded."""
    return table.schema.metadata[DIGEST.encode()].decode()


def _raise_first_problem(source: SubsetSource, fallback: str) -> None:
    """Re-read ``source`` line by line and raise an error naming the first bad line."""
    records = 0
    try:
        with source.open() as stream:
            for line_number, raw in enumerate(stream, 1):
                try:
                    line = raw.decode('utf-8')
                except UnicodeDecodeError as exc:
                    line, problem = '', f'not UTF-8 text ({exc.reason} at byte {exc.start})'
                else:
                    problem = record_problem(line)
                if problem:
                    raise LVEvalDataError(
                        f'{source}, line {line_number}: {problem}. Fix or '
                        f're-download the file. {GET_DATA_HINT}'
                    )
                records += bool(line.strip())
    except _DAMAGED_ZIP as exc:
        raise LVEvalDataError(
            f'{source}: the zip archive is damaged ({exc}); download it again. {GET_DATA_HINT}'
        ) from exc
    if not records:
        raise LVEvalDataError(f'{source} holds no records; download it again. {GET_DATA_HINT}')
    raise LVEvalDataError(f'{source} could not be read: {fallback}')


def record_problem(line: str) -> Optional[str]:
    """What is wrong with one JSON line of an LV-Eval file, or None (blank lines are fine)."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return f'not valid JSON ({exc.msg} at column {exc.colno})'
    if not isinstance(record, dict):
        return f'expected a JSON object, found {type(record).__name__}'
    for name in REQUIRED_STRING_FIELDS:
        if not isinstance(record.get(name), str):
            return f'field "{name}" must be a string, found {_describe(record.get(name), name, record)}'
    answers = record.get('answers')
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        return f'field "answers" must be a non-empty list of strings, found {_describe(answers, "answers", record)}'
    keywords = record.get('answer_keywords')
    if keywords is not None and not isinstance(keywords, str):
        return f'field "answer_keywords" must be a string, found {type(keywords).__name__}'
    return None


def _describe(value: object, name: str, record: dict) -> str:
    return 'nothing (field missing)' if name not in record else repr(value)[:60]


@dataclass
class SubsetReport:
    """What ``lveval data check`` says about one subset: an official one (found or missing) or
    one at another level found in the folder."""

    subset: str
    expected: Optional[int]  # records of the official release; None for a non-official level
    source: Optional[SubsetSource] = None
    records: int = 0
    problem: Optional[str] = None
    synthetic: bool = False  # beside the mark of ``lveval data synth``: fewer records on purpose

    @property
    def official(self) -> bool:
        return self.expected is not None

    @property
    def ok(self) -> bool:
        return (
            self.source is not None
            and self.problem is None
            and (not self.official or self.synthetic or self.records == self.expected)
        )


def check_folder(root: str | os.PathLike) -> Iterator[SubsetReport]:
    """Read every subset under ``root`` once: the 55 official ones (missing ones reported, unless
    the folder holds no subset at an official level, as a builder's output at 512k) and any at
    other levels, with record counts and problems."""
    found = find_subsets(root)
    parsed = [split_subset(subset) for subset in found]
    release = any(level in LEVELS for _, level in parsed)
    for task in TASKS:
        levels = by_size(
            set(LEVELS) | {level for found_task, level in parsed if found_task is task}
        )
        for level in levels:
            subset = task.subset(level)
            report = SubsetReport(
                subset, task.qa_pairs if level in LEVELS else None, found.get(subset)
            )
            if report.source is None:
                if not release:
                    continue
                report.problem = 'missing'
            else:
                try:
                    report.records = read_subset(report.source).num_rows
                except LVEvalDataError as exc:
                    report.problem = str(exc)
                else:
                    report.synthetic = is_synthetic(report.source.path.parent)
                    if report.official and not report.synthetic and report.records != task.qa_pairs:
                        report.problem = (
                            f'{report.records} records, the official release has {task.qa_pairs}'
                        )
            yield report


def default_data_dir() -> str:
    """``$LVEVAL_DATA_DIR`` or ``./data/LVEval``, the folder configs read from by default; set but
    empty is an error naming the variable."""
    return folder_from_env(DATA_DIR_ENV, os.path.join('data', 'LVEval'), LVEvalDataError)


def download_from_hub(dataset: str, cache_dir: Optional[str] = None) -> Path:
    """Fetch ``{dataset}.zip`` from the Hugging Face hub (plain file download, no remote code)."""
    try:
        from huggingface_hub import hf_hub_download

        return Path(
            hf_hub_download(HF_REPO, f'{dataset}.zip', repo_type='dataset', cache_dir=cache_dir)
        )
    except Exception as exc:  # offline clusters land here: say what to do instead
        raise LVEvalDataError(
            f'Could not download {dataset}.zip from the Hugging Face hub ({exc}). {GET_DATA_HINT}'
        ) from exc
