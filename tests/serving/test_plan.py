"""What is known before any weights load: request costs, the replicas' command lines and where
their GPUs come from."""

from __future__ import annotations

import json

import pytest

from opencompass_lveval.serving.placement import ReplicaError, ReplicaSpec
from opencompass_lveval.serving.placement.local import LocalPlacement
from opencompass_lveval.serving.plan import quadratic_cost, request_cost
from opencompass_lveval.serving.replicas import replica_specs
from opencompass_lveval.serving.request import ids_digest, request_key
from opencompass_lveval.serving.vllm_command import vllm_server_argv

YARN = {'rope_type': 'yarn', 'factor': 8.0, 'original_max_position_embeddings': 8192}


@pytest.fixture
def model_folder(tmp_path):
    config = {'hidden_size': 4096, 'max_position_embeddings': 8192, 'rope_theta': 10000.0}
    (tmp_path / 'config.json').write_text(json.dumps(config))
    return tmp_path


def test_the_quadratic_cost_adds_attention_from_the_model_config(model_folder, tmp_path):
    square = quadratic_cost(str(model_folder))
    assert square == 1 / (12 * 4096)
    # A 128k prompt of an 8B-sized layer: attention is 2.67 times the linear work.
    assert request_cost(131072, 0, square) == 131072 + 349525
    assert request_cost(1000, 64) == 1064  # the default: prompt plus answer tokens
    assert quadratic_cost(str(tmp_path / 'nowhere')) is None


def test_the_key_changes_with_engine_ids_and_sampling():
    sampling = {'temperature': 0, 'max_tokens': 8, 'stop': []}
    ids = ids_digest([1, 2, 3])
    key = request_key('m', ids, sampling)
    assert key == request_key('m', ids, dict(reversed(sampling.items())))
    others = {request_key('n', ids, sampling), request_key('m', ids_digest([1, 2]), sampling)}
    assert len({key, *others}) == 3
    assert key != request_key('m', ids, {**sampling, 'max_tokens': 9})


def test_the_server_gets_the_wrappers_engine_settings(model_folder):
    model = dict(
        abbr='m',
        path=str(model_folder),
        max_seq_len=32768 * 2,
        rope_scaling=YARN,
        model_kwargs=dict(dtype='bfloat16', tensor_parallel_size=2),
        run_cfg=dict(num_gpus=2),
    )
    argv = vllm_server_argv(model, 'served')
    shown = ' '.join(argv)
    assert '--max-model-len 65536' in shown and '--enable-prefix-caching' in shown
    assert '--enable-chunked-prefill' in shown  # a window past 32k
    assert '--dtype bfloat16 --tensor-parallel-size 2' in shown
    assert '--host {host} --port {port}' in shown and '--served-model-name served' in shown
    overrides = json.loads(argv[argv.index('--hf-overrides') + 1])
    assert 'yarn' in json.dumps(overrides)
    specs = replica_specs(model, 'served', 3, {'A': 'b'})
    assert [s.gpus for s in specs] == [2, 2, 2] and specs[0].name == 'm-r0'
    assert specs[0].env == {'A': 'b', 'VLLM_ALLOW_LONG_MAX_MODEL_LEN': '1'}  # YaRN covers 64k


def test_local_replicas_get_their_own_gpus_or_an_error(tmp_path):
    placement = LocalPlacement(log_dir=tmp_path, devices=['0', '1', '2'])
    specs = [ReplicaSpec(f'r{i}', ['true'], {}, 1) for i in range(3)]
    placed = placement.prepare(specs)
    assert [s.env['CUDA_VISIBLE_DEVICES'] for s in placed] == ['0', '1', '2']
    wide = [ReplicaSpec(f'r{i}', ['true'], {}, 2) for i in range(2)]
    with pytest.raises(ReplicaError, match=r'ask for 4 GPUs in all and this machine has 3'):
        placement.prepare(wide)


# The options vLLM 0.6.4's OpenAI server parses that the command may hold (its arg_utils): the
# switches off by default are store_true there (no --no- form), chunked prefill takes a value,
# and --generation-config does not exist yet (0.6.5 added it; 0.8 its value 'vllm').
VLLM_0_6_4 = {
    '--model', '--served-model-name', '--host', '--port', '--max-model-len', '--dtype',
    '--tensor-parallel-size', '--trust-remote-code', '--enable-prefix-caching',
    '--enable-chunked-prefill', '--hf-overrides', '--enforce-eager', '--gpu-memory-utilization',
}  # fmt: skip


def test_the_server_command_parses_on_the_oldest_release(model_folder):
    model = dict(
        abbr='m',
        path=str(model_folder),
        max_seq_len=65536,
        model_kwargs=dict(dtype='bfloat16', enable_chunked_prefill=False, enforce_eager=True),
    )
    argv = vllm_server_argv(model, 'served', '0.6.4')
    options = [arg for arg in argv[3:] if arg.startswith('--')]
    assert set(options) <= VLLM_0_6_4, set(options) - VLLM_0_6_4
    assert '--trust-remote-code' not in argv  # off: left out (0.6.4 has no --no- form)
    at = argv.index('--enable-chunked-prefill')
    assert argv[at + 1] == 'False'
    newest = vllm_server_argv(model, 'served', '0.33.0')
    assert newest[newest.index('--generation-config') + 1] == 'vllm'
    assert '--no-enable-chunked-prefill' in newest and '--enable-chunked-prefill' not in newest


@pytest.mark.slow
@pytest.mark.vllm
def test_the_installed_vllm_parses_the_server_command(model_folder):
    """The installed server's own parser takes the command (vLLM's import: seconds)."""
    pytest.importorskip('vllm')
    try:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser

    model = dict(abbr='m', path=str(model_folder), max_seq_len=65536, rope_scaling=YARN,
                 model_kwargs=dict(enable_prefix_caching=False, dtype='float32'))  # fmt: skip
    argv = ReplicaSpec('r0', vllm_server_argv(model, 'served')).command('127.0.0.1', 8000)
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(argv[3:])
    assert parsed.max_model_len == 65536 and parsed.served_model_name == ['served']
    assert parsed.enable_prefix_caching is False and parsed.enable_chunked_prefill is True
    assert parsed.trust_remote_code is False and parsed.dtype == 'float32'
