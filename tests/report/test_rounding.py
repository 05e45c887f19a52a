"""One rounding rule: the same quantity shows the same number wherever it is printed."""

import pytest

from opencompass_lveval.report.writers import csv_cell, markdown_cell
from opencompass_lveval.rounding import rounded, shown

SCORES = [21.66, 42.21, 2.9, 22.17]  # official subset scores; their mean is 22.235


def test_an_average_summed_in_either_order_shows_one_number():
    forward, backward = sum(SCORES) / 4, sum(SCORES[::-1]) / 4
    assert forward != backward  # the float sums differ in their last bit ...
    assert f'{forward:.2f}' != f'{backward:.2f}'  # ... which '%.2f' turned into 22.24 and 22.23
    assert shown(forward) == shown(backward) == '22.24'  # half-up, once the noise is dropped
    assert markdown_cell(forward) == markdown_cell(backward) == '22.24'
    assert csv_cell(forward) == csv_cell(backward) == 22.24


@pytest.mark.parametrize(
    'value, expected',
    [(0.125, '0.13'), (2.675, '2.68'), (44.365, '44.37'), (-1.005, '-1.01'), (7.0, '7.00'),
     (99.99499999, '99.99'), (26.16, '26.16')],
)  # fmt: skip
def test_half_up_at_two_decimals(value, expected):
    assert shown(value) == expected and rounded(value) == float(expected)
