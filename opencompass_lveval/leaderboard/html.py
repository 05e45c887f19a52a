"""The board as one self-contained HTML page: no network, no external file.

Every benchmark's tables, sortable (click a header; ``#sort=32k`` or ``#sort=32k:asc`` in the
address sorts the headline table on load through the same handler), published rows styled apart;
the headline table (LV-Eval's Overall by level) with each row's provenance in a fold-out and its
score-by-length plot as inline SVG; the missing results with their first error line.
"""

from __future__ import annotations

import math
from html import escape
from typing import NamedTuple, Optional

from ..framework import benchmarks
from ..report.intervals import shown as interval_text
from ..report.tables import MEASURED, PUBLISHED, SYNTHETIC, BoardTable
from .board import Board, Row
from .writers import INTRO, cell, line_status, status

# Twelve colours told apart on white (matplotlib's ten, black, teal), taken in turn by the plot's
# lines; the line style says the row's kind. Past twelve lines the colours come round again with
# each kind's next dash pattern, so no two of up to 36 lines share both.
PALETTE = (
    '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b',
    '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#000000', '#008080',
)  # fmt: skip
DASHES = {
    MEASURED: ('', '12,3', '12,3,2,3'),
    PUBLISHED: ('6,3', '6,3,1,3', '6,3,1,3,1,3'),
    SYNTHETIC: ('1,4', '1,4,6,4', '1,8'),
}
# Synthetic rows test the pipeline, not a model: faded and drawn first, under every other line.
OPACITY = {SYNTHETIC: 0.45}
DRAWN = {SYNTHETIC: 0, PUBLISHED: 1, MEASURED: 2}


class LineStyle(NamedTuple):
    color: str
    dash: str
    opacity: float = 1.0


def line_styles(rows: list[Row]) -> list[LineStyle]:
    """A style per plotted row, in the rows' order: the next colour, the kind's dash (its next
    one each time the colours come round), faded for synthetic rows beside others (with nothing
    else on the plot, as on a demo's board, faded lines would look like an empty plot)."""
    alone = all(row.kind == SYNTHETIC for row in rows)
    return [
        LineStyle(
            PALETTE[number % len(PALETTE)],
            DASHES[row.kind][number // len(PALETTE) % len(DASHES[row.kind])],
            1.0 if alone else OPACITY.get(row.kind, 1.0),
        )
        for number, row in enumerate(rows)
    ]


def plot_key(kinds: set[str]) -> str:
    """What the plot's line styles mean, for the kinds it draws."""
    said = {
        MEASURED: 'solid lines: measured rows',
        PUBLISHED: "dashed lines: the papers' published numbers",
        SYNTHETIC: 'dotted, faded lines marked "synthetic data" on the line, drawn under the '
        'others: rows measured on synthetic data, which test the pipeline, not a model, and '
        'are no score to read against the others',
    }
    if kinds == {SYNTHETIC}:
        said[SYNTHETIC] = (
            'dotted lines marked "synthetic data" on the line: rows measured on synthetic data, '
            'which test the pipeline, not a model'
        )
    parts = [said[kind] for kind in (MEASURED, PUBLISHED, SYNTHETIC) if kind in kinds]
    return 'On the plot, ' + '; '.join(parts) + '. Each line has its own colour.'


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th { background: #f4f4f4; cursor: pointer; user-select: none; }
td.label, th.label { text-align: left; }
tr.published { background: #f7f2e6; font-style: italic; color: #555; }
tr.incomplete td.status { color: #b00; }
.badge { font-size: 0.75em; background: #e0c68a; border-radius: 3px; padding: 0 0.3em; }
details { text-align: left; font-size: 0.85em; }
th.sorted-desc::after { content: " \\25BC"; } th.sorted-asc::after { content: " \\25B2"; }
span.interval { font-size: 0.75em; color: #777; }
table.depthmap td { width: 3.2em; text-align: center; font-size: 0.8em; }
"""

SCRIPT = """
function sortBy(header, ascending) {
  const table = header.closest('table');
  const column = Array.from(header.parentNode.children).indexOf(header);
  const numeric = header.dataset.type !== 'text';
  const rows = Array.from(table.tBodies[0].rows);
  const key = (row) => {
    const value = row.cells[column].dataset.value;
    if (!numeric) return value;
    return value === '' ? (ascending ? Infinity : -Infinity) : parseFloat(value);
  };
  // Rows on synthetic data stay after every other row, in either order (the page's intro).
  const syntheticLast = document.body.dataset.syntheticLast === 'true';
  const last = (row) => (syntheticLast && row.classList.contains('synthetic') ? 1 : 0);
  rows.sort((a, b) => {
    if (last(a) !== last(b)) return last(a) - last(b);
    const x = key(a), y = key(b);
    const order = numeric ? x - y : String(x).localeCompare(String(y));
    return ascending ? order : -order;
  });
  rows.forEach((row) => table.tBodies[0].appendChild(row));
  table.querySelectorAll('th').forEach((th) => th.classList.remove('sorted-asc', 'sorted-desc'));
  header.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
  table.dataset.sortedBy = header.dataset.col + (ascending ? ':asc' : ':desc');
}
document.querySelectorAll('table.sortable th[data-col]').forEach((header) => {
  header.addEventListener('click', () => {
    const descending = header.classList.contains('sorted-desc');
    sortBy(header, header.dataset.type === 'text' ? !header.classList.contains('sorted-asc')
                                                   : descending);
  });
});
const wanted = /^#sort=([^:]+)(:asc)?$/.exec(decodeURIComponent(location.hash));
if (wanted) {
  const header = document.querySelector(`table.sortable th[data-col="${wanted[1]}"]`);
  if (header) {
    if (wanted[2]) { header.classList.add('sorted-desc'); }
    header.click();
  }
}
"""


def _value(value: Optional[float]) -> str:
    return '' if value is None else f'{value:.4f}'


def _interval(found) -> str:
    """A cell's interval as text of the cell, after its value: read on the page and by
    anything that reads the page's text, not only shown on hover."""
    return f' <span class="interval">{escape(interval_text(found).strip())}</span>' if found else ''


def _provenance(row: Row) -> str:
    items = ''.join(
        f'<dt>{escape(key)}</dt><dd>{escape(", ".join(v) if isinstance(v, list) else str(v))}</dd>'
        for key, v in row.provenance.items()
        if v
    )
    return f'<details><summary>{escape(row.kind)}</summary><dl>{items}</dl></details>'


def _table(table: BoardTable, first: bool) -> str:
    """A sortable table; the headline one (the first) with status and provenance columns and
    its columns named plainly (``#sort=16k``), the others' prefixed by the table's key."""

    def col(name: str) -> str:
        return escape(name if first else f'{table.key}-{name}')

    head = (
        f'<tr><th class="label" data-col="model" data-type="text">{escape(table.label)}</th>'
        + ''.join(f'<th data-col="{col(c)}">{escape(c)}</th>' for c in table.header)
        + (
            '<th data-col="status" data-type="text">status</th><th>provenance</th>'
            if table.headline
            else ''
        )
        + '</tr>'
    )
    body = []
    for line in table.lines:
        row = line.row
        classes = [row.kind] + ([] if row.complete else ['incomplete'])
        badge = ' <span class="badge">published</span>' if row.kind == PUBLISHED else ''
        shown = row.model if row.kind == PUBLISHED else row.label
        notes = line.notes or [None] * len(line.values)
        intervals = line.intervals or [None] * len(line.values)
        cells = ''.join(
            f'<td data-value="{_value(v)}"'
            + (f' data-interval="{escape(interval_text(i).strip())}"' if i else '')
            + (f' title="{escape(table.note_label)}: {cell(n)}"' if table.note_label else '')
            + f'>{cell(v)}{_interval(i)}</td>'
            for v, n, i in zip(line.values, notes, intervals)
        )
        extra = (
            f'<td class="status" data-value="{escape(status(row))}">{escape(line_status(line))}'
            f'</td><td>{_provenance(row)}</td>'
            if table.headline
            else ''
        )
        body.append(
            f'<tr class="{" ".join(classes)}" data-label="{escape(row.label)}">'
            f'<td class="label" data-value="{escape(row.label)}">{escape(shown)}{badge}</td>'
            f'{cells}{extra}</tr>'
        )
    note = f'<p>{escape(table.note)}</p>' if table.note else ''
    return (
        f'<h{table.heading}>{escape(table.title)}</h{table.heading}>{note}'
        + (_plot(table) if table.plotted else '')
        + f'<table id="{escape(table.key)}" class="sortable"><thead>{head}</thead>'
        f'<tbody>{"".join(body)}</tbody></table>'
    )


class _Frame(NamedTuple):
    """Where a plot's values land: ``x`` of a column index, ``y`` of a value."""

    left: float
    top: float
    inner_w: float
    inner_h: float
    xs: tuple[float, ...]  # each column's x
    top_value: float

    def x(self, i: int) -> float:
        return self.xs[i]

    def y(self, v: float) -> float:
        return self.top + self.inner_h * (1 - v / self.top_value)


def column_xs(left: float, width: float, columns: int, positions=None) -> tuple[float, ...]:
    """Each plotted column's x: evenly spaced, or at ``positions`` (lengths in tokens) on a log
    scale from the first to the last."""
    if not positions or columns < 2 or min(positions) <= 0 or positions[0] == positions[-1]:
        return tuple(left + i * width / max(1, columns - 1) for i in range(columns))
    low, high = math.log(positions[0]), math.log(positions[-1])
    return tuple(left + width * (math.log(p) - low) / (high - low) for p in positions)


def _plot(table: BoardTable) -> str:
    """The table's leading (length) columns, one line per row (``line_styles``; synthetic rows
    drawn first, so under the others), as inline SVG with its key."""
    columns = table.header[: table.plotted]
    lines = [
        line for line in table.lines if any(v is not None for v in line.values[: table.plotted])
    ]
    if not lines or not columns:
        return ''
    width, height, left, top, bottom = 780, 300, 50, 20, 40
    inner_w, inner_h = width - left - 290, height - top - bottom
    top_value = max(
        10.0, max(v for line in lines for v in line.values[: table.plotted] if v is not None)
    )
    top_value = 10 * -(-top_value // 10)
    xs = column_xs(left, inner_w, len(columns), table.positions)
    frame = _Frame(left, top, inner_w, inner_h, xs, top_value)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{max(height, top + 14 * len(lines) + 6)}" '  # room for every legend entry
        f'role="img" aria-label="{escape(table.title)}">'
    ]
    for tick in range(0, int(top_value) + 1, max(10, int(top_value) // 5)):
        parts.append(
            f'<line x1="{left}" x2="{left + inner_w}" y1="{frame.y(tick):.1f}" '
            f'y2="{frame.y(tick):.1f}" stroke="#eee"/><text x="{left - 6}" '
            f'y="{frame.y(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick}</text>'
        )
    for i, column in enumerate(columns):
        parts.append(
            f'<text x="{frame.x(i):.1f}" y="{height - bottom + 16}" font-size="11" '
            f'text-anchor="middle">{escape(column)}</text>'
        )
    styles = line_styles([line.row for line in lines])
    for number in sorted(range(len(lines)), key=lambda n: DRAWN[lines[n].row.kind]):
        parts += _plot_line(frame, number, lines[number], table.plotted, styles[number])
    parts.append(
        f'<text x="{left + inner_w / 2}" y="{height - 4}" font-size="11" '
        f'text-anchor="middle">{escape(table.axis)}</text>'
        f'<text transform="translate(12,{top + inner_h / 2:.0f}) rotate(-90)" font-size="11" '
        f'text-anchor="middle">{escape(table.metric)} (%)</text></svg>'
    )
    caption = plot_key({line.row.kind for line in lines})
    return f'<figure><figcaption>{escape(caption)}</figcaption>{"".join(parts)}</figure>'


def _plot_line(frame: _Frame, number: int, line, plotted: int, style: LineStyle) -> list[str]:
    """One row's line, its error bars and its legend entry (the ``number``-th)."""
    x, y, top_value = frame.x, frame.y, frame.top_value
    row = line.row
    points = ' '.join(
        f'{x(i):.1f},{y(v):.1f}' for i, v in enumerate(line.values[:plotted]) if v is not None
    )
    look = f'stroke="{style.color}" stroke-width="2"' + (
        f' stroke-dasharray="{style.dash}"' if style.dash else ''
    )
    look += f' opacity="{style.opacity}"' if style.opacity != 1.0 else ''
    parts = [
        f'<polyline class="{escape(row.kind)}" data-label="{escape(row.label)}" '
        f'points="{points}" fill="none" {look}><title>{escape(row.label)}</title></polyline>'
    ]
    first = next((i, v) for i, v in enumerate(line.values[:plotted]) if v is not None)
    if row.kind == SYNTHETIC:  # said on the line itself, not only in the legend
        parts.append(
            f'<text class="synthetic-mark" x="{x(first[0]) + 4:.1f}" y="{y(first[1]) - 5:.1f}" '
            f'font-size="10" fill="{style.color}">synthetic data</text>'
        )
    parts += [  # a dot at each point: a dotted line alone still shows where its values are
        f'<circle class="point" cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{style.color}"'
        + (f' opacity="{style.opacity}"/>' if style.opacity != 1.0 else '/>')
        for i, v in enumerate(line.values[:plotted])
        if v is not None
    ]
    for i, bounds in enumerate((line.intervals or [])[:plotted]):
        if bounds is not None and line.values[i] is not None:
            parts.append(
                f'<line class="error-bar" x1="{x(i):.1f}" x2="{x(i):.1f}" '
                f'y1="{y(min(bounds[1], top_value)):.1f}" y2="{y(max(bounds[0], 0)):.1f}" '
                f'stroke="{style.color}" stroke-width="1.5" opacity="{0.6 * style.opacity:.2f}"/>'
            )
    ly, legend_x = frame.top + 14 * number, frame.left + frame.inner_w
    parts.append(
        f'<line class="legend" x1="{legend_x + 15}" x2="{legend_x + 35}" y1="{ly}" '
        f'y2="{ly}" {look}/><text x="{legend_x + 40}" y="{ly + 4}" font-size="11">'
        f'{escape(row.label[:40])}</text>'
    )
    return parts


def _color(value: Optional[float]) -> str:
    """Red (0) to green (100) through yellow, as the report's PNG maps."""
    if value is None:
        return '#fff'
    hue = 120 * max(0.0, min(1.0, value / 100))
    return f'hsl({hue:.0f}, 70%, 70%)'


def _depth_map(label: str, found) -> str:
    """One row's depth map as a coloured table: depth bins by size, records per cell in the
    tooltip."""
    head = '<tr><th class="label">' + escape(found.axis) + '</th>'
    head += ''.join(f'<th>{escape(c)}</th>' for c in found.columns) + '</tr>'
    body = ''.join(
        f'<tr><td class="label">{escape(name)}</td>'
        + ''.join(
            f'<td data-value="{_value(v)}" title="{n} records" '
            f'style="background:{_color(v)}">{"" if v is None else f"{v:.0f}"}</td>'
            for v, n in zip(values, counts)
        )
        + '</tr>'
        for name, values, counts in zip(found.rows, found.values, found.counts)
    )
    return (
        f'<figure><figcaption>{escape(label)}: {escape(found.dataset)}{_metric(found)} '
        f'({found.placed} of '
        f'{found.records} records placed)</figcaption><table class="depthmap" '
        f'data-row="{escape(label)}" data-dataset="{escape(found.dataset)}"><thead>{head}</thead>'
        f'<tbody>{body}</tbody></table></figure>'
    )


def _metric(found) -> str:
    """What a depth map is of, where it is not the score: `` wrong_key``."""
    return '' if found.metric == 'score' else f' {escape(found.metric)}'


def _depth_legends(names) -> str:
    """The way each benchmark named (those on the board) places a record: ``for LV-Eval the
    tenth of the context...``."""
    return ', '.join(
        b.depth_legend for b in benchmarks.BENCHMARKS if b.depth_legend and b.name in names
    )


def depth_section(maps: list[tuple[str, object]], names=None) -> str:
    """The rows' depth maps, with the legends of the benchmarks ``names`` (those the board
    shows; default every one)."""
    if not maps:
        return ''
    legends = _depth_legends(names or {b.name for b in benchmarks.BENCHMARKS})
    return (
        '<h2 id="depth-maps">Score by where the answer is</h2><p>Mean score (%) by where the '
        f'answer sits, by length{f": {legends}" if legends else ""}; empty where no record '
        'falls. Hover a cell for its record count.</p>'
        + ''.join(_depth_map(label, found) for label, found in maps)
    )


def page(
    board: Board, tables: list[BoardTable], generated: str, maps: Optional[list] = None
) -> str:
    missing = ''
    if board.missing:
        missing = (
            '<h2>Missing results</h2><table><thead><tr><th class="label">model</th>'
            '<th class="label">dataset</th><th class="label">first error line</th></tr>'
            '</thead><tbody>'
            + ''.join(
                f'<tr><td class="label">{escape(m)}</td><td class="label">{escape(d)}</td>'
                f'<td class="label">{escape(why)}</td></tr>'
                for m, d, why in board.missing
            )
            + '</tbody></table>'
        )
    conflicts = ''.join(
        f'<li>{escape(label)}: {escape(note)}</li>' for label, note in board.conflicts
    )
    ordered = sorted(tables, key=lambda table: not table.headline)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<title>Long-context leaderboard</title><style>{STYLE}</style></head>'
        # the page's sort keeps rows on synthetic data after the others (``Board.synthetic_last``)
        + ('<body data-synthetic-last="true">' if board.synthetic_last else '<body>')
        + f'<h1>Long-context leaderboard</h1><p>Generated {escape(generated)}. {escape(INTRO)}</p>'
        + ''.join(_table(table, number == 0) for number, table in enumerate(ordered))
        + depth_section(maps or [], {name for name, sizes in board.sizes.items() if sizes})
        + missing
        + (f'<h2>Conflicts</h2><ul>{conflicts}</ul>' if conflicts else '')
        + f'<script>{SCRIPT}</script></body></html>\n'
    )
