"""Loading one LV-Eval subset of real size: our loader against a bare per-line ``json.loads``.

Builds (once, seeded) a file shaped like ``hotpotwikiqa_mixup_128k``: 124 records whose contexts
are 128k words of public-domain novels from the books of ``corpora.py`` (about 95 MB), and a file with
one record of ``--huge-mb`` MB (50 by default) between two small ones, far over Arrow's 4 MB block;
then times each loader in a fresh subprocess and reports wall time and peak memory above the
process's baseline (``VmHWM`` after resetting it with ``/proc/self/clear_refs``).

    python bench/bench_loader.py [--corpora DIR] [--work /tmp/lveval_bench]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from corpora import DEFAULT, read_book
from measured import best_of

RECORDS, WORDS = 124, 128_000

SETUP = r"""
import os
mode, path = sys.argv[1], sys.argv[2]
name = os.path.basename(path)[:-len('.jsonl')]
if mode != 'bare':
    from opencompass_lveval.lveval.dataset import LVEvalDataset
    from opencompass_lveval.lveval.data import SubsetSource
"""
TIMED = r"""
if mode == 'bare':
    with open(path, encoding='utf-8') as f:
        rows = [json.loads(line) for line in f]
    count = len(rows)
elif mode == 'ours':
    count = len(LVEvalDataset.load(name=name, path=os.path.dirname(path)))
else:  # the whole OpenCompass-facing construction, reader included
    count = len(LVEvalDataset(abbr='x', name=name, path=os.path.dirname(path),
                              reader_cfg=dict(input_columns=['context', 'input'],
                                              output_column='answers')).test)
"""


def build_file(corpora: Path, out: Path, seed: int = 0) -> Path:
    path = out / 'hotpotwikiqa_mixup_128k.jsonl'
    if path.exists():
        return path
    words = []
    for book in sorted((corpora / 'en').glob('*.txt')):
        words.extend(read_book(book).split())
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    with open(path, 'w', encoding='utf-8') as stream:
        for i in range(RECORDS):
            start = rng.randrange(len(words) - WORDS)
            record = dict(
                input=f'Question {i}?',
                context=' '.join(words[start : start + WORDS]),
                answers=[f'answer {i}'],
                length=WORDS,
                dataset='hotpotwikiqa_mixup',
                language='en',
                answer_keywords=f'answer {i}',
                confusing_facts=[],
                all_classes=None,
            )
            stream.write(json.dumps(record, ensure_ascii=False) + '\n')
    return path


def build_huge_file(corpora: Path, out: Path, megabytes: int) -> Path:
    """``factrecall_en_1000k.jsonl``: a small record, one of ``megabytes`` MB of book text, a small
    one."""
    folder = out / 'huge'
    path = folder / 'factrecall_en_1000k.jsonl'
    if path.exists() and path.stat().st_size > megabytes * 1e6:
        return path
    text = ' '.join(read_book(book) for book in sorted((corpora / 'en').glob('*.txt')))
    context = (text * (1 + megabytes * 1_000_000 // len(text)))[: megabytes * 1_000_000]
    folder.mkdir(parents=True, exist_ok=True)
    with open(path, 'w', encoding='utf-8') as stream:
        for number, body in enumerate(('A short context.', context, 'Another one.')):
            record = dict(input=f'Question {number}?', context=body, answers=['answer'])
            stream.write(json.dumps(record, ensure_ascii=False) + '\n')
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--corpora', default=str(DEFAULT))
    parser.add_argument('--work', default='/tmp/lveval_bench')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--huge-mb', type=int, default=50, help='size of the one huge record')
    args = parser.parse_args()
    path = build_file(Path(args.corpora), Path(args.work))
    size = path.stat().st_size
    print(f'file: {path} ({size / 1e6:.1f} MB, {RECORDS} records x {WORDS} words)')
    best = {}
    for mode in ('bare', 'ours', 'ours_oc'):
        best[mode], peak = best_of(args.repeat, SETUP, TIMED, mode, str(path))
        print(
            f'{mode:>5}: best {best[mode]["seconds"]:.3f} s of {args.repeat}, '
            f'peak +{peak / 1e6:.0f} MB ({peak / size:.2f}x file), rows {best[mode]["count"]}'
        )
    ratio = best['ours']['seconds'] / best['bare']['seconds']
    print(
        f'time ours/bare: {ratio:.2f}x (target <= 2x); '
        f'peak ours/file: {best["ours"]["peak_bytes"] / size:.2f}x (target <= 2x)'
    )
    huge = build_huge_file(Path(args.corpora), Path(args.work), args.huge_mb)
    size = huge.stat().st_size
    print(f'file: {huge} ({size / 1e6:.1f} MB, one record of {args.huge_mb} MB between two small)')
    for mode in ('bare', 'ours'):
        fastest, peak = best_of(args.repeat, SETUP, TIMED, mode, str(huge))
        print(
            f'{mode:>5}: best {fastest["seconds"]:.3f} s of {args.repeat}, '
            f'peak +{peak / 1e6:.0f} MB ({peak / size:.2f}x file), rows {fastest["count"]}'
        )


if __name__ == '__main__':
    main()
