"""MRCR v2 tasks assembled from texts, row for row as Google DeepMind's ``generate_mrcr_v2``
(eval_hub ``mrcr_v2/mrcr_utils.py``, commit 67b7fd29) makes them from the same texts and seed.

The texts are three nested tables, format -> topic -> style -> seed name -> text: the relevant
ones (the needles' kind), the irrelevant ones (filler) and the few-shot ones. A transcript is a
few-shot prefix, then every seed of as many relevant (format, topic, style) groups as fit, in a
random interleaving, then filler turns inserted at random places until the next would overflow
the target; each row asks for the i-th text of one group, prefixed by the group's random hash.

Equal to the official rows means equal random draws in the same order, so the official sequence
is kept exactly (``random.Random(seed)`` gives the stream of ``random.seed(seed)``): a 12-character
hash is drawn for every relevant text (only the first of each group is kept), the groups are
shuffled, each tried group's seeds are shuffled (a refused one too), the few-shot examples are
drawn until the prefix has 750-800 tokens, the groups' order and the interleaving are drawn, the
filler order is shuffled on first use only, and each group's answers are shuffled.

``official`` mode keeps ``samples_per_bucket`` as the official code does: its limit only stops the
answers of the current group, so every later group still adds one row (5 asked gave 10 and 11
rows on the golden texts). ``default`` stops at the limit. Token counts come from
``count_tokens(text)`` (the official takes a tokenizer returning ids and count; only the count
is used); each distinct text is counted once. Files are data: nothing read is evaluated.
"""

from __future__ import annotations

import math
import random
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Optional

from .prompts import (
    FEW_SHOT_PREFIX,
    FEW_SHOT_PREFIX_JSON,
    INDEX_NAMES,
    TARGET_FEWSHOT_TOKENS,
    fewshot_text,
    final_query,
    follow_up,
    json_prefix,
    turn_text,
    write_query,
)

TextTable = Mapping[str, Mapping[str, Mapping[str, Mapping[str, str]]]]
_HASH_ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits
_MAX_TRIES = 1000  # the official limit on transcripts per bucket and few-shot draws


def random_hash(rng: random.Random) -> str:
    """A 12-character alphanumeric string, one draw per character."""
    return ''.join(rng.choice(_HASH_ALPHABET) for _ in range(12))


def buckets_up_to(max_context: int, pointwise: bool = False) -> list[tuple[int, int]]:
    """``get_contexts``: (low, high] token buckets, powers of two from the largest below
    ``max_context`` down to (4096, 8192); a top bucket to ``max_context`` when it is no power of
    two; ``pointwise``: the top bucket only."""
    exponent = int(math.log(max_context, 2))
    buckets = []
    if 2**exponent < max_context:
        buckets.append((2**exponent, max_context))
        if pointwise:
            return buckets
    stop = exponent - 13 if pointwise else 0
    for i in range(exponent - 12, stop, -1):
        buckets.append((4096 * 2 ** (i - 1), 4096 * 2**i))
    return buckets


class Counter:
    """``count_tokens`` with each distinct text counted once."""

    def __init__(self, count_tokens: Callable[[str], int]) -> None:
        self.count_tokens, self.known = count_tokens, {}

    def __call__(self, text: str) -> int:
        if text not in self.known:
            self.known[text] = self.count_tokens(text)
        return self.known[text]


def flat_texts(table: TextTable) -> Iterator[tuple[tuple[str, str, str], str, str]]:
    """((format, topic, style), seed name, text) for every non-empty text, in table order."""
    for fmt, topics in table.items():
        for topic, styles in topics.items():
            for style, seeds in styles.items():
                for seed, text in seeds.items():
                    if text and isinstance(text, str):
                        yield (fmt, topic, style), seed, text


@dataclass
class Turn:
    """One user-assistant exchange of the transcript."""

    text: str  # as it appears in the transcript
    tokens: int  # of ``text``
    answer: str = ''  # the assistant's text alone
    answer_tokens: int = 0
    group: Optional[tuple[str, str, str]] = None  # relevant turns only


@dataclass
class Group:
    """The relevant texts of one (format, topic, style)."""

    key: tuple[str, str, str]
    random_hash: str
    follow_up_tokens: int  # the longest final question over the index names used
    seeds: list[Turn] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # turn numbers in the transcript
    spans: list[tuple[int, int]] = field(default_factory=list)  # token spans of the answers


def _check_labels(key: tuple[str, str, str]) -> None:
    """The official puts labels into the final question's text and then calls ``str.format`` on
    it (twice for the few-shot examples): a brace in a label breaks it, so it is refused."""
    if any('{' in label or '}' in label for label in key):
        raise ValueError(f'MRCR text labels must not hold braces: {key!r}')


def relevant_groups(
    table: TextTable, needles: int, json_style: bool, count: Counter, rng: random.Random
) -> dict[tuple[str, str, str], Group]:
    """Every relevant group with all its texts as turns, in table order; one hash drawn per text
    (the first of each group is its hash)."""
    groups: dict[tuple[str, str, str], Group] = {}
    for key, _, text in flat_texts(table):
        _check_labels(key)
        drawn = random_hash(rng)
        if key not in groups:
            longest = max(count(follow_up(drawn, name, *key)) for name in INDEX_NAMES[:needles])
            groups[key] = Group(key, drawn, longest)
        turn = turn_text(write_query(*key), text, json_style)
        groups[key].seeds.append(Turn(turn, count(turn), text, count(text), key))
    return groups


def chosen_groups(
    groups: dict[tuple[str, str, str], Group], target: int, needles: int, rng: random.Random
) -> list[Group]:
    """The groups that fit ``target`` tokens (an estimate: 800 for the few-shot prefix, the
    longest final question, ``needles`` seeds of each), tried in a random order until one does
    not; each tried group's seeds are shuffled, and the first ``needles`` kept."""
    order = list(groups.values())
    rng.shuffle(order)
    estimate = TARGET_FEWSHOT_TOKENS + max((g.follow_up_tokens for g in order), default=0)
    chosen = []
    for group in order:
        seeds = list(group.seeds)
        rng.shuffle(seeds)
        kept = seeds[:needles]
        trial = estimate + sum(seed.tokens for seed in kept)
        if trial > target:
            break
        estimate = trial
        chosen.append(Group(group.key, group.random_hash, group.follow_up_tokens, kept))
    return chosen


def _pick(rng: random.Random, table: Mapping) -> str:
    return rng.choice(list(table))


def _two_seeds(rng: random.Random, seeds: Mapping[str, str], first: str) -> str:
    """A seed name other than ``first``, drawn again while it repeats it (the official loops
    forever where no other name exists; that is an error here)."""
    if set(seeds) == {first}:
        raise ValueError(f'a few-shot (format, topic, style) needs a second text besides {first!r}')
    second = _pick(rng, seeds)
    while second == first:
        second = _pick(rng, seeds)
    return second


def drawn_examples(fewshot: TextTable, rng: random.Random) -> tuple[str, str]:
    """One draw of the two few-shot examples: two requests then the first text asked back,
    and two texts of one request then the second asked back."""
    fmts = _pick(rng, fewshot), _pick(rng, fewshot)
    topics = _pick(rng, fewshot[fmts[0]]), _pick(rng, fewshot[fmts[1]])
    styles = _pick(rng, fewshot[fmts[0]][topics[0]]), _pick(rng, fewshot[fmts[1]][topics[1]])
    _check_labels((fmts[0], topics[0], styles[0]))
    _check_labels((fmts[1], topics[1], styles[1]))
    first_seeds = fewshot[fmts[0]][topics[0]][styles[0]]
    other_seeds = fewshot[fmts[1]][topics[1]][styles[1]]
    first_name = _pick(rng, first_seeds)
    first_text = first_seeds[first_name]
    other_text = other_seeds[_two_seeds(rng, other_seeds, first_name)]
    first_hash = random_hash(rng)
    example_one = (
        turn_text(write_query(fmts[0], topics[0], styles[0]), first_text, False)
        + turn_text(write_query(fmts[1], topics[1], styles[1]), other_text, False)
        + follow_up(first_hash, 'first', fmts[0], topics[0], styles[0])
        + f' {first_hash}{first_text}'
    )
    fmt = _pick(rng, fewshot)
    topic = _pick(rng, fewshot[fmt])
    style = _pick(rng, fewshot[fmt][topic])
    _check_labels((fmt, topic, style))
    seeds = fewshot[fmt][topic][style]
    name = _pick(rng, seeds)
    later = seeds[_two_seeds(rng, seeds, name)]
    second_hash = random_hash(rng)
    query = write_query(fmt, topic, style)
    example_two = (
        turn_text(query, seeds[name], False)
        + turn_text(query, later, False)
        + follow_up(second_hash, 'second', fmt, topic, style)
        + f' {second_hash}{later}'
    )
    return example_one, example_two


def drawn_fewshot(fewshot: TextTable, json_style: bool, count: Counter, rng: random.Random):
    """(prefix, tokens): examples drawn until the prefix has 750 to 800 tokens; in JSON style
    the prefix then becomes the transcript's first message."""
    prefix, tokens = '', 0
    for _ in range(_MAX_TRIES):
        if TARGET_FEWSHOT_TOKENS - 50 <= tokens <= TARGET_FEWSHOT_TOKENS:
            break
        prefix = fewshot_text(*drawn_examples(fewshot, rng), json_style)
        tokens = count(prefix)
    else:
        if not TARGET_FEWSHOT_TOKENS - 50 <= tokens <= TARGET_FEWSHOT_TOKENS:
            raise ValueError(
                f'no few-shot prefix of 750 to 800 tokens in {_MAX_TRIES} draws (the last had '
                f'{tokens}): give few-shot texts whose pairs can fit that range'
            )
    if json_style:
        prefix = json_prefix(prefix)
        tokens = count(prefix)
    return prefix, tokens


def filler_turns(
    table: TextTable, json_style: bool, count: Counter, rng: random.Random
) -> Iterator[Turn]:
    """The irrelevant texts as turns, in one random order, repeated without end; the order is
    drawn when the first is taken (the official's generator shuffles on first use)."""
    items = [(write_query(*key), text) for key, _, text in flat_texts(table)]
    rng.shuffle(items)
    if not items:
        raise ValueError('no irrelevant texts to fill the transcript with')
    while True:
        for query, text in items:
            turn = turn_text(query, text, json_style)
            yield Turn(turn, count(turn), text, count(text))


def interleaved(groups: list[Group], start: int, target: int, rng: random.Random) -> list[Turn]:
    """The chosen groups' seeds in one random interleaving (each group's in its order), stopping
    once ``target`` tokens are reached."""
    order = list(groups)
    rng.shuffle(order)
    queues = [iter(group.seeds) for group in order]
    turns, tokens = [], start
    while queues:
        index = rng.randrange(0, len(queues))
        seed = next(queues[index], None)
        if seed is None:
            queues.pop(index)
            continue
        turns.append(seed)
        tokens += seed.tokens
        if tokens >= target:
            break
    return turns


def with_filler(
    turns: list[Turn], filler: Iterator[Turn], tokens: int, target: int, rng: random.Random
) -> int:
    """Insert filler turns at random places (before any turn) while the next one fits
    ``target``; returns the transcript's tokens."""
    while tokens < target and turns:
        turn = next(filler)
        if tokens + turn.tokens > target:
            break
        tokens += turn.tokens
        turns.insert(rng.randrange(0, len(turns)), turn)
    return tokens


@dataclass
class Transcript:
    text: str
    tokens: int
    groups: list[Group]  # each with the turn numbers and token spans of its seeds


def transcript(
    texts: Mapping[str, TextTable],
    target: int,
    needles: int,
    static_fewshot: bool,
    json_style: bool,
    count: Counter,
    rng: random.Random,
) -> Transcript:
    """One transcript of about ``target`` tokens (``create_final_transcript_and_metadata``);
    ``texts`` holds the ``relevant``, ``irrelevant`` and ``fewshot`` tables."""
    groups = chosen_groups(
        relevant_groups(texts['relevant'], needles, json_style, count, rng), target, needles, rng
    )
    filler = filler_turns(texts['irrelevant'], json_style, count, rng)
    if static_fewshot:
        prefix = json_prefix(FEW_SHOT_PREFIX_JSON) if json_style else FEW_SHOT_PREFIX
        prefix_tokens = count(prefix)
    else:
        prefix, prefix_tokens = drawn_fewshot(texts['fewshot'], json_style, count, rng)
    turns = interleaved(groups, prefix_tokens, target, rng)
    tokens = with_filler(turns, filler, prefix_tokens + sum(t.tokens for t in turns), target, rng)
    by_key = {group.key: group for group in groups}
    position = prefix_tokens
    for number, turn in enumerate(turns):
        if turn.group is not None:
            by_key[turn.group].positions.append(number)
            by_key[turn.group].spans.append((position, position + turn.answer_tokens))
        position += turn.tokens
    return Transcript(prefix + ''.join(turn.text for turn in turns), tokens, groups)


def task_rows(
    made: Transcript,
    needles: int,
    limit: int,
    json_style: bool,
    count: Counter,
    rng: random.Random,
    mode: str,
) -> list[dict]:
    """The rows one transcript gives (``generate_queries_and_answers``): each group's seeds in a
    random order, each asked for by its position; ``limit`` stops the current group only in
    official mode, every row in default mode."""
    rows: list[dict] = []
    for group in made.groups:
        if mode == 'default' and len(rows) >= limit:
            break
        if len(group.spans) < len(group.seeds):
            raise ValueError(
                f'the transcript of {made.tokens} tokens ended before every seed of {group.key} '
                'was placed (the official generator fails here too): raise the target length'
            )
        asked = list(enumerate(group.seeds))
        rng.shuffle(asked)
        for index, seed in asked:
            question = final_query(
                follow_up(group.random_hash, INDEX_NAMES[index], *group.key), json_style
            )
            rows.append(
                {
                    'queries': made.text + question,
                    'answer': group.random_hash + seed.answer,
                    'context_len': made.tokens + count(question),
                    'answer_token_count': seed.answer_tokens,
                    'view_ops': question,
                    'num_relevant': needles,
                    'answer_context_position': group.spans[index],
                    'index_positions_of_seeds': list(group.positions),
                    'relevant_context_positions': list(group.spans),
                }
            )
            if len(rows) >= limit:
                break
    return rows


def generate_mrcr_v2(
    texts: Mapping[str, TextTable],
    *,
    needles: int,
    samples_per_bucket: int,
    buckets: list[tuple[int, int]],
    static_fewshot: bool,
    json_style: bool,
    count_tokens: Callable[[str], int],
    seed: int,
    mode: str = 'default',
) -> list[dict]:
    """Every bucket's rows, buckets in ascending order (the official DataFrame's rows): the first
    transcript of a bucket aims at its top, the second at its middle, the rest at a random length
    in it, until ``samples_per_bucket`` rows are made (``mode``: see the module)."""
    if mode not in ('default', 'official'):
        raise ValueError(f"mode must be 'default' or 'official', not {mode!r}")
    if not 1 <= needles <= len(INDEX_NAMES):
        raise ValueError(f'needles must be 1 to {len(INDEX_NAMES)}, not {needles}')
    rng, count = random.Random(seed), Counter(count_tokens)
    made: dict[tuple[int, int], list[dict]] = {}
    for low, high in buckets:
        rows: list[dict] = []
        targets = iter((high, (low + high) // 2))
        for _ in range(_MAX_TRIES):
            if len(rows) >= samples_per_bucket:
                break
            target = next(targets, None)
            if target is None:
                target = rng.randint(low + 1, high)
            one = transcript(texts, target, needles, static_fewshot, json_style, count, rng)
            limit = samples_per_bucket - (len(rows) if mode == 'default' else 0)
            rows += task_rows(one, needles, limit, json_style, count, rng, mode)
        if len(rows) < samples_per_bucket:
            raise ValueError(
                f'only {len(rows)} of {samples_per_bucket} rows for bucket ({low}, {high}) after '
                f'{_MAX_TRIES} transcripts: give more texts or a smaller bucket'
            )
        made[(low, high)] = rows
    return [row for bucket in sorted(made) for row in made[bucket]]
