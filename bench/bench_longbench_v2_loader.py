"""Reading LongBench v2's ``data.json`` at its real size: ``json.load`` against this package's
streaming loader, with every field and with the fields a table needs.

Builds (once, seeded) a JSON array shaped like the release: 503 records, contexts of 400k to 1.4M
characters of public-domain English novels and, one record in eight, 130k to 450k characters of
西游记 (about 460 MB, ``indent=1`` as a dump would write it); then times each reader in a fresh
subprocess and reports wall time and peak memory above the process's baseline (``VmHWM`` after
resetting it with ``/proc/self/clear_refs``).

    python bench/bench_longbench_v2_loader.py [--corpora DIR] [--work /tmp/longbench_v2_bench]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from corpora import DEFAULT, read_book
from measured import best_of

RECORDS = 503

SETUP = r"""
mode, path = sys.argv[1], sys.argv[2]
from opencompass_lveval.longbench_v2.data import SCORING_FIELDS, load_records
"""
TIMED = r"""
if mode == 'json.load':
    with open(path, encoding='utf-8') as stream:
        count = len(json.load(stream))
elif mode == 'stream, every field':
    count = len(load_records(path))
else:
    count = len(load_records(path, SCORING_FIELDS))
"""


def build_file(corpora: Path, out: Path, seed: int = 0) -> Path:
    path = out / 'data.json'
    if path.exists():
        return path
    english = ' '.join(read_book(book) for book in sorted((corpora / 'en').glob('*.txt')))
    chinese = ''.join(read_book(book) for book in sorted((corpora / 'zh').glob('*.txt')))
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write('[\n')
        for number in range(RECORDS):
            source, size = (
                (chinese, rng.randint(130_000, 450_000))
                if number % 8 == 0
                else (english, rng.randint(400_000, 1_400_000))
            )
            start = rng.randrange(len(source))
            context = (source * (2 + size // len(source)))[start : start + size]
            record = {
                '_id': f'{number:024x}',
                'domain': 'Single-Document QA',
                'sub_domain': 'Novel',
                'difficulty': rng.choice(['easy', 'hard']),
                'length': rng.choice(['short', 'medium', 'long']),
                'question': f'Question {number}?',
                **{f'choice_{letter}': f'choice {letter}' for letter in 'ABCD'},
                'answer': rng.choice('ABCD'),
                'context': context,
            }
            stream.write(
                (',\n' if number else '') + json.dumps(record, ensure_ascii=False, indent=1)
            )
        stream.write('\n]')
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--corpora', default=str(DEFAULT))
    parser.add_argument('--work', default='/tmp/longbench_v2_bench')
    parser.add_argument('--repeat', type=int, default=2)
    args = parser.parse_args()
    path = build_file(Path(args.corpora), Path(args.work))
    size = path.stat().st_size
    print(f'file: {path} ({size / 1e6:.0f} MB, {RECORDS} records)')
    for mode in ('json.load', 'stream, every field', 'stream, scoring fields'):
        fastest, peak = best_of(args.repeat, SETUP, TIMED, mode, str(path))
        print(
            f'{mode:>22}: best {fastest["seconds"]:.2f} s of {args.repeat}, peak +{peak / 1e6:.0f}'
            f' MB ({peak / size:.2f}x file), records {fastest["count"]}'
        )


if __name__ == '__main__':
    main()
