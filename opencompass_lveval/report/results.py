"""Reading finished OpenCompass runs: which run folder, and its per-dataset result files.

A work folder (``-w``) holds one folder per run (``20260101_120000/``), each with
``results/{model}/{dataset abbr}.json`` as OpenCompass's evaluation tasks wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ReportError


def run_folders(work_dir: str | Path) -> list[Path]:
    """The run folders of a work folder, oldest first; ``work_dir`` itself if it is a run."""
    work_dir = Path(work_dir)
    if (work_dir / 'results').is_dir():
        return [work_dir]
    runs = (
        sorted(p for p in work_dir.glob('*') if (p / 'results').is_dir())
        if work_dir.is_dir()
        else []
    )
    if not runs:
        raise ReportError(
            f'{work_dir} holds no OpenCompass results (no results/ folder in it or '
            'in a run folder below it); run `opencompass CONFIG -w WORK_DIR` first '
            'and point at WORK_DIR or one of its run folders.'
        )
    return runs


def find_run(work_dir: str | Path) -> Path:
    """The run folder: ``work_dir`` itself if it holds ``results/``, else its newest run."""
    return run_folders(work_dir)[-1]


def read_results(run: Path) -> dict[str, dict[str, dict]]:
    """model -> dataset abbr -> the result JSON OpenCompass wrote."""
    results: dict[str, dict[str, dict]] = {}
    for path in sorted((run / 'results').glob('*/*.json')):
        try:
            results.setdefault(path.parent.name, {})[path.stem] = json.loads(
                path.read_text(encoding='utf-8')
            )
        except (ValueError, UnicodeDecodeError) as exc:
            raise ReportError(f'{path} is not valid JSON ({exc}); re-run its evaluation') from exc
    if not results:
        raise ReportError(f'{run}/results holds no result files; the evaluation did not finish')
    return results
