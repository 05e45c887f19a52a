"""A served request and what it is bound to: the engine that answers, the key its reply is
stored under, and the checks a reply must pass to count as its answer.

The key (``request_key``) is a digest of everything that changes an answer and nothing else:

- the prompt's ids (their digest, ``ids_digest``: int32 little-endian bytes, SHA-256);
- the sampling, as ``models.vllm.request_sampling`` builds it for ``generate`` in process, for
  ``ServedVLLM`` and for the planner alike (greedy, ``max_tokens``, stop strings, the model's
  ``generation_kwargs``);
- the engine (``engine_identity``): the model files' fingerprint (``files_fingerprint``), the
  vLLM version, the server's command (vLLM's, or the ``server_argv`` standing in for it), the
  engine settings that decide answers (window, dtype, quantization, RoPE overrides, remote
  code...) and the servers' environment that does (``VLLM_*`` and ``replica_env``).

Left out on purpose (``THROUGHPUT_SETTINGS``, ``THROUGHPUT_ENV``): what decides only how much
memory an engine takes, how many requests it runs at once and how it splits, caches and spreads
their work (``gpu_memory_utilization``, ``max_num_seqs``, ``enforce_eager``, the tensor-parallel
size, prefix caching, chunked prefill, ``VLLM_CPU_KVCACHE_SPACE``...). These change which
requests share a batch, the same latitude two runs of one server have; a resume after tuning
them asks nothing again. Secrets (``replica_env_from``) are never part of it.

A reply is bound to its request (``check_reply``): one choice, the model asked for, prompt
tokens equal to the ids sent, at most ``max_tokens`` completion tokens. It is stored with its
key, the ids' digest, the model and the budget, and checked again when read (``store.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from .vllm_command import SERVER_MODULE, model_engine_settings

# Engine settings that change how fast and in which batches answers come, not the answers.
THROUGHPUT_SETTINGS = frozenset({
    'gpu_memory_utilization', 'max_num_seqs', 'max_num_batched_tokens', 'enforce_eager',
    'swap_space', 'cpu_offload_gb', 'kv_cache_memory_bytes', 'num_gpu_blocks_override',
    'block_size', 'max_seq_len_to_capture', 'max_cudagraph_capture_size',
    'tensor_parallel_size', 'pipeline_parallel_size', 'data_parallel_size',
    'distributed_executor_backend', 'disable_custom_all_reduce', 'disable_log_stats',
    'enable_prefix_caching', 'enable_chunked_prefill', 'max_parallel_loading_workers',
    'preemption_mode', 'scheduling_policy',
})  # fmt: skip
# The servers' environment of the same kind, and what says where they run or log.
THROUGHPUT_ENV = frozenset({
    'VLLM_CPU_KVCACHE_SPACE', 'VLLM_CPU_OMP_THREADS_BIND', 'VLLM_CPU_NUM_OF_RESERVED_CPU',
    'VLLM_ALLOW_LONG_MAX_MODEL_LEN', 'VLLM_LOGGING_LEVEL', 'VLLM_CONFIGURE_LOGGING',
    'VLLM_HOST_IP', 'VLLM_PORT', 'VLLM_RPC_BASE_PATH', 'VLLM_WORKER_MULTIPROC_METHOD',
    'VLLM_NO_USAGE_STATS', 'VLLM_DO_NOT_TRACK', 'VLLM_CACHE_ROOT', 'VLLM_ENGINE_ITERATION_TIMEOUT_S',
    'VLLM_ENABLE_V1_MULTIPROCESSING',
    'CUDA_VISIBLE_DEVICES', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'HF_HUB_OFFLINE',
    'TRANSFORMERS_OFFLINE', 'HF_HOME', 'HF_HUB_CACHE', 'TOKENIZERS_PARALLELISM',
})  # fmt: skip
THROUGHPUT_ENV_PREFIXES = ('NCCL_', 'GLOO_', 'RAY_')
CONTENT_HASHED_BYTES = 64 * 2**20  # files up to this size are fingerprinted by content


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(',', ':')).encode()


def ids_digest(ids) -> str:
    """SHA-256 of the ids as int32 little-endian bytes (hex)."""
    return hashlib.sha256(np.ascontiguousarray(ids, dtype='<i4').tobytes()).hexdigest()


def request_key(engine: str, digest: str, sampling: dict) -> str:
    """The reply store's key: the engine's identity, the ids' digest, the sampling."""
    return hashlib.sha256(
        canonical({'engine': engine, 'ids': digest, 'sampling': sampling})
    ).hexdigest()


def prompt_digest(prompt: Any) -> str:
    """A rendered prompt (a string or OpenCompass's list of rounds) as the planner saw it: how
    ``ServedVLLM`` finds its planned request without tokenizing it again."""
    text = json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32]


def files_fingerprint(path: str) -> Any:
    """What the model's files are: every file of its folder by relative name and size, those up
    to 64 MiB (configs, tokenizers) by content and larger ones (weights) by modification time
    as well: weights rewritten in place, or another checkpoint in the folder, give another key.
    A hub id without a local snapshot is named as it is."""
    folder = Path(os.path.expanduser(path))
    if not folder.is_dir():
        folder = _hub_snapshot(path) or folder
    if not folder.is_dir():
        return {'name': path}
    found = {}
    for file in sorted(folder.rglob('*')):
        relative = file.relative_to(folder).as_posix()
        if not file.is_file() or any(part.startswith('.') for part in relative.split('/')):
            continue
        stat = file.stat()
        if stat.st_size <= CONTENT_HASHED_BYTES:
            found[relative] = [stat.st_size, _content(file)]
        else:
            found[relative] = [stat.st_size, stat.st_mtime_ns]
    return found


def _content(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, 'rb') as stream:
        for block in iter(lambda: stream.read(2**20), b''):
            digest.update(block)
    return digest.hexdigest()


def _hub_snapshot(name: str) -> Optional[Path]:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 (not a hub id, or not downloaded: named as it is)
        return None


def output_env(env: dict[str, str], secret_names: tuple[str, ...] = ()) -> dict[str, str]:
    """The servers' environment that may change answers: the driver's ``VLLM_*`` and the
    config's ``replica_env``, less the throughput ones and the secrets."""
    merged = {k: v for k, v in os.environ.items() if k.startswith('VLLM_')}
    merged.update(env)
    return {
        name: value
        for name, value in sorted(merged.items())
        if name not in THROUGHPUT_ENV
        and name not in secret_names
        and not name.startswith(THROUGHPUT_ENV_PREFIXES)
    }


def engine_identity(
    model_cfg: dict,
    server_argv: Optional[list[str]] = None,
    env: Optional[dict] = None,
    secret_names: tuple[str, ...] = (),
) -> str:
    """A digest of the engine that answers a model config's requests (see the module)."""
    from ..models.vllm import installed_vllm_version

    version = installed_vllm_version()
    settings = model_engine_settings(model_cfg, version)
    identity = {
        'files': files_fingerprint(model_cfg['path']),
        'vllm': version,
        'command': list(server_argv) if server_argv else [SERVER_MODULE],
        'engine': {k: v for k, v in settings.items() if k not in THROUGHPUT_SETTINGS},
        'env': output_env(dict(env or {}), secret_names),
    }
    return hashlib.sha256(canonical(identity)).hexdigest()[:24]


def served_model_name(identity: str) -> str:
    """The name replicas serve an engine under (``--served-model-name``)."""
    return f'lveval-{identity}'


class IdsFile:
    """A plan's file of int32 ids, opened once and read by slices (``os.pread``, from any
    thread)."""

    def __init__(self, path: str) -> None:
        self.path, self.descriptor = path, None

    def read(self, offset: int, length: int) -> list[int]:
        if self.descriptor is None:
            self.descriptor = os.open(self.path, os.O_RDONLY)
        data = os.pread(self.descriptor, 4 * length, 4 * offset)
        return np.frombuffer(data, dtype='<i4').tolist()

    def __del__(self) -> None:
        if self.descriptor is not None:
            os.close(self.descriptor)


@dataclass(frozen=True)
class PlannedRequest:
    """One request to a replica. ``ids``: a sequence in memory, or an ``(IdsFile, offset,
    length)`` slice of a plan's ids (read when sent); ``tokens``: prompt plus answer, what it
    holds of a replica's KV cache; ``cost``: what orders the queue."""

    key: str
    cost: int
    tokens: int
    max_tokens: int
    prompt_tokens: int
    digest: str
    model: str
    sampling: dict = field(repr=False)
    ids: Any = field(repr=False)
    label: str = ''

    def prompt_ids(self) -> list[int]:
        if isinstance(self.ids, tuple) and self.ids and isinstance(self.ids[0], IdsFile):
            source, offset, length = self.ids
            return source.read(offset, length)
        return list(self.ids) if not isinstance(self.ids, np.ndarray) else self.ids.tolist()

    def body(self) -> bytes:
        """What ``/v1/completions`` is sent: the ids as they are, the model, the sampling."""
        return canonical({'model': self.model, 'prompt': self.prompt_ids(), **self.sampling})

    def expected(self) -> dict:
        """What its stored reply must say of it."""
        return {
            'key': self.key,
            'prompt_digest': self.digest,
            'model': self.model,
            'max_tokens': self.max_tokens,
            'prompt_tokens': self.prompt_tokens,
        }


def planned_request(
    engine: str,
    ids,
    sampling: dict,
    label: str = '',
    cost: Optional[int] = None,
    model: Optional[str] = None,
) -> PlannedRequest:
    """A request of ids in memory (tests, benches, small stages)."""
    digest = ids_digest(ids)
    answer = int(sampling['max_tokens'])
    return PlannedRequest(
        key=request_key(engine, digest, sampling),
        cost=len(ids) + answer if cost is None else cost,
        tokens=len(ids) + answer,
        max_tokens=answer,
        prompt_tokens=len(ids),
        digest=digest,
        model=model or served_model_name(engine),
        sampling=sampling,
        ids=ids,
        label=label,
    )


class ReplyFault(ValueError):
    """A reply that is not the answer to its request: not stored, asked again."""


def check_reply(payload: Any, request: PlannedRequest) -> dict:
    """The stored record of a reply to ``request``, or a ``ReplyFault`` saying why it is not one."""
    if not isinstance(payload, dict) or not isinstance(payload.get('choices'), list):
        raise ReplyFault(f'not an OpenAI completion: {str(payload)[:200]}')
    choices = payload['choices']
    if len(choices) != 1:
        raise ReplyFault(f'the reply holds {len(choices)} choices, and one was asked for')
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get('text'), str):
        raise ReplyFault(f'the reply has no text: {str(choice)[:200]}')
    if payload.get('model') != request.model:
        raise ReplyFault(
            f'the reply names the model {payload.get("model")!r}, not {request.model!r}'
        )
    usage = payload.get('usage')
    counts = {
        name: usage.get(name) if isinstance(usage, dict) else None
        for name in ('prompt_tokens', 'completion_tokens')
    }
    if not all(type(value) is int and value >= 0 for value in counts.values()):
        raise ReplyFault(f'the reply counts no tokens (usage: {str(usage)[:120]})')
    if counts['prompt_tokens'] != request.prompt_tokens:
        raise ReplyFault(
            f'the reply counts {counts["prompt_tokens"]} prompt tokens, and '
            f'{request.prompt_tokens} ids were sent: it answers another prompt'
        )
    if counts['completion_tokens'] > request.max_tokens:
        raise ReplyFault(
            f'the reply has {counts["completion_tokens"]} completion tokens, more than '
            f'max_tokens={request.max_tokens}'
        )
    finish = choice.get('finish_reason')
    return {
        **request.expected(),
        'text': choice['text'],
        'completion_tokens': counts['completion_tokens'],
        'finish_reason': finish if isinstance(finish, str) else None,
    }
