"""The board as one self-contained HTML page: no network, no external file.

A sortable table of LV-Eval Overall by level (click a header; ``#sort=32k`` or ``#sort=32k:asc``
in the address sorts on load through the same handler), published rows styled apart, each row's
provenance in a fold-out, the score-by-length plot as inline SVG, the Ada-LEval tables, and the
missing results with their first error line.
"""

from __future__ import annotations

from html import escape
from typing import Optional

from .board import PUBLISHED, Board, Row
from .writers import cell, status

PALETTE = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
           '#7f7f7f', '#bcbd22', '#17becf')  # fmt: skip

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
  rows.sort((a, b) => {
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


def _provenance(row: Row) -> str:
    items = ''.join(
        f'<dt>{escape(key)}</dt><dd>{escape(", ".join(v) if isinstance(v, list) else str(v))}</dd>'
        for key, v in row.provenance.items() if v
    )  # fmt: skip
    return f'<details><summary>{escape(row.kind)}</summary><dl>{items}</dl></details>'


def _overall_table(board: Board) -> str:
    levels = board.levels
    head = ('<tr><th class="label" data-col="model" data-type="text">model</th>'
            + ''.join(f'<th data-col="{lv}">{lv}</th>' for lv in levels)
            + '<th data-col="avg">avg</th><th data-col="status" data-type="text">status</th>'
            '<th>provenance</th></tr>')  # fmt: skip
    body = []
    for row in board.rows:
        if not (row.lveval or row.overall):
            continue
        classes = [row.kind] + ([] if row.complete else ['incomplete'])
        badge = ' <span class="badge">published</span>' if row.kind == PUBLISHED else ''
        shown = row.model if row.kind == PUBLISHED else row.label
        values = [row.overall.get(lv) for lv in levels] + [row.average(levels)]
        body.append(
            f'<tr class="{" ".join(classes)}" data-label="{escape(row.label)}">'
            f'<td class="label" data-value="{escape(row.label)}">{escape(shown)}{badge}</td>'
            + ''.join(f'<td data-value="{_value(v)}">{cell(v)}</td>' for v in values)
            + f'<td class="status" data-value="{escape(status(row))}">{escape(status(row))}</td>'
            f'<td>{_provenance(row)}</td></tr>'
        )
    return (f'<table id="lveval" class="sortable"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table>')  # fmt: skip


def _plot(board: Board) -> str:
    """Overall by level, one line per row (published dashed), as inline SVG."""
    rows = [r for r in board.rows if any(v is not None for v in r.overall.values())]
    if not rows or not board.levels:
        return ''
    width, height, left, top, bottom = 780, 300, 50, 20, 40
    inner_w, inner_h = width - left - 290, height - top - bottom
    top_value = max(10.0, max(v for r in rows for v in r.overall.values() if v is not None))
    top_value = 10 * -(-top_value // 10)
    step = inner_w / max(1, len(board.levels) - 1)

    def x(i: int) -> float:
        return left + i * step

    def y(v: float) -> float:
        return top + inner_h * (1 - v / top_value)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'role="img" aria-label="LV-Eval Overall by length level">']  # fmt: skip
    for tick in range(0, int(top_value) + 1, max(10, int(top_value) // 5)):
        parts.append(f'<line x1="{left}" x2="{left + inner_w}" y1="{y(tick):.1f}" '
                     f'y2="{y(tick):.1f}" stroke="#eee"/><text x="{left - 6}" y="{y(tick) + 4:.1f}"'
                     f' font-size="11" text-anchor="end">{tick}</text>')  # fmt: skip
    for i, level in enumerate(board.levels):
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 16}" font-size="11" '
                     f'text-anchor="middle">{level}</text>')  # fmt: skip
    for number, row in enumerate(rows):
        color = PALETTE[number % len(PALETTE)]
        points = ' '.join(f'{x(i):.1f},{y(v):.1f}' for i, lv in enumerate(board.levels)
                          if (v := row.overall.get(lv)) is not None)  # fmt: skip
        dash = ' stroke-dasharray="5,3"' if row.kind == PUBLISHED else ''
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" '
                     f'stroke-width="2"{dash}><title>{escape(row.label)}</title></polyline>')  # fmt: skip
        ly = top + 14 * number
        parts.append(f'<line x1="{left + inner_w + 15}" x2="{left + inner_w + 35}" y1="{ly}" '
                     f'y2="{ly}" stroke="{color}" stroke-width="2"{dash}/><text '
                     f'x="{left + inner_w + 40}" y="{ly + 4}" font-size="11">'
                     f'{escape(row.label[:40])}</text>')  # fmt: skip
    parts.append(f'<text x="{left + inner_w / 2}" y="{height - 4}" font-size="11" '
                 'text-anchor="middle">length level (words / characters)</text></svg>')  # fmt: skip
    return '<figure>' + ''.join(parts) + '</figure>'


def _adaleval_tables(board: Board) -> str:
    parts = []
    for task, settings in board.settings.items():
        head = ('<tr><th class="label" data-col="model" data-type="text">model</th>'
                + ''.join(f'<th data-col="{task}-{s}">{s}</th>' for s in settings) + '</tr>')  # fmt: skip
        body = []
        for row in board.rows:
            if not any(t == task for t, _ in row.adaleval):
                continue
            values = [row.adaleval.get((task, s), {}) for s in settings]
            body.append(
                f'<tr class="{row.kind}"><td class="label" data-value="{escape(row.label)}">'
                f'{escape(row.label)}</td>'
                + ''.join(f'<td data-value="{_value(v.get("accuracy"))}" title="instruction '
                          f'following: {cell(v.get("instruction_following"))}">'
                          f'{cell(v.get("accuracy"))}</td>' for v in values) + '</tr>'
            )  # fmt: skip
        parts.append(f'<h2>Ada-LEval {escape(task)}: accuracy by setting</h2>'
                     f'<table class="sortable"><thead>{head}</thead><tbody>{"".join(body)}'
                     '</tbody></table>')  # fmt: skip
    return ''.join(parts)


def page(board: Board, generated: str) -> str:
    missing = ''
    if board.missing:
        missing = ('<h2>Missing results</h2><table><thead><tr><th class="label">model</th>'
                   '<th class="label">dataset</th><th class="label">first error line</th></tr>'
                   '</thead><tbody>' + ''.join(
                       f'<tr><td class="label">{escape(m)}</td><td class="label">{escape(d)}</td>'
                       f'<td class="label">{escape(why)}</td></tr>' for m, d, why in board.missing)
                   + '</tbody></table>')  # fmt: skip
    conflicts = ''.join(
        f'<li>{escape(label)}: {escape(note)}</li>' for label, note in board.conflicts
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<title>Long-context leaderboard</title><style>{STYLE}</style></head><body>'
        f'<h1>Long-context leaderboard</h1><p>Generated {escape(generated)}. LV-Eval Overall at '
        'a level is the unweighted mean of the 11 datasets there, given only where all 11 have '
        "a result; published rows are the papers' numbers, shown apart from measured ones.</p>"
        f'<h2>LV-Eval: Overall by length level</h2>{_plot(board)}{_overall_table(board)}'
        f'{_adaleval_tables(board)}{missing}'
        + (f'<h2>Conflicts</h2><ul>{conflicts}</ul>' if conflicts else '')
        + f'<script>{SCRIPT}</script></body></html>\n'
    )
