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

from opencompass_lveval import benchmarks  # noqa: E402

# A config outside the checkout reading every registered benchmark's main shipped dataset config.
main_configs = [(b, b.dataset_configs[0].split(':')) for b in benchmarks.BENCHMARKS]
imports = ''.join(
    f'    from opencompass_lveval.configs.{path[:-3].replace("/", ".")} import {name}\n'
    for _, (path, name) in main_configs
)
Path('my_eval.py').write_text(
    'from mmengine.config import read_base\nwith read_base():\n'
    + imports
    + '    from opencompass_lveval.configs.models.cpu_baselines import models\n'
    + '    from opencompass_lveval.configs.summarizers.lveval import summarizer\n'
    + '    from opencompass_lveval.configs.runners.local import eval, infer\n'
    + f'datasets = {" + ".join(name for _, (_, name) in main_configs)}\n'
)
cfg = Config.fromfile('my_eval.py', format_python_code=False)
abbrs = [d['abbr'] for d in cfg.datasets]
for benchmark, (path, name) in main_configs:
    own = [abbr for abbr in abbrs if benchmark.split_abbr(abbr)]
    shipped = Config.fromfile(str(package / 'configs' / path), format_python_code=False)[name]
    assert own and len(own) == len(shipped), (benchmark.name, own)
assert [m['abbr'] for m in cfg.models] == ['extractive-bm25', 'random-guess']
assert cfg.summarizer['type'].__name__ == 'LongContextSummarizer'
assert cfg.infer.partitioner['type'].__name__ == 'CheckedPartitioner'
assert cfg.eval.runner['type'].__name__ == 'CheckedLocalRunner'
print(
    f'a config outside the checkout read {len(abbrs)} datasets, 2 models, the summarizer and '
    'the checked stages'
)

from opencompass_lveval.leaderboard.published import published_rows  # noqa: E402

# The published results ship inside the wheel: every model the benchmarks' files name is a row.
models_published = {found[0] for b in benchmarks.BENCHMARKS for found in b.published()}
assert models_published and len(published_rows()) == len(models_published), models_published

bin_dir = Path(sys.executable).parent
folder = subprocess.run(
    [bin_dir / 'lveval', 'configs-dir'], capture_output=True, text=True, check=True
).stdout.strip()
assert Path(folder) == package / 'configs', folder
help_text = subprocess.run(
    [bin_dir / 'lveval', '--help'], capture_output=True, text=True, check=True
).stdout
for benchmark in benchmarks.BENCHMARKS:
    assert benchmark.title in help_text, (benchmark.title, help_text)
print(f'lveval configs-dir -> {folder}; lveval --help works')
