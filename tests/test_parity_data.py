"""The copies of official data in the checkout equal their sources in ../shared: tests/data (the
parity data of tests/parity_data.py) and the published results the package ships."""

import json
from pathlib import Path

import pytest
from parity_data import (
    CASES_SLICE,
    COPIES,
    DATA,
    GOLDEN_CASES,
    OFFICIAL_RESULT,
    RESULT_ROWS,
    WHOLE_FILES,
    cases_slice,
    data_json,
    data_lines,
    need_shared,
    result_rows,
)

PUBLISHED = Path(__file__).resolve().parents[1] / 'opencompass_lveval' / 'leaderboard' / 'data'


def test_tests_data_holds_exactly_the_listed_copies():
    present = {
        path.relative_to(DATA).as_posix()
        for path in DATA.rglob('*')
        if path.is_file() and path.name != 'README.md'
    }
    assert present == set(COPIES)
    readme = (DATA / 'README.md').read_text('utf-8')
    assert all(f'`{name}`' in readme for name in COPIES)


@pytest.mark.parametrize('relative', WHOLE_FILES)
def test_whole_file_copies_are_byte_identical(relative):
    shared = need_shared(f'the source of tests/data/{relative} is compared with the copy')
    assert (DATA / relative).read_bytes() == (shared / relative).read_bytes()


def test_golden_case_slice_is_every_tenth_line_of_the_source():
    shared = need_shared(f'the source of tests/data/{CASES_SLICE} ({GOLDEN_CASES}) is compared')
    source = (shared / GOLDEN_CASES).read_text('utf-8').splitlines()
    assert len(source) == 2106
    assert data_lines(CASES_SLICE) == cases_slice(source)


def test_result_rows_are_the_official_result_of_the_copied_files():
    shared = need_shared(f'the source of tests/data/{RESULT_ROWS} ({OFFICIAL_RESULT}) is compared')
    official = json.loads((shared / OFFICIAL_RESULT).read_text('utf-8'))
    assert data_json(RESULT_ROWS) == result_rows(official)
    assert list(data_json(RESULT_ROWS)) == list(result_rows(official))


@pytest.mark.parametrize('name', ['published_lveval.csv', 'published_adaleval.csv'])
def test_shipped_published_results_are_byte_identical(name):
    shared = need_shared(f'the source of the shipped {name} (../shared/reference) is compared')
    assert (PUBLISHED / name).read_bytes() == (shared / 'reference' / name).read_bytes()
