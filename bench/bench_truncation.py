"""Middle truncation of a 256k-word English and a 256k-character Chinese prompt to a 32k window.

A byte-level BPE tokenizer is trained here on the books of ``corpora.py`` (16k vocabulary), then three
ways are timed on each prompt:
  bare      one ``tokenizer.encode`` of the prompt (the floor);
  ours      ``InputBuilder`` (exact inputs): the framed prompt encoded once, cut on ids;
  official  LV-Eval's way: encode, decode both halves, join, apply the chat template, re-encode.
It also reports how many ids each way hands the model against the budget, and whether the
official way changed the kept head or tail.

    python bench/bench_truncation.py [--corpora DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import DEFAULT, read_book  # noqa: E402

from opencompass_lveval.lveval.tasks import TASKS_BY_NAME  # noqa: E402
from opencompass_lveval.models.inputs import InputBuilder  # noqa: E402
from opencompass_lveval.models.settings import InputSettings  # noqa: E402
from opencompass_lveval.prompts.cuttable import MarkedText  # noqa: E402
from opencompass_lveval.testing import train_tokenizer  # noqa: E402

WINDOW, MAX_OUT = 32 * 1024, 64


def official_way(tokenizer, prompt: str, budget: int) -> list[int]:
    """Encode, decode the two halves, re-encode inside the chat template (LV-Eval's prediction.py
    followed by the model's chat formatting)."""
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    if len(ids) > budget:
        half = budget // 2
        prompt = tokenizer.decode(ids[:half]) + tokenizer.decode(ids[-half:])
    chat = tokenizer.apply_chat_template(
        [{'role': 'user', 'content': prompt}], add_generation_prompt=True, tokenize=False
    )
    return tokenizer.encode(chat, add_special_tokens=False)


def best_of(repeat: int, fn, *args, **kwargs) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--corpora', default=str(DEFAULT))
    parser.add_argument('--repeat', type=int, default=5)
    args = parser.parse_args()
    corpora = Path(args.corpora)
    english = ' '.join(read_book(corpora / 'en' / 'war_and_peace.txt').split()[:256_000])
    chinese = ''.join(read_book(corpora / 'zh' / 'xiyouji.txt').split())[:256_000]
    start = time.perf_counter()
    tokenizer = train_tokenizer([english[:2_000_000], chinese[:300_000]], vocab_size=16_000)
    print(
        f'tokenizer: byte-level BPE, {len(tokenizer)} ids, trained in '
        f'{time.perf_counter() - start:.1f} s; window {WINDOW}, max_out_len {MAX_OUT}'
    )
    builder = InputBuilder(tokenizer, InputSettings(window=WINDOW))
    for name, task, context in (
        ('en 256k words', 'factrecall_en', english),
        ('zh 256k chars', 'factrecall_zh', chinese),
    ):
        prompt = TASKS_BY_NAME[task].prompt.format(context=context, input='Q?')
        head = TASKS_BY_NAME[task].prompt.index('{context}')  # marked as the shipped config does
        prompt = MarkedText(prompt, (head, head + len(context)))
        bare_s, ids = best_of(args.repeat, tokenizer.encode, prompt, add_special_tokens=False)
        ours_s, item = best_of(args.repeat, builder.build, prompt, MAX_OUT)
        start, end = item.prompt_span
        suffix = len(item.ids) - end
        budget = WINDOW - MAX_OUT - start - suffix
        official_s, official = best_of(args.repeat, official_way, tokenizer, prompt, budget)
        body = item.ids[start:end]
        head = budget - budget // 2
        exact = body[:head] == ids[:head] and body[head:] == ids[len(ids) - budget // 2 :]
        print(f'{name}: {len(ids)} prompt ids, budget {budget}')
        print(f'  bare encode {bare_s:.3f} s')
        print(
            f'  ours        {ours_s:.3f} s ({ours_s / bare_s:.2f}x bare), {len(body)} prompt ids'
            f' (budget {budget}), head and tail kept exactly: {exact}'
        )
        official_body = official[start : len(official) - suffix]
        print(
            f'  official    {official_s:.3f} s ({official_s / bare_s:.2f}x bare), '
            f'{len(official_body)} prompt ids after re-encoding (budget {budget}), '
            f'ids differing from ours: {sum(a != b for a, b in zip(official_body, body))}, '
            f'broken characters: {tokenizer.decode(official).count(chr(0xFFFD))}'
        )


if __name__ == '__main__':
    main()
