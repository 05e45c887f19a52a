"""The table of distances from the official scores, and the bench's last line."""

from __future__ import annotations

from dataclasses import dataclass

from .fixed import Task, task_score

LACKS, RAISES = '-', 'raises'


@dataclass(frozen=True)
class Gap:
    """One scorer's distance from the official score of one task, in points (signed)."""

    scorer: str
    task: str
    points: float


def gaps(tasks: list[Task], scores: dict[str, list[float]], scorer: str) -> dict[str, Gap]:
    """Each scored task's distance: the scorer's part scores rounded as the official prints,
    averaged, minus the official score."""
    found = {}
    for task in tasks:
        if task.key in scores:
            mine = task_score(scores[task.key], task.decimals)
            found[task.key] = Gap(scorer, task.key, round(mine - task.official, task.decimals))
    return found


def cell(gap: Gap | None, absent: str) -> str:
    return absent if gap is None else f'{gap.points:+.2f}'


def table(tasks: list[Task], columns: dict[str, dict[str, str]]) -> list[str]:
    """A Markdown table: family, task, the official score, then each column's cell by task key."""
    header = ['family', 'task', 'official', *columns]
    rows = [
        [task.family, task.name, f'{task.official:.{task.decimals}f}']
        + [cells[task.key] for cells in columns.values()]
        for task in tasks
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ]
        return '| ' + ' | '.join(padded) + ' |'

    rule = (
        '|' + '|'.join('-' * (w + 1) + (':' if i >= 2 else '-') for i, w in enumerate(widths)) + '|'
    )
    return [line(header), rule, *(line(row) for row in rows)]


def last_line(tasks: int, ours: list[Gap], others: list[Gap]) -> str:
    """``fidelity: this package X points from the official scorers on N tasks; largest other gap
    Y points (HARNESS, TASK)``: X the package's largest distance (0.00 when it is exact)."""
    mine = max((abs(gap.points) for gap in ours), default=0.0)
    if others:
        worst = max(others, key=lambda gap: abs(gap.points))
        other = f'{abs(worst.points):.2f} points ({worst.scorer}, {worst.task})'
    else:
        other = 'none: no other harness scored a task'
    return (
        f'fidelity: this package {mine:.2f} points from the official scorers on {tasks} tasks; '
        f'largest other gap {other}'
    )
