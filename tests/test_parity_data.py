"""tests/data holds what the suite reads of ../shared, and each copy equals its source: whole
files byte for byte, the gzipped file unpacked, book heads as the stated slice, paper excerpts as
the stated lines. Without ../shared only the listing is checked, and the rest skips, naming it."""

import gzip
from pathlib import Path

import pytest
from parity_data import (
    BOOK_SLICES,
    DATA,
    GZIPPED,
    PAPER_EXCERPTS,
    PUNKT_TAB,
    REFERENCE_FILES,
    SHARED,
    WHOLE_FOLDERS,
    book_slice,
    copies,
    golden_files,
    paper_excerpt,
)

PUBLISHED = Path(__file__).resolve().parents[1] / 'opencompass_lveval' / 'leaderboard' / 'data'


def need_shared(what: str) -> Path:
    if not SHARED.is_dir():
        pytest.skip(f'../shared is absent ({SHARED}): {what} is compared with it there')
    return SHARED


def test_tests_data_holds_exactly_the_listed_copies():
    present = {
        path.relative_to(DATA).as_posix()
        for path in DATA.rglob('*')
        if path.is_file() and path.relative_to(DATA).as_posix() != 'README.md'
    }
    assert present == set(copies())
    # LV-Eval: 55 prediction files, 2 case files, 2 results, README; the READMEs and quirks of the
    # whole folder; RULER 30 data files, 13 scorer files and logs; LongBench v2; MRCR; the
    # stand-in inputs (5) and the tokenizer folder (4).
    assert len(golden_files(DATA)) == 177
    readme = (DATA / 'README.md').read_text('utf-8')
    listed = (*REFERENCE_FILES, *(f'{f}/' for f in WHOLE_FOLDERS), *(f'{n}.gz' for n in GZIPPED))
    listed = (*listed, *BOOK_SLICES)
    assert all(f'`{name}`' in readme for name in (*listed, *PAPER_EXCERPTS))
    assert sum(path.stat().st_size for path in DATA.rglob('*') if path.is_file()) < 24_000_000


def test_golden_and_reference_copies_are_byte_identical():
    shared = need_shared('golden/ and reference/ (stand_in, tokenizers)')
    assert golden_files(DATA) == golden_files(shared)
    for relative in (*REFERENCE_FILES, *golden_files(shared)):
        assert (DATA / relative).read_bytes() == (shared / relative).read_bytes(), relative


@pytest.mark.parametrize('relative', GZIPPED)
def test_gzipped_copies_unpack_to_their_source(relative):
    shared = need_shared(relative)
    assert (
        gzip.decompress((DATA / f'{relative}.gz').read_bytes()) == (shared / relative).read_bytes()
    )


@pytest.mark.parametrize('relative', BOOK_SLICES)
def test_book_slices_are_the_head_of_their_book_up_to_a_break(relative):
    source = (need_shared(relative) / relative).read_bytes()
    copy = (DATA / relative).read_bytes()
    assert copy == book_slice(source, BOOK_SLICES[relative]) and source.startswith(copy)
    assert copy == source or copy.endswith(b'\n')


@pytest.mark.parametrize('relative', PAPER_EXCERPTS)
def test_paper_excerpts_are_the_stated_lines(relative):
    source = (need_shared(relative) / relative).read_text('utf-8')
    excerpt = (DATA / relative).read_text('utf-8')
    assert excerpt == paper_excerpt(source, PAPER_EXCERPTS[relative])
    assert all(block in source for block in excerpt.rstrip('\n').split('\n[...]\n'))


@pytest.mark.parametrize('name', ['published_lveval.csv', 'published_adaleval.csv'])
def test_shipped_published_results_are_byte_identical(name):
    shared = need_shared(f'the shipped {name} (../shared/reference)')
    assert (PUBLISHED / name).read_bytes() == (shared / 'reference' / name).read_bytes()


@pytest.mark.parametrize('relative', PUNKT_TAB)
def test_punkt_tab_copies_are_nltk_datas(relative):
    """Not from ../shared: checked by the sha256 of nltk_data's punkt_tab files."""
    import hashlib

    assert hashlib.sha256((DATA / relative).read_bytes()).hexdigest() == PUNKT_TAB[relative]
