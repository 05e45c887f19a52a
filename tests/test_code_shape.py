"""The house rules the code's shape must keep, read from the package's source: no function longer
than 60 lines, and no import circle among its modules (imports inside functions count: a lazy
import is still a dependency, and a circle of them is one design tangle)."""

from __future__ import annotations

import ast
from pathlib import Path

import opencompass_lveval

PACKAGE = Path(opencompass_lveval.__file__).resolve().parent
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    """Module name -> source file, for every module of the package (configs are not modules)."""
    found = {}
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(PACKAGE).with_suffix('').parts
        if parts[0] == 'configs':
            continue
        parts = parts[:-1] if parts[-1] == '__init__' else parts
        found['.'.join((PACKAGE.name, *parts))] = path
    return found


def _imported(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its source."""
    package = module if path.name == '__init__.py' else module.rpartition('.')[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text('utf-8'))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.rsplit('.', node.level - 1)[0] if node.level > 1 else package
                base = f'{anchor}.{base}' if base else anchor
            for alias in node.names:  # ``from . import report``: the submodule itself
                targets.add(f'{base}.{alias.name}' if f'{base}.{alias.name}' in known else base)
    return {target for target in targets if target in known and target != module}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle (its modules in order, the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_no_function_is_longer_than_60_lines():
    long = [
        f'{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} '
        f'({node.end_lineno - node.lineno + 1} lines)'
        for path in _modules().values()
        for node in ast.walk(ast.parse(path.read_text('utf-8')))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_no_module_imports_itself_through_others():
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert _cycle(graph) == []


def test_the_shape_checks_find_what_they_look_for():
    """The cycle finder finds a planted circle; the import reader resolves relative imports."""
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b'}, 'b': set()}) == []
    modules = _modules()
    name = 'opencompass_lveval.leaderboard.board'
    assert 'opencompass_lveval.framework.benchmarks' in _imported(name, modules[name], modules)
