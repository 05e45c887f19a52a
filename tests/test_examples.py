"""The examples are distributions of their own: installed as a user installs them (pip, beside
the package), their own tests (the conformance kit among them) pass from a copy of their folder
outside the repository; KV retrieval stays within its budget of lines and overrides nothing of
the framework."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys

import pytest
from runs import REPO

from opencompass_lveval.framework.declared import DeclaredBenchmark

EXAMPLES = REPO / 'examples'
# What a declared benchmark states as code; every other method is the framework's.
HOOKS = {'score_reply', 'score_record', 'synthetic_records', 'random_answer', 'build_kinds'}


def test_kv_retrieval_is_at_most_150_lines_and_overrides_no_framework_method():
    folder = EXAMPLES / 'kv_retrieval'
    files = [*folder.glob('*.py'), *folder.glob('tests/*.py')]  # not what a build copied
    assert sum(len(path.read_text().splitlines()) for path in files) <= 150
    tree = ast.parse((EXAMPLES / 'kv_retrieval' / 'kv_retrieval_benchmark.py').read_text())
    (declared,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    methods = {node.name for node in declared.body if isinstance(node, ast.FunctionDef)}
    assert methods <= HOOKS, methods - HOOKS
    assert all(hasattr(DeclaredBenchmark, name) for name in HOOKS)  # the hooks are its own


@pytest.mark.slow
@pytest.mark.parametrize('example', ['passkey', 'kv_retrieval'])
def test_an_example_passes_its_own_tests_from_its_own_folder(example, tmp_path):
    """pip installs the copy into ``site``; the package is this checkout's."""
    site, copy = tmp_path / 'site', tmp_path / example
    shutil.copytree(EXAMPLES / example, copy, ignore=shutil.ignore_patterns('__pycache__'))
    pip = [sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--no-index']
    pip += ['--no-build-isolation', '--target', str(site), str(copy)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    shutil.rmtree(copy / 'build', ignore_errors=True)  # pip's build: its tests import the install
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider'],
        cwd=copy,
        env={**os.environ, 'PYTHONPATH': os.pathsep.join([str(site), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f'rootdir: {copy}' in done.stdout  # its own folder and settings, not the repo's
    assert ' passed' in done.stdout.splitlines()[-1]
