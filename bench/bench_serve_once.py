"""Serve once against one engine per task: the makespan of LV-Eval's length-skewed workload over
replicas of unequal speed, against its lower bound.

The workload is LV-Eval's 55 subsets (11 datasets x 16k/32k/64k/128k/256k) with their real
sample counts (every level of a dataset has the same questions, so each level holds a fifth of
the samples), scaled down by ``--scale``; a sample's cost in tokens is its level times
``--tokens-per-k`` (less up to a quarter, as samples fall short of their level) plus its
dataset's answer length. The replicas are ``testing/paced_server.py`` processes that work
through ``--speeds`` tokens a second each (by default one at half the speed of the other),
their time in proportion to the tokens they hold.

Three schedules of the same requests, measured on the same servers:
- serve once: every replica loads its engine once (``--engine-load-s``, in parallel), then the
  dispatcher feeds them from one queue, longest first (``serving/dispatch.py``);
- OpenCompass's ``NumWorkerPartitioner`` (``num_worker`` = replicas, as the package's configs
  pair it with ``max_num_workers``) and ``SizePartitioner`` (its defaults), run by their own code
  on the subsets' configs with the sample counts given to them, their size settings scaled like
  the counts: each task, in their order, goes to the first free replica, loads an engine there
  and then sends its requests to it (the same dispatcher, one replica, the same cap).

Lower bound: max(total cost / total speed, largest cost / the fastest speed). The last line:
``makespan R x the lower bound (NumWorkerPartitioner A x, SizePartitioner B x)``.

    python bench/bench_serve_once.py [--scale 0.1] [--speeds 20000 10000] [--engine-load-s 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Questions per level of each LV-Eval dataset (../shared/REFERENCE.md; the paper's table).
SAMPLES = {
    'loogle_SD_mixup': 160, 'cmrc_mixup': 200, 'multifieldqa_en_mixup': 101,
    'multifieldqa_zh_mixup': 133, 'factrecall_en': 200, 'factrecall_zh': 200,
    'dureader_mixup': 176, 'loogle_CR_mixup': 99, 'loogle_MIR_mixup': 139,
    'hotpotwikiqa_mixup': 124, 'lic_mixup': 197,
}  # fmt: skip
_SPLIT_RANGE = re.compile(r'\[\s*(\d*)\s*:\s*(\d*)\s*\]')


@dataclass(frozen=True)
class Subset:
    abbr: str
    level_k: int
    count: int
    answer: int


def subsets(scale: float) -> tuple[list[dict], dict[str, Subset]]:
    """The package's 55 LV-Eval dataset configs, and each one's scaled count and costs."""
    from opencompass_lveval.framework.benchmarks import named

    configs = named('lveval').configs()
    found = {}
    for config in configs:
        dataset, level = config['abbr'].removeprefix('LVEval_').rsplit('_', 1)
        count = max(1, round(SAMPLES[dataset] * scale))
        answer = config['infer_cfg']['inferencer']['max_out_len']
        found[config['abbr']] = Subset(config['abbr'], int(level.removesuffix('k')), count, answer)
    return configs, found


def sample_cost(subset: Subset, index: int, tokens_per_k: int) -> int:
    """Tokens of one sample: its level, less up to a quarter (a fixed draw per sample), plus
    its answer."""
    draw = int(hashlib.sha256(f'{subset.abbr}#{index}'.encode()).hexdigest()[:8], 16) / 2**32
    return int(subset.level_k * tokens_per_k * (1 - draw / 4)) + subset.answer


def requests_of(subset: Subset, indices: range, tokens_per_k: int) -> list:
    """A request per sample, its engine named after its subset (each subset's requests apart)."""
    from opencompass_lveval.serving.request import planned_request

    sampling = {'max_tokens': subset.answer}
    return [
        planned_request(
            subset.abbr,
            [index % 1000] * (sample_cost(subset, index, tokens_per_k) - subset.answer),
            sampling,
            f'{subset.abbr}#{index}',
        )
        for index in indices
    ]


def task_requests(task, found: dict[str, Subset], tokens_per_k: int) -> list:
    """The requests of one partitioner task: whole subsets, or the slices it split them into."""
    made = []
    for dataset in task['datasets'][0]:
        abbr = dataset['abbr']
        subset = found.get(abbr) or found[abbr.rsplit('_', 1)[0]]
        indices = range(subset.count)
        sliced = _SPLIT_RANGE.fullmatch(dataset['reader_cfg'].get('test_range') or '')
        if sliced:
            indices = indices[int(sliced[1] or 0) : int(sliced[2]) if sliced[2] else None]
        made += requests_of(subset, indices, tokens_per_k)
    return made


def partitioned(kind: str, configs: list[dict], found: dict, replicas: int, scale: float, work):
    """OpenCompass's partitioner ``kind`` on the subsets: its tasks, in its order."""
    from mmengine.config import ConfigDict
    from opencompass.partitioners import NumWorkerPartitioner, SizePartitioner

    sizes = Path(work) / f'{kind}_sizes.json'
    sizes.write_text(json.dumps({abbr: s.count for abbr, s in found.items()}))
    if kind == 'NumWorkerPartitioner':
        partitioner = NumWorkerPartitioner(
            out_dir=str(Path(work) / 'predictions'), num_worker=replicas,
            min_task_size=max(1, round(16 * scale)), dataset_size_path=str(sizes),
        )  # fmt: skip
    else:
        partitioner = SizePartitioner(
            out_dir=str(Path(work) / 'predictions'), max_task_size=round(40000 * scale),
            dataset_size_path=str(sizes),
        )  # fmt: skip
    model = ConfigDict(abbr='bench-model', type='paced')
    combination = {'models': [model], 'datasets': [ConfigDict(c) for c in configs]}
    return partitioner.partition([combination], str(work), str(Path(work) / 'predictions'))


def quiet(done: int, total: int) -> None:
    pass


def serve_once(requests: list, replicas: list, cap: int, load_s: float, store) -> float:
    """Seconds from the start: one engine load per replica (at once), then one dispatch."""
    from opencompass_lveval.serving.dispatch import dispatch

    started = time.monotonic()
    time.sleep(load_s)
    dispatch(requests, replicas, store, cap, 600, progress=quiet)
    return time.monotonic() - started


def engine_per_task(tasks: list[list], replicas: list, cap: int, load_s: float, store) -> float:
    """Seconds from the start: each task, in order, on the first free replica, an engine load
    then its requests."""
    from opencompass_lveval.serving.dispatch import dispatch

    waiting, lock, started = deque(tasks), threading.Lock(), time.monotonic()

    def worker(replica) -> None:
        while True:
            with lock:
                if not waiting:
                    return
                task = waiting.popleft()
            time.sleep(load_s)
            dispatch(task, [replica], store, cap, 600, progress=quiet)

    threads = [threading.Thread(target=worker, args=(replica,)) for replica in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def paced_specs(speeds: list[float], folder: Path) -> list:
    from opencompass_lveval.serving.placement import ReplicaSpec

    specs = []
    for index, speed in enumerate(speeds):
        argv = [sys.executable, '-m', 'opencompass_lveval.testing.paced_server', '--port',
                '{port}', '--tokens-per-s', str(speed), '--log', str(folder / f'r{index}.jsonl')]  # fmt: skip
        specs.append(ReplicaSpec(f'r{index}', argv, {}, 0))
    return specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.1, help='of the real sample counts')
    parser.add_argument('--tokens-per-k', type=int, default=10, help='tokens per 1k of level')
    parser.add_argument('--speeds', type=float, nargs='+', default=[20000, 10000])
    parser.add_argument('--engine-load-s', type=float, default=1.0)
    args = parser.parse_args()
    from opencompass_lveval.serving.placement.local import LocalPlacement
    from opencompass_lveval.serving.replicas import serving
    from opencompass_lveval.serving.store import ReplyStore

    configs, found = subsets(args.scale)
    every = [r for s in found.values() for r in requests_of(s, range(s.count), args.tokens_per_k)]
    total, largest = sum(r.cost for r in every), max(r.cost for r in every)
    bound = max(total / sum(args.speeds), largest / max(args.speeds))
    cap = 2 * largest  # two of the longest samples in flight, as a GPU's KV cache of ~2 x 256k
    by_level = {}
    for subset in found.values():
        cost = sum(sample_cost(subset, i, args.tokens_per_k) for i in range(subset.count))
        by_level[subset.level_k] = by_level.get(subset.level_k, 0) + cost
    print(f'workload: {len(every)} requests in {len(found)} subsets, {total} tokens; share of the '
          'work by level: ' + ', '.join(f'{k}k {v / total:.0%}' for k, v in sorted(by_level.items())))  # fmt: skip
    print(
        f'replicas: {args.speeds} tokens/s; engine load {args.engine_load_s:g} s; '
        f'cap {cap} tokens in flight; lower bound {bound:.1f} s'
    )
    rows = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        schedules = {'serve once': None}
        for kind in ('NumWorkerPartitioner', 'SizePartitioner'):
            tasks = partitioned(kind, configs, found, len(args.speeds), args.scale, work)
            schedules[kind] = [task_requests(t, found, args.tokens_per_k) for t in tasks]
            assert sorted(r.key for t in schedules[kind] for r in t) == sorted(r.key for r in every)
        specs = paced_specs(args.speeds, work)
        placement = LocalPlacement(log_dir=work / 'logs', num_cpus=0.5)
        with serving(placement, specs, 60) as replicas:
            for name, tasks in schedules.items():
                store = ReplyStore(work / name.replace(' ', '_'))
                if tasks is None:
                    seconds = serve_once(every, replicas, cap, args.engine_load_s, store)
                    loads = len(replicas)
                else:
                    seconds = engine_per_task(tasks, replicas, cap, args.engine_load_s, store)
                    loads = len(tasks)
                assert all(store.answered(r.expected()) for r in every), name
                rows.append((name, loads, seconds, seconds / bound))
                print(
                    f'{name:22} engine loads {loads:3}  makespan {seconds:7.1f} s  '
                    f'{seconds / bound:.2f} x the lower bound',
                    flush=True,
                )
    ratio = {name: r for name, _, _, r in rows}
    print(
        f'makespan {ratio["serve once"]:.2f} x the lower bound (NumWorkerPartitioner '
        f'{ratio["NumWorkerPartitioner"]:.2f} x, SizePartitioner {ratio["SizePartitioner"]:.2f} x)'
    )


if __name__ == '__main__':
    main()
