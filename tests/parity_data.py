"""The official data the tests read, carried in ``tests/data`` so that a clone tests itself.

``tests/data`` mirrors ``../shared`` path for path, in four kinds of copy:

- whole files, byte for byte: the official constants and all of ``golden/`` (every LV-Eval
  prediction file, the official ``result.json`` and ``result.csv``, all 2,106 LV-Eval cases and
  the 600 Ada-LEval cases; RULER's, LongBench v2's and MRCR's golden sets), the stand-in inputs
  those were made from (``reference/stand_in``) and the tokenizer folder they were made with
  (``reference/tokenizers``);
- gzipped whole files: the real Ada-LEval ``stackselect_1k.json`` (3.1 MB, 1.0 MB gzipped), kept
  whole because the tests check the official record counts and the paper's random-guess figure;
- book slices: the head of each book a test names, cut at a paragraph (or line) break (builders wrap
  around their books, so a head builds contexts of any length);
- paper excerpts: the lines of the LV-Eval paper that tests compare prompts and needles with.

``tests/test_parity_data.py`` checks every copy against its source where ``../shared`` is present;
``python tests/parity_data.py`` writes them all again from it.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / 'shared'
DATA = Path(__file__).resolve().parent / 'data'

REFERENCE_FILES = ('reference/lveval_official.json', 'reference/adaleval_official.json')
# Copied whole, every file: the golden outputs; the stand-in inputs the RULER, LongBench v2 and
# MRCR golden sets were made from; the exact tokenizer folder they were made with.
GOLDEN = 'golden'
WHOLE_FOLDERS = (GOLDEN, 'reference/stand_in', 'reference/tokenizers')
GZIPPED = ('data/adaleval/stackselect_1k.json',)  # stored as NAME.gz
# The heads of the books tests name, at most this many bytes each (None: the whole book).
BOOK_SLICES = {
    'corpora/en/alice_in_wonderland.txt': None,
    'corpora/en/dracula.txt': 200_000,
    'corpora/en/frankenstein.txt': 200_000,
    'corpora/zh/xiyouji.txt': 360_000,
}
# Line ranges (1-based, inclusive) of the papers: Figure A10's judge prompts and the factrecall
# needle, question and confusing facts of the LV-Eval paper (v2).
PAPER_EXCERPTS = {'seeds/lveval_paper_v2.txt': ((605, 640), (765, 786))}
EXCERPT_GAP = '\n[...]\n'

# Not from ../shared: nltk_data's punkt_tab English model (RULER splits its essay haystack with
# it), as the llama-index-core 0.14.25 wheel on PyPI ships it (its punkt_tab.zip, sha256
# e57f6418...0106, is nltk_data's), with the package's README; checked by these sha256s.
PUNKT_TAB = {
    'reference/nltk_data/tokenizers/punkt_tab/README': (
        'd3251cae66a9359bd68c039e3a46172a05ca9df0b27dcdfa23ae594d68d27ec4'
    ),
    'reference/nltk_data/tokenizers/punkt_tab/english/abbrev_types.txt': (
        '92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779'
    ),
    'reference/nltk_data/tokenizers/punkt_tab/english/collocations.tab': (
        '8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf'
    ),
    'reference/nltk_data/tokenizers/punkt_tab/english/ortho_context.tab': (
        '4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c'
    ),
    'reference/nltk_data/tokenizers/punkt_tab/english/sent_starters.txt': (
        'f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac'
    ),
}

GOLDEN_CASES = 'golden/lveval/cases.jsonl'  # all 2,106 LV-Eval cases
OFFICIAL_RESULT = 'golden/lveval/official_result/result.json'
# One official prediction file per metric (qa_f1_score_with_gold_ans, qa_f1_score,
# qa_f1_zh_score, qa_f1_zh_score_with_gold_ans with the answer as keywords, ROUGE-L): the fast
# loop scores these; the slow tests score all 55.
METRIC_FILES = (
    'golden/lveval/hotpotwikiqa_mixup_16k.jsonl',
    'golden/lveval/factrecall_en_16k.jsonl',
    'golden/lveval/factrecall_zh_16k.jsonl',
    'golden/lveval/cmrc_mixup_16k.jsonl',
    'golden/lveval/dureader_mixup_16k.jsonl',
)


def golden_files(root: Path) -> list[str]:
    """Every file under ``root``'s folders copied whole, as paths relative to ``root``."""
    return sorted(
        p.relative_to(root).as_posix()
        for folder in WHOLE_FOLDERS
        for p in (root / folder).rglob('*')
        if p.is_file()
    )


def copies() -> tuple[str, ...]:
    """Every file tests/data holds besides its README."""
    return (
        *REFERENCE_FILES,
        *golden_files(DATA),
        *(f'{name}.gz' for name in GZIPPED),
        *BOOK_SLICES,
        *PAPER_EXCERPTS,
        *PUNKT_TAB,
    )


def data_json(relative: str):
    return json.loads((DATA / relative).read_text('utf-8'))


def data_lines(relative: str) -> list[str]:
    return (DATA / relative).read_text('utf-8').splitlines()


def cases_slice(lines: list[str]) -> list[str]:
    """Every tenth golden case, from the first: about 20 per dataset, 3 or 4 per subset."""
    return lines[::10]


def result_rows(official_result: dict) -> dict:
    """The rows of the official result.json for the metric files, in its order."""
    stems = {Path(name).stem for name in METRIC_FILES}
    return {subset: score for subset, score in official_result.items() if subset in stems}


def book_slice(source: bytes, limit: int | None) -> bytes:
    """The head of a book up to its last paragraph break within ``limit`` bytes, or its last line
    break for a book written without blank lines (xiyouji)."""
    if limit is None or len(source) <= limit:
        return source
    breaks = source.rfind(b'\n\n', 0, limit)
    return source[: breaks + 2] if breaks != -1 else source[: source.rindex(b'\n', 0, limit) + 1]


def paper_excerpt(source: str, ranges: tuple[tuple[int, int], ...]) -> str:
    lines = source.split('\n')
    return EXCERPT_GAP.join('\n'.join(lines[a - 1 : b]) for a, b in ranges) + '\n'


def gunzipped(relative: str, folder: Path) -> Path:
    """``tests/data/RELATIVE.gz`` unpacked into ``folder`` under its own name."""
    target = folder / Path(relative).name
    with gzip.open(DATA / f'{relative}.gz') as packed, open(target, 'wb') as out:
        shutil.copyfileobj(packed, out)
    return target


def refresh(shared: Path = SHARED, data: Path = DATA) -> None:
    """Write every copy again from ``../shared``."""

    def write(relative: str, content: bytes) -> None:
        (data / relative).parent.mkdir(parents=True, exist_ok=True)
        (data / relative).write_bytes(content)

    for folder in WHOLE_FOLDERS:
        shutil.rmtree(data / folder, ignore_errors=True)
    for relative in (*REFERENCE_FILES, *golden_files(shared)):
        write(relative, (shared / relative).read_bytes())
    for relative in GZIPPED:  # mtime 0 and no name: the same bytes on every refresh
        write(f'{relative}.gz', gzip.compress((shared / relative).read_bytes(), 9, mtime=0))
    for relative, limit in BOOK_SLICES.items():
        write(relative, book_slice((shared / relative).read_bytes(), limit))
    for relative, ranges in PAPER_EXCERPTS.items():
        excerpt = paper_excerpt((shared / relative).read_text('utf-8'), ranges)
        write(relative, excerpt.encode('utf-8'))


if __name__ == '__main__':
    refresh()
