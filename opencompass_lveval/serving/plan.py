"""Every request of an inference stage, known before any weights load, and kept on disk.

A ``LongContextVLLM`` model's request for a record is its ids (``InputBuilder``, what ``lveval
inputs`` prints) and its sampling (``models.vllm.request_sampling``). Planning renders each
record as the inferencer does (the dataset's template, the model's role parser) and builds the
ids with the model's own builder, once: a pair (a model config x a dataset config) is planned by
one worker process (``plan_stage``: ``workers`` of them, spawned, each planning whole pairs), which
writes to the plan's folder

- ``{pair}.ids``: the ids of its records one after another, int32 little-endian (4 bytes a
  token; the dispatcher reads a request's slice when it sends it);
- ``{pair}.rows.npy``: a row per record (``ROW``): the key, the ids' digest, the rendered
  prompt's digest, where its ids are, its budget, whether it was cut, its cost;
- ``{pair}.json``: the dataset, the sampling and the answer length of the pair, and which call
  its requests are (``call``: 'first', or 'answer' for the second call of a two-call answer).

A dataset whose answer takes two calls (``framework/answer_call.py``) has its second requests
planned later, once its first replies are stored (``AnswerPair``: each record and its stored
first reply give the answer prompt, rendered by the model's parser and built by its builder as
any first prompt), into the same folder as ``{pair}.answers``; a first reply missing from the
store is an error naming the record.

So the driver never holds a prompt's ids (its memory grows with requests, not tokens), and the
materialising tasks (``ServedVLLM``) find each prompt's request by the digest of the prompt the
inferencer renders, without tokenizing it again; a prompt rendered otherwise is an error naming
it, never another prompt's answer.

Cost: prompt tokens plus answer tokens, the work an engine does for the request to first order
(decoding reads the whole prompt's KV cache each step; prefill is linear in L until attention
dominates). ``quadratic_cost`` adds the attention term of prefill from the model's config.json:
a * L + b * L^2 with a = 1 and b = 1 / (12 * hidden_size), the ratio of a layer's causal
attention FLOPs (2 * L^2 * hidden) to its matrices' (24 * L * hidden^2); it matters where L
reaches several times hidden_size (a 128k prompt of an 8B model: 2.5 times the linear term).
The cost orders the queue; the room a request takes of a replica is its tokens, whatever the
cost model (``PlannedRequest.tokens``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol

import numpy as np

from ..files.atomic import atomic_open, write_text
from ..files.errors import ModelConfigError
from .request import IdsFile, PlannedRequest, canonical, prompt_digest, request_key

ROW = np.dtype(
    [
        ('key', 'u1', 32),  # bytes as numbers: numpy's 'S' type drops trailing zero bytes
        ('digest', 'u1', 32),
        ('prompt', 'u1', 16),
        ('offset', '<i8'),
        ('length', '<i4'),
        ('budget', '<i4'),
        ('truncated', '?'),
        ('cost', '<i8'),
    ]
)


class Built(Protocol):
    """What a builder gives for one record (``models.inputs.ModelInput``)."""

    ids: Any
    budget: int
    truncated: bool


class PairSource(Protocol):
    """The records of one pair, rendered: its description (``dataset``, ``model``, ``sampling``)
    and, for each record, the rendered prompt's digest and its ids."""

    def open(self) -> tuple[dict, Iterator[tuple[str, Built]]]: ...


def config_digest(config: Any) -> str:
    """A name for a config: the digest of its canonical JSON (a class or function by its
    qualified name, the same in every process)."""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, default=_named)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _named(value: Any) -> str:
    name = getattr(value, '__qualname__', None)
    return f'{value.__module__}.{name}' if name and hasattr(value, '__module__') else str(value)


def quadratic_cost(model_path: str) -> Optional[float]:
    """b of a * L + b * L^2 (a = 1) from the model's config.json, or None where it gives no
    hidden_size (see the module)."""
    config = Path(os.path.expanduser(model_path)) / 'config.json'
    try:
        hidden = json.loads(config.read_text()).get('hidden_size')
    except (OSError, ValueError):
        return None
    return 1 / (12 * hidden) if isinstance(hidden, int) and hidden > 0 else None


def request_cost(prompt_tokens: int, answer_tokens: int, square: Optional[float] = None) -> int:
    """Tokens of work: prompt plus answer, and the attention term where ``square`` is given."""
    extra = square * prompt_tokens**2 if square else 0
    return int(prompt_tokens + answer_tokens + extra)


def model_stop_words(model_cfg: dict, builder: Any) -> list[str]:
    """``LongContextModel``'s stop words: the config's and the tokenizer's end-of-sequence."""
    eos = getattr(builder.tokenizer, 'eos_token', None)
    return sorted(set(list(model_cfg.get('stop_words') or []) + ([eos] if eos else [])))


def pair_sampling(model_cfg: dict, dataset_cfg: dict, builder: Any, max_out_len: int) -> dict:
    """The sampling of a pair's requests of ``max_out_len`` tokens, as the inferencer asks them
    (the model's stop words, the inferencer's stopping criteria, the generation settings)."""
    from ..models.vllm import request_sampling

    stopping = dataset_cfg['infer_cfg']['inferencer'].get('stopping_criteria') or []
    return request_sampling(
        model_stop_words(model_cfg, builder),
        list(stopping),
        dict(model_cfg.get('generation_kwargs') or {}),
        max_out_len,
    )


class MissingFirstReplyError(ModelConfigError):
    """A two-call answer's first reply is not in the store when its second call is planned."""


_BUILDERS: dict[str, Any] = {}


def _builder(model_cfg: dict) -> Any:
    """A model config's input builder, loaded once per process (a worker plans several pairs)."""
    from ..models.vllm import LongContextVLLM

    name = config_digest(model_cfg)
    if name not in _BUILDERS:
        _BUILDERS[name] = LongContextVLLM.config_builder(model_cfg)
    return _BUILDERS[name]


def _opened(model_cfg: dict, dataset_cfg: dict, max_out_len: int, call: str) -> tuple:
    """What planning a pair's ``call`` ('first' or 'answer') of ``max_out_len`` tokens needs: its
    description, the model's builder and template parser, the dataset."""
    from opencompass.utils import build_dataset_from_cfg

    from ..models.template import prompt_parser

    builder = _builder(model_cfg)
    meta = {
        'model': model_cfg['abbr'],
        'dataset': dataset_cfg['abbr'],
        'sampling': pair_sampling(model_cfg, dataset_cfg, builder, max_out_len),
        'call': call,
    }
    parser = prompt_parser(model_cfg.get('meta_template'))
    return meta, builder, parser, build_dataset_from_cfg(dataset_cfg)


@dataclass
class RenderedPair:
    """A model config x a dataset config, rendered as OpenCompass's inferencer renders them."""

    model_cfg: dict
    dataset_cfg: dict

    def open(self) -> tuple[dict, Iterator[tuple[str, Built]]]:
        from opencompass.registry import ICL_PROMPT_TEMPLATES

        from ..models.settings import answer_length

        dataset_cfg = self.dataset_cfg
        max_out_len = answer_length(self.model_cfg, dataset_cfg)
        meta, builder, parser, dataset = _opened(self.model_cfg, dataset_cfg, max_out_len, 'first')
        template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])

        def records() -> Iterator[tuple[str, Built]]:
            for index in range(len(dataset.test)):
                prompt = template.generate_item(
                    dataset.test[index], output_field=dataset.reader.output_column
                )
                parsed = parser.parse_template(prompt, mode='gen')
                yield prompt_digest(parsed), builder.build(parsed, max_out_len)

        return meta, records()


@dataclass
class AnswerPair:
    """The second calls of a two-call pair: each record's answer prompt, made from the record and
    its first reply in the reply store (``store``), rendered and built as its first prompt was.
    ``first``: the first calls' pair name in ``folder``; ``served_name``: the name the engine
    serves under (what the stored replies are bound to)."""

    model_cfg: dict
    dataset_cfg: dict
    folder: str
    first: str
    store: str
    served_name: str

    def open(self) -> tuple[dict, Iterator[tuple[str, Built]]]:
        from ..framework.answer_call import answer_call_of
        from .store import ReplyStore

        model_cfg, dataset_cfg = self.model_cfg, self.dataset_cfg
        call = answer_call_of(dataset_cfg)
        meta, builder, parser, dataset = _opened(model_cfg, dataset_cfg, call.max_out_len, 'answer')
        meta['records'] = []  # the record of each row, filled as they are planned
        first = Path(self.folder)
        asked = json.loads((first / f'{self.first}.json').read_text())['sampling']
        rows = np.load(first / f'{self.first}.rows.npy')
        store = ReplyStore(self.store)

        def records() -> Iterator[tuple[str, Built]]:
            for index, row in enumerate(rows):
                expected = {
                    'key': row['key'].tobytes().hex(),
                    'prompt_digest': row['digest'].tobytes().hex(),
                    'model': self.served_name,
                    'max_tokens': int(asked['max_tokens']),
                    'prompt_tokens': int(row['length']),
                }
                reply, problem = store.read(expected)
                if reply is None:
                    raise MissingFirstReplyError(
                        f'{model_cfg["abbr"]} x {dataset_cfg["abbr"]} record #{index}: its first '
                        f'call (key {expected["key"]}) has no reply in {store.folder} '
                        f'({problem or "none stored"}), so its answer call cannot be planned; '
                        'run the inference stage again (-r keeps what was answered)'
                    )
                prompt = call.prompt_for(dataset.test[index], reply['text'])
                if prompt is not None:  # no second call (an empty first reply)
                    meta['records'].append(index)
                    parsed = parser.parse_template(prompt, mode='gen')
                    yield prompt_digest(parsed), builder.build(parsed, call.max_out_len)

        return meta, records()


@dataclass
class PairJob:
    """One pair for a worker: where its files go (``folder``/``name``.*), the engine whose
    requests they are, and the cost model's square term."""

    source: Any  # a PairSource, picklable
    folder: str
    name: str
    engine: str
    square: Optional[float] = None


@dataclass
class PairPlan:
    """What a worker planned: requests, prompt tokens, seconds, and where (its process's peak
    memory, host and pid)."""

    name: str
    requests: int
    tokens: int
    seconds: float
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    peak_rss: int = 0


def peak_rss() -> int:
    """This process's peak resident memory in bytes (``VmHWM``), 0 where the system says not."""
    try:
        for line in Path('/proc/self/status').read_text().splitlines():
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def plan_pair(job: PairJob) -> PairPlan:
    """Plan one pair into its three files (see the module)."""
    started = time.perf_counter()
    meta, records = job.source.open()
    sampling = meta['sampling']
    answer = int(sampling['max_tokens'])
    folder = Path(job.folder)
    rows, offset = [], 0
    with atomic_open(folder / f'{job.name}.ids', 'wb') as out:
        for digest_of_prompt, built in records:
            ids = np.ascontiguousarray(built.ids, dtype='<i4')
            raw = ids.tobytes()
            out.write(raw)
            digest = hashlib.sha256(raw).digest()
            key = request_key(job.engine, digest.hex(), sampling)
            cost = request_cost(len(ids), answer, job.square)
            rows.append(
                (np.frombuffer(bytes.fromhex(key), 'u1'), np.frombuffer(digest, 'u1'),
                 np.frombuffer(bytes.fromhex(digest_of_prompt), 'u1'), offset, len(ids),
                 built.budget, bool(built.truncated), cost)
            )  # fmt: skip
            offset += len(ids)
    table = np.array(rows, dtype=ROW)
    with atomic_open(folder / f'{job.name}.rows.npy', 'wb') as out:
        np.save(out, table)
    write_text(folder / f'{job.name}.json', json.dumps({**meta, 'engine': job.engine}))
    return PairPlan(job.name, len(rows), offset, time.perf_counter() - started, peak_rss=peak_rss())


def plan_stage(jobs: list[PairJob], workers: int = 1) -> list[PairPlan]:
    """Every job planned, in folders emptied first; an error of any job is raised here, before
    anything is served."""
    _afresh(jobs)
    return plan_jobs(jobs, workers)


def plan_jobs(jobs: list[PairJob], workers: int = 1) -> list[PairPlan]:
    """Every job planned, by ``workers`` spawned processes (in this one where ``workers`` is 1
    or there is one job), beside what their folders hold."""
    if workers <= 1 or len(jobs) <= 1:
        return [plan_pair(job) for job in jobs]
    import multiprocessing

    context = multiprocessing.get_context('spawn')  # no fork of a driver holding threads
    chosen = min(workers, len(jobs))
    with ProcessPoolExecutor(chosen, mp_context=context, initializer=_no_engine) as pool:
        return list(pool.map(plan_pair, jobs))


def _afresh(jobs: list[PairJob]) -> None:
    """The jobs' folders emptied: no pair of an earlier run's data is ever read as this run's."""
    for folder in {job.folder for job in jobs}:
        shutil.rmtree(folder, ignore_errors=True)
        Path(folder).mkdir(parents=True)


def plan_on_ray(jobs: list[PairJob], ray: Any) -> list[PairPlan]:
    """Every job a Ray task of one CPU, on whichever node of the cluster has room: planning
    spread over the cluster's nodes, each writing its pairs' files to the run folder, which is
    at the same path on every node (as ``RayRunner`` requires)."""
    _afresh(jobs)
    task = ray.remote(num_cpus=1, max_retries=1)(_plan_on_a_node)
    return ray.get([task.remote(job) for job in jobs])


def _plan_on_a_node(job: PairJob) -> PairPlan:
    _no_engine()
    return plan_pair(job)


def _no_engine() -> None:
    """In a planning process: vLLM is never imported. OpenCompass's model package imports it
    where it is installed (seconds and half a GB a process), and planning loads no engine."""
    sys.modules.setdefault('vllm', None)


@dataclass
class PairFile:
    """One planned pair, read back."""

    folder: Path
    name: str
    meta: dict
    rows: np.ndarray

    @property
    def ids_path(self) -> str:
        return str(self.folder / f'{self.name}.ids')


def read_pairs(folder: str | os.PathLike) -> list[PairFile]:
    """The planned pairs of a plan folder."""
    folder = Path(folder)
    pairs = []
    for meta_path in sorted(folder.glob('*.json')):
        name = meta_path.name.removesuffix('.json')
        rows = np.load(folder / f'{name}.rows.npy', mmap_mode='r')
        pairs.append(PairFile(folder, name, json.loads(meta_path.read_text()), rows))
    return pairs


def planned_requests(
    folders: list[str], served_name: str, call: str = 'first'
) -> list[PlannedRequest]:
    """The requests of plan folders for ``call`` ('first', or 'answer': the second calls of
    two-call answers), each key once (two datasets asking the same thing share one reply), their
    ids left on disk."""
    found: dict[str, PlannedRequest] = {}
    for folder in folders:
        for pair in read_pairs(folder):
            if pair.meta.get('call', 'first') != call:
                continue
            sampling, answer = pair.meta['sampling'], int(pair.meta['sampling']['max_tokens'])
            what = ' answer call' if call == 'answer' else ''
            label = f'{pair.meta["model"]} x {pair.meta["dataset"]}{what} #'
            ids = IdsFile(pair.ids_path)
            records = pair.meta.get('records') or range(len(pair.rows))
            for index, row in zip(records, pair.rows):
                key = row['key'].tobytes().hex()
                if key in found:
                    continue
                length = int(row['length'])
                found[key] = PlannedRequest(
                    key=key,
                    cost=int(row['cost']),
                    tokens=length + answer,
                    max_tokens=answer,
                    prompt_tokens=length,
                    digest=row['digest'].tobytes().hex(),
                    model=served_name,
                    sampling=sampling,
                    ids=(ids, int(row['offset']), length),
                    label=f'{label}{index}',
                )
    return list(found.values())


@dataclass(frozen=True)
class PlannedPrompt:
    """What ``ServedVLLM`` needs of a planned prompt: its key, the ids' digest and count, its
    budget and whether it was cut."""

    key: str
    digest: str
    prompt_tokens: int
    budget: int
    truncated: bool


class PlanIndex:
    """A model config's plan, by rendered prompt and sampling."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.asked: dict[tuple[str, bytes], PlannedPrompt] = {}
        self.lengths: dict[str, int] = {}
        self.samplings: dict[str, set[bytes]] = {}  # prompt -> the samplings it was planned with
        for pair in read_pairs(folder):
            sampling = canonical(pair.meta['sampling'])
            for row in pair.rows:
                prompt = row['prompt'].tobytes().hex()
                planned = PlannedPrompt(
                    row['key'].tobytes().hex(),
                    row['digest'].tobytes().hex(),
                    int(row['length']),
                    int(row['budget']),
                    bool(row['truncated']),
                )
                self.asked.setdefault((prompt, sampling), planned)
                self.lengths.setdefault(prompt, planned.prompt_tokens)
                self.samplings.setdefault(prompt, set()).add(sampling)

    def find(self, prompt: Any, sampling: dict) -> tuple[Optional[PlannedPrompt], str]:
        """The planned prompt, or None and why it is not in the plan."""
        digest = prompt_digest(prompt)
        planned = self.asked.get((digest, canonical(sampling)))
        if planned is not None:
            return planned, ''
        if digest in self.samplings:
            other = b'; '.join(sorted(self.samplings[digest])).decode()
            return (
                None,
                f'it was planned with other sampling ({other}), and is asked with {canonical(sampling).decode()}',
            )
        return (
            None,
            f'no prompt rendered as this one (digest {digest}) was planned: its data or template changed since',
        )
