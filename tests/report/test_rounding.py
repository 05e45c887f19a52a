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


def test_depth_map_counts_are_black_on_light_cells_and_white_on_dark_ones():
    import matplotlib

    from opencompass_lveval.report.plots import ink

    shades = matplotlib.colormaps['RdYlGn']
    assert ink(shades(0.0)) == 'white' and ink(shades(1.0)) == 'white'  # dark red, dark green
    assert ink(shades(0.5)) == 'black' and ink((1, 1, 1, 1)) == 'black'  # yellow, white
    assert ink((0, 0, 0, 1)) == 'white'


def test_page_lines_never_share_a_colour_between_measured_and_published_rows():
    from opencompass_lveval.leaderboard.board import Row
    from opencompass_lveval.leaderboard.html import PALETTE, PUBLISHED_PALETTE, line_colors

    rows = [Row(f'm{i}', 'measured', f'm{i}') for i in range(3)]
    rows += [Row(f'p{i}', 'published', f'p{i}') for i in range(4)]
    colors = line_colors(rows)
    assert colors[:3] == list(PALETTE[:3]) and colors[3:] == list(PUBLISHED_PALETTE[:4])
    assert not set(PALETTE) & set(PUBLISHED_PALETTE)
