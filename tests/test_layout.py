"""The package's layout: the root holds the command and the folders; the modules that moved into
folders in 0.5 still import under their old names, as the same module objects."""

import importlib
from pathlib import Path

import pytest

import opencompass_lveval
from opencompass_lveval import _MOVED

ROOT = Path(opencompass_lveval.__file__).parent


@pytest.mark.parametrize('old', sorted(_MOVED))
def test_old_name_is_the_moved_module(old):
    moved = importlib.import_module(f'opencompass_lveval.{_MOVED[old]}.{old}')
    assert importlib.import_module(f'opencompass_lveval.{old}') is moved
    assert moved.__spec__.name == moved.__name__ == f'opencompass_lveval.{_MOVED[old]}.{old}'
    assert not (ROOT / f'{old}.py').exists()


def test_from_package_import_gives_moved_modules():
    from opencompass_lveval import atomic, benchmarks, intervals

    assert benchmarks.__name__ == 'opencompass_lveval.framework.benchmarks'
    assert atomic.__name__ == 'opencompass_lveval.files.atomic'
    assert intervals.__name__ == 'opencompass_lveval.report.intervals'


def test_unknown_names_still_fail():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module('opencompass_lveval.no_such_module')


def test_root_holds_the_command_and_folders():
    modules = sorted(p.name for p in ROOT.glob('*.py'))
    assert modules == ['__init__.py', 'cli.py']
