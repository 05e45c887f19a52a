"""The papers' plots as PNG files (matplotlib, imported only when a plot is drawn)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def _pyplot():
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def save(figure, path: Path) -> None:
    """The figure as a PNG, renamed into place once written whole."""
    from ..files.atomic import atomic_path

    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=120, format='png')
    _pyplot().close(figure)


def y_limits(series: list[list]) -> tuple[float, float]:
    """From a little below 0, so that a line at 0 stays visible above the axis, to a little
    above the highest point (100 at the least for percentages near it)."""
    highest = max((v for values in series for v in values if v is not None), default=0.0)
    top = max(1.0, highest) * 1.05
    return -0.04 * top, top


def plot_lines(
    path: Path,
    title: str,
    x_labels: list[str],
    series: dict[str, list],
    x_label: str,
    y_label: str,
    dashed: Optional[dict[str, list]] = None,
    errors: Optional[dict[str, list]] = None,
    positions: Optional[list[float]] = None,
) -> None:
    """One line per series over the x labels (missing points skipped), with error bars where
    ``errors`` gives a (low, high) interval; dashed grey reference lines (chance) on top. The
    labels sit evenly spaced, or at ``positions`` (lengths in tokens) on a log axis."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.2))
    if positions:
        axes.set_xscale('log', base=2)
        axes.minorticks_off()
    positions = list(positions or range(len(x_labels)))
    for number, (label, values) in enumerate(series.items()):
        bounds = (errors or {}).get(label) or [None] * len(values)
        points = [(x, v, b) for x, v, b in zip(positions, values, bounds) if v is not None]
        (line,) = axes.plot(
            [p[0] for p in points], [p[1] for p in points], label=label, **line_look(number)
        )
        bars = [(x, v, b) for x, v, b in points if b is not None]
        if bars:
            axes.errorbar(
                [x for x, _, _ in bars],
                [v for _, v, _ in bars],
                # A score rounded to two decimals may sit a hair outside a degenerate interval.
                yerr=[
                    [max(0.0, v - b[0]) for _, v, b in bars],
                    [max(0.0, b[1] - v) for _, v, b in bars],
                ],
                fmt='none',
                ecolor=line.get_color(),
                capsize=3,
                alpha=0.7,
            )
    for label, values in (dashed or {}).items():
        points = [(x, v) for x, v in zip(positions, values) if v is not None]
        axes.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            linestyle='--',
            color='grey',
            label=label,
        )
    axes.set_xticks(positions, x_labels)
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    highs = [[b[1] if b else None for b in bounds] for bounds in (errors or {}).values()]
    axes.set_ylim(*y_limits([*series.values(), *(dashed or {}).values(), *highs]))
    axes.grid(alpha=0.3)
    axes.legend(fontsize='small')
    figure.tight_layout()
    save(figure, path)


MARKERS, DASHES = 'osD^v', ('-', '--', '-.', ':')


def line_look(number: int) -> dict:
    """The ``number``-th line's marker, dash and widths: each later one narrower and with
    smaller marks, so that lines on the same values (two baselines at 0) stay apart."""
    return {
        'marker': MARKERS[number % len(MARKERS)],
        'linestyle': DASHES[number % len(DASHES)],
        'linewidth': max(1.0, 3.0 - 0.6 * number),
        'markersize': max(4.0, 9.0 - 1.5 * number),
    }


def ink(rgba) -> str:
    """Black on light cells, white on dark ones (relative luminance, WCAG weights)."""
    red, green, blue = (
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]
    )
    return 'black' if 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.179 else 'white'


def plot_depth_maps(path: Path, label: str, maps: list) -> None:
    """Score by depth (rows, top = start of the context) and size (columns), one panel per
    dataset; each cell's record count printed in it, empty cells blank. Axes and titles in
    the benchmark's words: its levels and the metric mapped."""
    import numpy as np

    metric = maps[0].metric

    plt = _pyplot()
    figure, axes = plt.subplots(
        1, len(maps), figsize=(4.5 * len(maps) + 1, 4.6), squeeze=False, constrained_layout=True
    )
    for number, (axis, found) in enumerate(zip(axes[0], maps)):
        values = np.array([[np.nan if v is None else v for v in row] for row in found.values])
        image = axis.imshow(values, cmap='RdYlGn', vmin=0, vmax=100, aspect='auto')
        for (y, x), count in np.ndenumerate(np.array(found.counts)):
            if count:
                shade = image.cmap(image.norm(values[y, x]))
                axis.text(x, y, str(count), ha='center', va='center', fontsize=7, color=ink(shade))
        axis.set_xticks(range(len(found.columns)), found.columns)
        axis.set_yticks(range(len(found.rows)), found.rows)
        axis.set_xlabel(found.size_axis)
        if number == 0:
            axis.set_ylabel(found.axis)
        axis.set_title(f'{found.dataset} ({found.placed}/{found.records} placed)', fontsize=9)
    bar = figure.colorbar(image, ax=axes[0].tolist(), shrink=0.8)
    bar.set_label(f'{metric} (%)', fontsize=11)
    figure.suptitle(
        f'{metric} by {maps[0].axis} and {maps[0].size_axis}, {label}\n'
        'the number in a cell: its records'
    )
    save(figure, path)
