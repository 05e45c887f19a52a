"""A second factor beside task x level, declared by a benchmark and presented by the framework.

A factor splits a benchmark's results another way than by task and level: RULER's categories
(niah, vt, cwe, fwe, qa), LongBench v2's difficulty (easy, hard), hop or needle counts. It is a
property either of the task (``of_task``: task -> value; a value's result at a level is the
unweighted mean of its tasks there, as an Overall is) or of each record (``record_field``: the
data's field holding it; a value's result at a level is the mean over the factor's tasks of each
task's mean over its records with that value, given only where every such task has some). The
evaluator keeps a per-record value in each record's details under the factor's ``name`` and
reports each value's mean per metric under ``metric_key`` (what OpenCompass's summary groups
average); reports, the board, the summary and the plots show one table and line per value.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Optional

_NAME = re.compile(r'[A-Za-z][A-Za-z0-9]*')  # joins metric keys and group names with '_'
_VALUE = re.compile(r'[A-Za-z0-9][A-Za-z0-9.+-]*')


@dataclasses.dataclass(frozen=True)
class Factor:
    """One declared factor: its name, the words tables use, its values in order, and where a
    record's value comes from (its task, or a field of the record)."""

    name: str  # its key: summary groups, tidy rows, the details' key of a per-record value
    word: str  # what tables call it: 'category', 'hop count'
    plural: str  # the same word for several, as declared: 'categories', 'hop counts'
    # its values in table order; a per-task factor's default: ``of_task``'s, in task order
    values: tuple[str, ...] = ()
    # a per-task factor's value of each task (task -> value); a task left out has none
    of_task: Mapping[str, str] = dataclasses.field(default_factory=dict)
    record_field: Optional[str] = None  # the data's field holding each record's value
    tasks: tuple[str, ...] = ()  # a per-record factor's tasks (default: every task)

    @property
    def per_record(self) -> bool:
        """Whether each record has its own value (a ``record_field``), not each task."""
        return self.record_field is not None

    def shown_values(self) -> tuple[str, ...]:
        """Its values in the order tables list them."""
        return self.values or tuple(dict.fromkeys(self.of_task.values()))

    def members(self, value: str, tasks) -> tuple[str, ...]:
        """The tasks a value's result averages: those of that value (per task), or the
        factor's tasks (per record)."""
        if self.per_record:
            return self.record_tasks(tasks)
        return tuple(task for task in tasks if self.of_task.get(task) == value)

    def record_tasks(self, tasks) -> tuple[str, ...]:
        """The tasks whose records carry a per-record factor's value; none for a per-task one."""
        return (
            tuple(task for task in tasks if task in (self.tasks or tasks))
            if self.per_record
            else ()
        )

    def metric_key(self, metric: str, value: str) -> str:
        """The result's key of ``metric`` over the records of ``value``: ``score_hops_2``."""
        return f'{metric}_{self.name}_{value}'

    def record_value(self, record: Mapping) -> Optional[str]:
        """A record's value as text (``2`` and ``'2'`` alike); None where it has none."""
        found = record.get(self.record_field) if self.per_record else None
        if isinstance(found, bool) or not isinstance(found, (str, int)):
            return None
        return str(found)

    def problems(self, where: str, tasks, metrics) -> list[str]:
        """What the framework cannot use in this declaration, one line each with the fix."""
        at = f'{where} factor {self.name!r}'
        found = []
        if not (isinstance(self.name, str) and _NAME.fullmatch(self.name)):
            found.append(f'{at}: its name must be a letter, then letters and digits')
        elif self.name in (*metrics, 'score', 'depth', 'pred', 'answer'):
            found.append(f'{at}: its name is a metric or detail key; rename it')
        if not all(isinstance(w, str) and w.strip() for w in (self.word, self.plural)):
            found.append(f"{at}: declare word and plural, e.g. 'hop count', 'hop counts'")
        if self.per_record == bool(self.of_task):
            found.append(f'{at}: declare one of of_task (task -> value) and record_field')
        values = self.shown_values()
        if not values or len(set(values)) != len(values):
            found.append(f'{at}: declare its values, each once')
        bad = [v for v in values if not (isinstance(v, str) and _VALUE.fullmatch(v))]
        if bad:
            found.append(f"{at}: values {bad} are not letters, digits, '.', '+', '-'")
        strays = [t for t in (*self.of_task, *self.tasks) if t not in tasks]
        if strays:
            found.append(f'{at}: {strays} are not its tasks ({", ".join(tasks)})')
        undeclared = sorted(set(self.of_task.values()) - set(values))
        if undeclared:
            found.append(f'{at}: of_task gives {undeclared}, not among its values {values}')
        return found


def subset(scores, values, value: str) -> list[float]:
    """The scores of the records whose value is ``value`` (none where either list is missing
    or they differ in length)."""
    if scores is None or values is None or len(scores) != len(values):
        return []
    return [score for score, found in zip(scores, values) if found == value]


def subset_mean(scores, values, value: str) -> Optional[float]:
    """The mean of the scores of the records whose value is ``value``; None where none is."""
    chosen = subset(scores, values, value)
    return math.fsum(chosen) / len(chosen) if chosen else None


def factor_means(factors, metrics: dict[str, list[float]], records: list) -> dict[str, float]:
    """What an evaluator reports beside its metrics: for every per-record factor, value and
    metric, the mean over the records of that value (``Factor.metric_key``), where there are
    some; ``metrics`` holds each metric's per-record scores, ``records`` the data's records."""
    found = {}
    for factor in factors:
        if not factor.per_record:
            continue
        values = [factor.record_value(record) for record in records]
        for value in factor.shown_values():
            for metric, scores in metrics.items():
                mean = subset_mean(scores, values, value)
                if mean is not None:
                    found[factor.metric_key(metric, value)] = mean
    return found
