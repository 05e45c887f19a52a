"""Every shipped top-level config as OpenCompass handles it: parsed, dumped to a file (what each
task reads: a config holding a module, such as one that does `import os`, cannot be dumped) and
parsed again, with the runners of its cluster forms."""

from __future__ import annotations

import pytest
from runs import REPO

pytestmark = pytest.mark.slow
CONFIGS = sorted(path.name for path in (REPO / 'configs').glob('eval_*.py'))


@pytest.mark.parametrize('name', CONFIGS)
def test_config_dumps_and_reads_back(name, tmp_path):
    from mmengine.config import Config

    config = Config.fromfile(str(REPO / 'configs' / name), format_python_code=False)
    dumped = tmp_path / name
    config.dump(str(dumped))
    again = Config.fromfile(str(dumped), format_python_code=False)
    assert [d['abbr'] for d in again.datasets] == [d['abbr'] for d in config.datasets]
    assert [m['abbr'] for m in again.models] == [m['abbr'] for m in config.models]
    runners = {str(again[stage]['runner']['type']) for stage in ('infer', 'eval') if stage in again}
    if name.endswith('_ray.py'):
        assert runners == {'opencompass_lveval.runner.ray_runner.RayRunner'}
    elif name.endswith('_slurm.py'):
        assert runners == {'opencompass_lveval.runner.slurm.CheckedSlurmRunner'}
    elif name.endswith('_serve.py'):  # its settings pass the checks of the runner's build
        from opencompass_lveval.runner.serve_once import ServeOnceRunner

        runner = dict(again.infer.runner)
        assert runner.pop('type') == 'opencompass_lveval.runner.serve_once.ServeOnceRunner'
        assert ServeOnceRunner(**runner).settings['replicas'] == 2


def test_the_cluster_forms_are_shipped():
    for benchmark in ('demo', 'lveval', 'adaleval'):
        for cluster in ('ray', 'slurm'):
            assert f'eval_{benchmark}_{cluster}.py' in CONFIGS
