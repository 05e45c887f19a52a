"""``lveval score --benchmark mrcr_openai FILE --out OUT`` and ``--benchmark mrcr_v2 FILE --out
OUT``: a JSON-lines file of replies scored line by line with the version's own grader.

Input lines are shaped as the golden cases: OpenAI MRCR ``response``, ``answer``,
``random_string_to_prepend``; MRCR v2 ``prediction``, ``target``. Output: one JSON line per input
line, in input order, ``{"score": ...}`` with the input's ``id`` first where it has one; the score
keeps the grader's type (OpenAI's missing prefix is the int ``0``). Where the official grader
raises (a ``response`` or ``target`` that is no string) the line scores 0 and carries
``official_error``, the official's exception, so one bad line neither stops the file nor passes
unseen. Lines that also carry ``n_needles`` (or ``needles``) and ``context_tokens`` are summed
up per bin as well. The output is written to a temporary name and renamed when complete.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..files.atomic import atomic_open
from ..files.errors import MRCRDataError
from ..files.jsonl import json_objects
from .tables import bin_table, table_lines
from .tasks import OPENAI, V2, Version


def graded(version: Version, line: dict) -> tuple[object, str | None]:
    """(score, the official's error or None) of one line."""
    try:
        return version.grade(*(line[name] for name in version.fields)), None
    except (AttributeError, TypeError) as exc:
        return 0, f'{type(exc).__name__}: {exc}'


def _bin_of(version: Version, line: dict):
    needles = line.get('n_needles', line.get('needles'))
    tokens = line.get('context_tokens')
    if isinstance(needles, int) and isinstance(tokens, int):
        return needles, version.bin_of(tokens)
    return None


def score_file(version: Version, path: str | Path, out: str | Path) -> list[str]:
    """Score every line of ``path`` into ``out``; return the summary to print."""
    path, out = Path(path), Path(out)
    if path.resolve() == out.resolve():
        raise MRCRDataError(f'--out {out} is the input file: give another path')
    lines = [line for _, line in json_objects(path, version.fields, MRCRDataError)]
    if not lines:
        raise MRCRDataError(f'{path} holds no lines to score')
    scores, errors, binned = [], 0, []
    with atomic_open(out) as stream:
        for line in lines:
            score, error = graded(version, line)
            written = {'id': line['id']} if 'id' in line else {}
            written['score'] = score
            if error:
                written['official_error'] = error
                errors += 1
            stream.write(json.dumps(written, ensure_ascii=False) + '\n')
            scores.append(score)
            if (where := _bin_of(version, line)) is not None:
                binned.append((*where, score))
    summary = [
        f'{version.title}: {len(scores)} lines, mean score {sum(scores) / len(scores):.4f}'
        + (f', {errors} where the official grader raises (scored 0, flagged)' if errors else '')
    ]
    if binned:
        summary += table_lines(bin_table(binned))
    return summary + [f'wrote {out}']


def score_openai_file(path: str | Path, out: str | Path) -> list[str]:
    """``--benchmark mrcr_openai``: OpenAI's ``grade`` on every line."""
    return score_file(OPENAI, path, out)


def score_v2_file(path: str | Path, out: str | Path) -> list[str]:
    """``--benchmark mrcr_v2``: GDM's ``mrcr_v2_metric`` on every line."""
    return score_file(V2, path, out)
