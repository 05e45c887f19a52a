"""Task commands a shell reads as the words they were built from.

OpenCompass's task command is one string run with ``shell=True``: ``{python} {script}
{cfg_path}``, none of them quoted, and LocalRunner's ``cfg_path`` starts with the folder the run
was started in. A folder holding a space then splits the command (``unrecognized arguments``),
and one named ``r$(touch INJECTED)x`` runs what it names. The package's runners run their tasks
through ``quoting(task_type)``, the same task whose command has each of these paths quoted for
the shell; a path without special characters is left as it is, so the usual command is
unchanged.
"""

from __future__ import annotations

import copyreg
import inspect
import re
import shlex
import sys
from typing import Any

from opencompass.registry import TASKS

_QUOTING: dict[type, type] = {}
_METACLASSES: dict[type, type] = {}


def quote_paths(command: str, paths: tuple[str, ...]) -> str:
    """``command`` with each of ``paths`` that the shell would read as more than one plain word
    quoted where it stands as a word of its own."""
    for path in paths:
        quoted = shlex.quote(path)
        if quoted != path:
            word = re.compile(rf'(?:(?<=\s)|^){re.escape(path)}(?=\s|$)')
            command = word.sub(quoted.replace('\\', '\\\\'), command)
    return command


def quoting(task_type: Any) -> type:
    """The task class of ``task_type`` (a class or a registered name) with a ``get_command``
    that quotes the Python, the task's script and its config path; one class per task class."""
    base = TASKS.get(task_type) if isinstance(task_type, str) else task_type
    if getattr(base, 'quotes_its_paths', False):
        return base
    if base not in _QUOTING:
        try:
            script = inspect.getfile(base)
        except (OSError, TypeError):  # a class made in ``python -c``: no script of its own
            script = sys.executable

        def get_command(self, cfg_path: str, template: str) -> str:
            command = super(quoted, self).get_command(shlex.quote(cfg_path), template)
            return quote_paths(command, (sys.executable, script))

        quoted = _metaclass(type(base))(
            base.__name__,
            (base,),
            {'get_command': get_command, 'quotes_its_paths': True, '__module__': base.__module__},
        )
        _QUOTING[base] = quoted
    return _QUOTING[base]


def _metaclass(kind: type) -> type:
    """A metaclass of the quoting classes, pickled as ``quoting(base)``: a runner that hands its
    tasks to other processes (OpenCompass's SlurmRunner, through a process pool) pickles the task
    class, which has no module-level name of its own."""
    if kind not in _METACLASSES:
        _METACLASSES[kind] = meta = type(f'Quoting{kind.__name__}', (kind,), {})
        copyreg.pickle(meta, lambda cls: (quoting, (cls.__bases__[0],)))
    return _METACLASSES[kind]
