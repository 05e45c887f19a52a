"""Run from a folder outside the checkout with the python of a fresh virtual environment that has
the built wheel installed (not editable): every module imports, every shipped config loads, and a
config written here reads the package's configs through mmengine's read_base."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import opencompass_lveval

package = Path(opencompass_lveval.__file__).resolve().parent
assert 'site-packages' in package.parts, f'not the installed wheel: {package}'

modules = [
    m.name
    for m in pkgutil.walk_packages([str(package)], 'opencompass_lveval.')
    if not m.name.startswith('opencompass_lveval.configs')
]
for name in modules:
    importlib.import_module(name)
print(f'imported {len(modules)} modules from {package}')

from mmengine.config import Config  # noqa: E402

configs = sorted((package / 'configs').rglob('*.py'))
for path in configs:
    Config.fromfile(str(path), format_python_code=False)
print(f'loaded {len(configs)} shipped configs')

Path('my_eval.py').write_text("""from mmengine.config import read_base
with read_base():
    from opencompass_lveval.configs.datasets.lveval.lveval_gen import lveval_datasets
    from opencompass_lveval.configs.datasets.adaleval.adaleval_gen import adaleval_datasets
    from opencompass_lveval.configs.models.cpu_baselines import models
    from opencompass_lveval.configs.summarizers.lveval import summarizer
datasets = lveval_datasets + adaleval_datasets
""")
cfg = Config.fromfile('my_eval.py', format_python_code=False)
abbrs = [d['abbr'] for d in cfg.datasets]
assert sum(a.startswith('LVEval_') for a in abbrs) == 55, abbrs
assert sum(a.startswith('AdaLEval_') for a in abbrs) == 17, abbrs
assert [m['abbr'] for m in cfg.models] == ['extractive-bm25', 'random-guess']
assert cfg.summarizer['type'].__name__ == 'LongContextSummarizer'
print(f'a config outside the checkout read {len(abbrs)} datasets, 2 models and the summarizer')

from opencompass_lveval.leaderboard.published import published_rows  # noqa: E402

assert len(published_rows()) == 21, 'the published results must ship inside the wheel'

bin_dir = Path(sys.executable).parent
folder = subprocess.run(
    [bin_dir / 'lveval', 'configs-dir'], capture_output=True, text=True, check=True
).stdout.strip()
assert Path(folder) == package / 'configs', folder
help_text = subprocess.run(
    [bin_dir / 'lveval', '--help'], capture_output=True, text=True, check=True
).stdout
assert 'score-adaleval' in help_text
print(f'lveval configs-dir -> {folder}; lveval --help works')
