"""Outputs are atomic: a command that fails or is killed leaves the previous file, never an empty
or half-written one (a failed rebuild through the CLI: tests/test_reliability.py, failed-rebuild)."""

from __future__ import annotations

import os

import pytest

from opencompass_lveval.files.atomic import atomic_open, write_text


def test_a_failure_while_writing_keeps_the_previous_file(tmp_path):
    target = tmp_path / 'out.jsonl'
    target.write_text('the good file\n')
    with pytest.raises(RuntimeError), atomic_open(target) as stream:
        stream.write('half of a new')
        raise RuntimeError('killed')
    assert target.read_text() == 'the good file\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out.jsonl']  # no temporary left


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        write_text(tmp_path / 'a.md', 'x')
    finally:
        os.umask(umask)
    assert (tmp_path / 'a.md').stat().st_mode & 0o777 == 0o644
