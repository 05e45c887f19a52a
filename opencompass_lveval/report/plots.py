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
    from ..atomic import atomic_path

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
) -> None:
    """One line per series over the x labels (missing points skipped); dashed grey reference
    lines (chance) on top."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.2))
    positions = list(range(len(x_labels)))
    for label, values in series.items():
        points = [(x, v) for x, v in zip(positions, values) if v is not None]
        axes.plot([p[0] for p in points], [p[1] for p in points], marker='o', label=label)
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
    axes.set_ylim(*y_limits([*series.values(), *(dashed or {}).values()]))
    axes.grid(alpha=0.3)
    axes.legend(fontsize='small')
    figure.tight_layout()
    save(figure, path)


def plot_heatmaps(path: Path, model: str, grids: dict[str, list], levels: list[str]) -> None:
    """factrecall score by needle depth (rows) and level (columns), one panel per dataset."""
    import numpy as np

    plt = _pyplot()
    figure, axes = plt.subplots(
        1, len(grids), figsize=(4.5 * len(grids) + 1, 4.6), squeeze=False, constrained_layout=True
    )
    for number, (axis, (dataset, grid)) in enumerate(zip(axes[0], grids.items())):
        values = np.array([[np.nan if v is None else v for v in row] for row in grid])
        image = axis.imshow(values, cmap='RdYlGn', vmin=0, vmax=100, aspect='auto')
        axis.set_xticks(range(len(levels)), levels)
        axis.set_yticks(range(len(grid)), [f'{100 * b // len(grid)}%' for b in range(len(grid))])
        axis.set_xlabel('length level')
        if number == 0:
            axis.set_ylabel('needle depth (start of bucket)')
        axis.set_title(dataset)
    figure.colorbar(image, ax=axes[0].tolist(), label='score (%)')
    figure.suptitle(f'factrecall by needle depth and length, {model}')
    save(figure, path)
