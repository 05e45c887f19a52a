"""Serve once at full scale: the package's own planner and dispatcher on all of LV-Eval for one
model, and on 100k requests over 64 replicas.

1. **The plan at full LV-Eval size**: 8,645 requests, each of LV-Eval's 55 subsets with its real
   record count (``SAMPLES``, REFERENCE's table) and context lengths (its level in words or
   characters, less up to a quarter as records fall short of it, in tokens at what the Llama-2
   tokenizer gives these books: 1.60 a word, 1.28 a character), cut in the middle to a 128k
   window. The ids come from a fast synthetic tokenization (seeded random ids of those
   lengths), through the real plan code (``serving/plan.py``: spawned workers, int32 ids on
   disk, rows, keys). B: the peak resident memory planning adds (the driver's rise and each
   worker's peak, together) per prompt token; P: its seconds.
2. **The plan's speed on real text**: ``lveval data synth --scale 10`` (LV-Eval's subsets at a
   tenth of their length), rendered by OpenCompass and tokenized by the real Llama-2 tokenizer
   (``tests/data/reference/tokenizers/llama2_sp``), with 1 and 2 worker processes.
3. **100k requests x 64 replicas**: LV-Eval's mix of subsets and lengths scaled to 100,000
   requests (lengths divided by ``LENGTH_SCALE``), planned as in 1 and dispatched by the real
   ``Dispatcher`` into the real ``ReplyStore``, over 64 in-process stand-in replicas of unequal
   speed (``testing/stand_in``: 0.5 to 1.5 times ``BASE_SPEED`` tokens a second, shared among
   the requests each holds, as ``testing/paced_server`` shares it; each holds at most twice the
   largest request).
   R: the makespan against its lower bound, max(total tokens / total speed, largest / fastest);
   S: the share of the wall the dispatcher spent deciding (``DispatchReport.scheduling_s``).

The last line: ``full LV-Eval: plan B bytes/token, P s; 100k requests x 64 replicas: makespan R x
the lower bound, scheduling S% of the wall``. Goals: B <= 5, R <= 1.10, S <= 5.

    python bench/bench_serve_scale.py
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Questions per level of each LV-Eval dataset (REFERENCE.md's table) and their language.
SAMPLES = {
    'loogle_SD_mixup': (160, 'en'), 'cmrc_mixup': (200, 'zh'),
    'multifieldqa_en_mixup': (101, 'en'), 'multifieldqa_zh_mixup': (133, 'zh'),
    'factrecall_en': (200, 'en'), 'factrecall_zh': (200, 'zh'), 'dureader_mixup': (176, 'zh'),
    'loogle_CR_mixup': (99, 'en'), 'loogle_MIR_mixup': (139, 'en'),
    'hotpotwikiqa_mixup': (124, 'en'), 'lic_mixup': (197, 'zh'),
}  # fmt: skip
LEVELS_K = (16, 32, 64, 128, 256)
TOKENS_PER_UNIT = {'en': 1.60, 'zh': 1.28}  # llama2_sp on the corpora's books
WINDOW = 128 * 1024
LENGTH_SCALE = 100  # the 100k requests' lengths: LV-Eval's divided by this
HUNDRED_K = 100_000
REPLICAS = 64
BASE_SPEED = 16_000.0  # tokens a second of the stand-in of average speed
TOKENIZER = REPO / 'tests' / 'data' / 'reference' / 'tokenizers' / 'llama2_sp'


def answer_length(dataset: str) -> int:
    return 16 if dataset.startswith('factrecall') else 64


def record_tokens(dataset: str, level_k: int, index: int, scale: int = 1) -> int:
    """A record's prompt tokens before the cut: its level less a fixed draw of up to a quarter."""
    draw = int(hashlib.sha256(f'{dataset}_{level_k}k#{index}'.encode()).hexdigest()[:8], 16)
    units = level_k * 1000 * (1 - draw / 2**32 / 4)
    return max(1, int(units * TOKENS_PER_UNIT[SAMPLES[dataset][1]] / scale))


@dataclass
class Synthetic:
    """A subset's records as a ``plan.PairSource``: seeded random ids of each record's length,
    cut in the middle to the window less the answer (as the exact inputs cut)."""

    dataset: str
    level_k: int
    count: int
    scale: int = 1
    window: int = WINDOW

    def open(self):
        from opencompass_lveval.models.vllm import request_sampling  # as the real planner does
        from opencompass_lveval.serving.request import prompt_digest

        answer = answer_length(self.dataset)
        abbr = f'LVEval_{self.dataset}_{self.level_k}k'
        sampling = request_sampling(['</s>'], [], {}, answer)
        meta = {'model': 'bench', 'dataset': abbr, 'sampling': sampling}
        budget = self.window - answer

        def records():
            for index in range(self.count):
                length = record_tokens(self.dataset, self.level_k, index, self.scale)
                seed = int(hashlib.sha256(f'{abbr}#{index}'.encode()).hexdigest()[:16], 16)
                ids = np.random.default_rng(seed).integers(3, 32000, length, dtype=np.int32)
                truncated = length > budget
                if truncated:
                    ids = np.concatenate([ids[: budget - budget // 2], ids[length - budget // 2 :]])
                yield prompt_digest(f'{abbr}#{index}'), Built(ids, budget, truncated)

        return meta, records()


@dataclass
class Built:
    ids: np.ndarray
    budget: int
    truncated: bool


def memory_now() -> tuple[int, int]:
    """(resident, peak resident) bytes of this process."""
    found = {}
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith(('VmRSS:', 'VmHWM:')):
            found[line.split(':')[0]] = int(line.split()[1]) * 1024
    return found['VmRSS'], found['VmHWM']


def planned(jobs: list, workers: int) -> dict:
    """Plan ``jobs`` with ``workers``: seconds, tokens, and the memory planning added."""
    from opencompass_lveval.serving.plan import plan_stage

    Path('/proc/self/clear_refs').write_text('5')  # the peak starts from now
    before, _ = memory_now()
    started = time.perf_counter()
    plans = plan_stage(jobs, workers)
    seconds = time.perf_counter() - started
    _, peak = memory_now()
    worker_peaks: dict[int, int] = {}
    for plan in plans:
        worker_peaks[plan.pid] = max(worker_peaks.get(plan.pid, 0), plan.peak_rss)
    worker_peaks.pop(os.getpid(), None)  # planned here: counted in the driver's rise
    tokens = sum(plan.tokens for plan in plans)
    added = (peak - before) + sum(worker_peaks.values())
    return {
        'seconds': seconds,
        'tokens': tokens,
        'requests': sum(plan.requests for plan in plans),
        'bytes_per_token': added / tokens,
        'driver_mb': (peak - before) / 2**20,
        'workers_mb': sum(worker_peaks.values()) / 2**20,
    }


def full_lveval_jobs(folder: Path, scale: int = 1, total: int = 0) -> list:
    """A job per subset, its real record count (or ``total`` shared out in proportion to them),
    the longest subsets first: the workers take them in order."""
    from opencompass_lveval.serving.plan import PairJob

    subsets = [(dataset, level) for dataset in SAMPLES for level in LEVELS_K]
    counts = [SAMPLES[dataset][0] for dataset, _ in subsets]
    if total:
        shares = [total * count / sum(counts) for count in counts]
        counts = [int(share) for share in shares]
        for at in sorted(range(len(shares)), key=lambda i: counts[i] - shares[i])[
            : total - sum(counts)
        ]:
            counts[at] += 1
    jobs = [
        PairJob(
            Synthetic(dataset, level, count, scale), str(folder), f'{dataset}_{level}k', 'bench'
        )
        for (dataset, level), count in zip(subsets, counts)
    ]
    return sorted(jobs, key=lambda job: -job.source.level_k)


def real_text_plan(work: Path, workers: int) -> dict:
    """Part 2: a synthesized LV-Eval at a tenth of its length, rendered and tokenized for real."""
    from opencompass_lveval.cli import main
    from opencompass_lveval.framework.benchmarks import named
    from opencompass_lveval.models.vllm import LongContextVLLM
    from opencompass_lveval.serving.plan import PairJob, RenderedPair

    data, model = work / 'data', work / 'llama2'
    if not data.is_dir():
        assert main(['data', 'synth', str(data), '--count', '4', '--scale', '10']) == 0
        model.mkdir()
        for name in ('tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja'):
            shutil.copy(TOKENIZER / name, model / name)
        config = {'architectures': ['LlamaForCausalLM'], 'model_type': 'llama',
                  'max_position_embeddings': 32768, 'vocab_size': 32000, 'hidden_size': 4096}  # fmt: skip
        (model / 'config.json').write_text(json.dumps(config))
    model_cfg = dict(type=LongContextVLLM, abbr='llama2', path=str(model), max_seq_len=32768)
    jobs = []
    for dataset in named('lveval').configs():
        dataset = {**dataset, 'path': str(data)}
        name = dataset['abbr']
        jobs.append(PairJob(RenderedPair(model_cfg, dataset), str(work / 'plan'), name, 'bench'))
    return planned(jobs, workers)


def hundred_k(work: Path) -> dict:
    """Part 3 (see the module)."""
    from opencompass_lveval.serving.dispatch import Dispatcher, DispatchSettings, Fixed
    from opencompass_lveval.serving.plan import planned_requests
    from opencompass_lveval.serving.store import ReplyStore
    from opencompass_lveval.testing.stand_in import PacedStandIn, stand_in_transport

    jobs = full_lveval_jobs(work / 'plan', LENGTH_SCALE, HUNDRED_K)
    plan = planned(jobs, 2)
    requests = planned_requests([str(work / 'plan')], 'lveval-bench')
    speeds = [BASE_SPEED * (0.5 + i / (REPLICAS - 1)) for i in range(REPLICAS)]
    stand_ins = [PacedStandIn(f'r{i}', speed) for i, speed in enumerate(speeds)]
    total = sum(r.tokens for r in requests)
    largest = max(r.tokens for r in requests)
    bound = max(total / sum(speeds), largest / max(speeds))
    settings = DispatchSettings(
        request_deadline_s=600, cap_tokens=2 * largest, progress=lambda done, total: None
    )
    dispatcher = Dispatcher(
        requests, ReplyStore(work / 'replies'), Fixed(stand_ins), settings, stand_in_transport
    )
    report = dispatcher.run()
    assert report.answered == len(requests) == HUNDRED_K, (report.answered, len(requests))
    return {
        'plan': plan,
        'requests': len(requests),
        'tokens': total,
        'bound': bound,
        'seconds': report.seconds,
        'scheduling_s': report.scheduling_s,
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix='bench-serve-scale-') as folder:
        work = Path(folder)
        full = planned(full_lveval_jobs(work / 'full'), 2)
        print(
            f'full LV-Eval plan: {full["requests"]} requests, {full["tokens"] / 1e6:.0f} M prompt '
            f'tokens after the cut, 2 workers: {full["seconds"]:.1f} s, '
            f'{full["tokens"] / full["seconds"] / 1e6:.1f} M tokens/s; memory added: driver '
            f'{full["driver_mb"]:.0f} MB, workers {full["workers_mb"]:.0f} MB, '
            f'{full["bytes_per_token"]:.3f} bytes/token',
            flush=True,
        )
        shutil.rmtree(work / 'full')
        for workers in (1, 2):
            shutil.rmtree(work / 'plan', ignore_errors=True)
            real = real_text_plan(work, workers)
            print(
                f'real text (lveval data synth --scale 10, Llama-2 tokenizer): {real["requests"]} '
                f'requests, {real["tokens"] / 1e6:.2f} M tokens, {workers} worker'
                f'{"s" if workers > 1 else ""}: {real["seconds"]:.1f} s, '
                f'{real["tokens"] / real["seconds"] / 1e3:.0f}k tokens/s; '
                f'{real["bytes_per_token"]:.1f} bytes/token',
                flush=True,
            )
        shutil.rmtree(work / 'plan', ignore_errors=True)
        large = hundred_k(work / 'hundred')
        ratio, share = large['seconds'] / large['bound'], large['scheduling_s'] / large['seconds']
        print(
            f'100k requests x {REPLICAS} replicas: {large["tokens"] / 1e6:.0f} M tokens, lower '
            f'bound {large["bound"]:.1f} s, makespan {large["seconds"]:.1f} s, deciding '
            f'{large["scheduling_s"]:.2f} s (planned in {large["plan"]["seconds"]:.1f} s)',
            flush=True,
        )
        print(
            f'full LV-Eval: plan {full["bytes_per_token"]:.2f} bytes/token, '
            f'{full["seconds"]:.1f} s; 100k requests x {REPLICAS} replicas: makespan '
            f'{ratio:.2f} x the lower bound, scheduling {share:.1%} of the wall'
        )


if __name__ == '__main__':
    main()
