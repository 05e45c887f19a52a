"""RULER's five generators, written from NVIDIA/RULER c3f5e3b's ``scripts/data/synthetic/*.py``
to give the same bytes for the same inputs, seed, tokenizer, length, count and template.

What that takes (docs/ruler.md, "Quirks"): each generator owns one ``random.Random(seed)`` and
one ``numpy.random.RandomState(seed)`` standing for the official script's seeded global states,
and draws from them in the official order, binary-search probes included (every probe builds a
whole sample). Shuffles use a fresh ``random.Random(seed)`` each time, as the official code
does. A sample over the budget, by even one token, is rebuilt one whole step smaller (500 essay
words, 25 noise lines, 10 documents, ...), with new draws. Lengths are counted on the prompt
with its answer prefix, plus the tokens kept for the answer.

Where the official code would loop forever (a sample that never fits at the smallest step, more
samples than QA questions) these raise ``RulerBuildError`` instead.
"""

from __future__ import annotations

import functools
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import inputs as files
from .tasks import CWE_PREFIX, FWE_PREFIX, NIAH_PREFIX, QA_PREFIX, VT_PREFIX, VT_TEMPLATE, RulerTask

NOISE = 'The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.'
NEEDLE = 'One of the special magic {type_needle_v} for {key} is: {value}.'
# Retries at the smallest step before giving up (the official code retries forever).
MAX_RETRIES_AT_FLOOR = 1000


class RulerBuildError(ValueError):
    """A RULER file that cannot be built as asked; the message says why and what to change."""


class Overflow(Exception):
    """A sample longer than the budget: the official loop drops a step and draws again."""


# Errors the official sample loop swallows too (its bare ``except:``): a variable chain that a
# repeated name cut short (IndexError), more distinct words asked than a list has (ValueError).
RETRIED = (Overflow, IndexError, ValueError)


@dataclass
class Job:
    """One file to generate and what it is made from."""

    task: RulerTask
    length: int  # max_seq_length: prompt tokens plus the tokens kept for the answer
    count: int
    seed: int
    template: str  # the filled template (model template, task prompt, answer prefix)
    counter: Callable[[str], int]
    inputs: Optional[Path]
    punkt: Optional[Path] = None
    rng: random.Random = field(init=False)
    nprng: object = field(init=False)
    probes: list[tuple[int, int]] = field(default_factory=list)  # (size, tokens) per probe
    records: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        import numpy as np

        self.rng = random.Random(self.seed)
        self.nprng = np.random.RandomState(self.seed)

    def shuffle(self, items: list) -> None:
        """RULER's shuffles: a fresh generator seeded alike each time."""
        random.Random(self.seed).shuffle(items)


def search_size(
    job: Job, make: Callable[[int], int], lower: int, upper: int, budget: int
) -> Optional[int]:
    """The official binary search: the largest size whose probe fits ``budget`` (None if none);
    ``make(size)`` builds a probe (drawing from the job's generators) and returns its tokens."""
    found = None
    while lower <= upper:
        middle = (lower + upper) // 2
        total = make(middle)
        job.probes.append((middle, total))
        if total <= budget:
            found, lower = middle, middle + 1
        else:
            upper = middle - 1
    return found


def fit(attempt: Callable[[int], tuple], size: int, step: int, what: str):
    """A sample at ``size``, each failed attempt one ``step`` smaller down to ``step``, then
    retried at that size (new draws each time) as the official loop does."""
    at_floor = 0
    while True:
        try:
            return attempt(size)
        except RETRIED as exc:
            if size > step:
                size -= step
                continue
            at_floor += 1
            if at_floor >= MAX_RETRIES_AT_FLOOR:
                raise RulerBuildError(
                    f'{what}: no sample fits even at the smallest haystack ({size}) after '
                    f'{at_floor} tries ({type(exc).__name__}: {exc}); the official generator '
                    'loops forever here: give a larger --length'
                ) from exc


def cut_prefix(text: str, prefix: str) -> tuple[str, str]:
    """(input, answer_prefix): the text cut at the last occurrence of the prefix's first ten
    characters, as the official files store them."""
    at = text.rfind(prefix[:10])
    return text[:at], text[at:]


def _record(index: int, text: str, outputs: list, length: int, prefix: str) -> dict:
    text, answer_prefix = cut_prefix(text, prefix)
    return {
        'index': index,
        'input': text,
        'outputs': outputs,
        'length': length,
        'length_w_model_temp': length,
        'answer_prefix': answer_prefix,
    }


def _checked(length: int, budget: int, text: str, answer):
    if length > budget:
        raise Overflow(f'{length} exceeds {budget}')
    return text, answer, length


# niah ------------------------------------------------------------------------------------------


def _depths() -> list[int]:
    import numpy as np

    return [int(d) for d in np.round(np.linspace(0, 100, num=40, endpoint=True)).astype(int)]


def niah(job: Job) -> list[dict]:
    args, rng, count = job.task.args, job.rng, job.counter
    kind_k, kind_v, haystack_kind = (
        args['type_needle_k'],
        args['type_needle_v'],
        args['type_haystack'],
    )
    num_v, num_q = args['num_needle_v'], args['num_needle_q']
    num_k = max(args['num_needle_k'], num_q)
    words = files.needle_words() if 'words' in (kind_k, kind_v) else None
    depths = _depths()

    def draw(kind: str) -> str:
        if kind == 'numbers':
            return str(rng.randint(10**6, 10**7 - 1))
        if kind == 'words':
            return rng.choice(words)
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    if haystack_kind == 'essay':
        essay = files.essay_words(job.inputs)
        split = files.sentence_splitter(job.punkt or files.punkt_folder(job.inputs))

        @functools.lru_cache(maxsize=8)
        def sentences(size: int) -> tuple[str, ...]:
            words_used = (
                essay[:size] if size <= len(essay) else (essay * -(-size // len(essay)))[:size]
            )
            return tuple(split(' '.join(words_used).strip()))

    template = job.template
    type_word = kind_v
    if num_q * num_v == 1:
        for old, new in (('Some', 'A'), ('are all', 'is'), ('are', 'is'), ('answers', 'answer')):
            template = template.replace(old, new)
        type_word = kind_v[:-1]

    def make(size: int) -> tuple[str, list[str]]:
        keys, values, needles = [], [], []
        for _ in range(num_k):
            keys.append(draw(kind_k))
            value = []
            for _ in range(num_v):
                value.append(draw(kind_v))
                needles.append(NEEDLE.format(type_needle_v=kind_v, key=keys[-1], value=value[-1]))
            values.append(value)
        job.shuffle(needles)
        if haystack_kind == 'essay':
            found = sentences(size)
            cuts = [int(len(found) * (depth / 100)) for depth in rng.sample(depths, len(needles))]
            cuts = [0, *sorted(cuts), len(found)]
            parts = []
            for i in range(1, len(cuts)):
                parts.append(' '.join(found[cuts[i - 1] : cuts[i]]))
                if i - 1 < len(needles):
                    parts.append(needles[i - 1])
            context = ' '.join(parts)
        else:
            if haystack_kind == 'noise':
                lines = [NOISE] * size
            else:
                lines = [
                    NEEDLE.format(type_needle_v=kind_v, key=draw(kind_k), value=draw(kind_v))
                    for _ in range(size)
                ]
            for index, needle in zip(
                sorted(rng.sample(range(size), len(needles)), reverse=True), needles
            ):
                lines.insert(index, needle)
            context = '\n'.join(lines)
        chosen = rng.sample(range(num_k), num_q)
        queries = [keys[i] for i in chosen]
        answers = [a for i in chosen for a in values[i]]
        query = ', '.join(queries[:-1]) + ', and ' + queries[-1] if len(queries) > 1 else queries[0]
        return template.format(type_needle_v=type_word, context=context, query=query), answers

    step = 500 if haystack_kind == 'essay' else 25
    if haystack_kind != 'essay' and job.length < 4096:
        step = 5
    budget, extra = job.length, job.task.tokens_to_generate
    per_item = count(make(step)[0]) / step
    upper = max(int((budget / per_item) * 3), step * 2)
    size = search_size(job, lambda n: count(make(n)[0]) + extra, step, upper, budget) or step

    def attempt(n: int):
        text, answers = make(n)
        return _checked(count(text) + extra, budget, text, answers)

    records = []
    for _ in range(job.count):
        text, answers, length = fit(attempt, size, step, job.task.name)
        record = _record(0, text, answers, length, NIAH_PREFIX)
        at = record['input'].find(answers[0])
        record['index'] = at
        record['token_position_answer'] = count(record['input'][:at])
        records.append(record)
    return records


# variable tracking ------------------------------------------------------------------------------


def variable_tracking(job: Job) -> list[dict]:
    args, rng, count = job.task.args, job.rng, job.counter
    if args['type_haystack'] != 'noise':
        raise RulerBuildError(
            f'{job.task.name}: only the noise haystack of synthetic.yaml is built'
        )
    chains_wanted, hops = args['num_chains'], args['num_hops']
    plain = VT_TEMPLATE + VT_PREFIX
    letters = string.ascii_uppercase

    def name(k: int) -> str:
        return ''.join(rng.choices(letters, k=k)).upper()

    def chains_of(example: bool) -> tuple[list[list[str]], list[list[str]]]:
        k, used_hops = (3, min(10, hops)) if example else (5, hops)
        names = [name(k) for _ in range((used_hops + 1) * chains_wanted)]
        while len(set(names)) < chains_wanted * (used_hops + 1):
            names.append(name(k))  # a repeated name adds a short chain: IndexError below
        all_vars, chains = [], []
        for i in range(0, len(names), used_hops + 1):
            these = names[i : i + used_hops + 1]
            all_vars.append(these)
            first = '12345' if example else str(job.nprng.randint(10000, 99999))
            chain = [f'VAR {these[0]} = {first}']
            for j in range(used_hops):
                chain.append(f'VAR {these[j + 1]} = VAR {these[j]} ')
            chains.append(chain)
        return all_vars, chains

    def make(size: int, example: bool) -> tuple[str, list[str]]:
        all_vars, chains = chains_of(example)
        value = chains[0][0].split('=')[-1].strip()
        lines = [NOISE] * size
        for chain in chains:
            places = sorted(rng.sample(range(len(lines)), len(chain)))
            for j, place in enumerate(places):
                lines.insert(place + j, chain[j])
        context = '\n'.join(lines).replace('. \n', '.\n')
        template = plain if example and job.template != plain else job.template
        return template.format(context=context, query=value, num_v=hops + 1), all_vars[0]

    def randomized(example: str) -> str:
        for item in example.strip().split()[-hops - 1 :]:
            example = example.replace(item, ''.join(rng.choices(letters, k=len(item))).upper())
        return example.replace('12345', str(job.nprng.randint(10000, 99999)))

    def phase(budget: int, step: int, shot: Optional[str], samples: int) -> list[tuple]:
        extra = job.task.tokens_to_generate if shot is not None else 0
        shot_tokens = count(shot) if shot is not None else 0
        example = shot is None
        per_item = count(make(step, example)[0]) / step
        upper = max(int((budget / per_item) * 3), step * 2)
        probe = lambda n: count(make(n, example)[0]) + shot_tokens + extra  # noqa: E731
        size = search_size(job, probe, step, upper, budget) or step

        def attempt(n: int):
            text, answer = make(n, example)
            if shot is not None:
                cut = text.index(VT_TEMPLATE[:20])
                text = text[:cut] + randomized(shot) + '\n' + text[cut:]
            return _checked(count(text) + extra, budget, text, answer)

        return [fit(attempt, size, step, job.task.name) for _ in range(samples)]

    text, answer, _ = phase(500, 5, None, 1)[0]
    shot = text + ' ' + ' '.join(answer) + '\n'
    step = 5 if job.length < 4096 else 10
    found = phase(job.length, step, shot, job.count)
    return [
        _record(i, text, answer, length, VT_PREFIX)
        for i, (text, answer, length) in enumerate(found)
    ]


# common words extraction ------------------------------------------------------------------------


def common_words(job: Job) -> list[dict]:
    args, rng, count = job.task.args, job.rng, job.counter
    words = files.cwe_words()
    job.shuffle(words)
    more_words = files.english_words(job.inputs)
    num_cw = args['num_cw']

    def example(num_words: int, common_repeats: int, uncommon_repeats: int) -> tuple[str, list]:
        chosen = rng.sample(words if num_words <= len(words) else more_words, num_words)
        common, uncommon = chosen[:num_cw], chosen[num_cw:]
        listed = common * common_repeats + uncommon * uncommon_repeats
        job.shuffle(listed)
        return ' '.join(f'{i + 1}. {word}' for i, word in enumerate(listed)), common

    def numbered(found: list[str]) -> str:
        return ' '.join(f'{i + 1}. {word}' for i, word in enumerate(found))

    def make(num_words: int) -> tuple[str, list[str]]:
        if job.length < 4096:
            shot = example(20, 3, 1)
            context, answer = example(num_words, 6, 1)
        else:
            shot = example(40, 10, 3)
            context, answer = example(num_words, args['freq_cw'], args['freq_ucw'])
        shot_text = job.template.format(num_cw=num_cw, context=shot[0], query='')
        shot_text += ' ' + numbered(shot[1])
        return shot_text + '\n' + job.template.format(
            num_cw=num_cw, context=context, query=''
        ), answer

    budget, extra, step = job.length, job.task.tokens_to_generate, 10
    per_word = count(make(4096)[0]) / 4096
    upper = max(int(budget // per_word) * 2, step * 2)
    size = search_size(job, lambda n: count(make(n)[0]) + extra, step, upper, budget) or step

    def attempt(n: int):
        text, answer = make(n)
        return _checked(count(text) + extra, budget, text, answer)

    found = [fit(attempt, size, step, job.task.name) for _ in range(job.count)]
    return [
        _record(i, text, answer, length, CWE_PREFIX)
        for i, (text, answer, length) in enumerate(found)
    ]


# frequent words extraction ----------------------------------------------------------------------


def frequent_words(job: Job) -> list[dict]:
    import numpy as np
    from scipy.special import zeta

    rng, count, alpha = job.rng, job.counter, job.task.args['alpha']
    word_length = 6
    budget = job.length - job.task.tokens_to_generate
    vocab_size = budget // 50
    step = budget // 32

    def vocabulary() -> list[str]:
        letters = string.ascii_lowercase
        vocab = [''.join(rng.choices(letters, k=word_length)) for _ in range(vocab_size)]
        while len(set(vocab)) < vocab_size:
            vocab.append(''.join(rng.choices(letters, k=word_length)))
        vocab = sorted(set(vocab))
        job.shuffle(vocab)
        vocab[0] = '...'  # the most frequent word is noise
        return vocab

    def text_of(vocab: list[str], num_words: int) -> str:
        ranks = np.arange(1, len(vocab) + 1)
        counts = (num_words * (ranks**-alpha) / zeta(alpha)).astype(int)
        sampled = [word for word, n in zip(vocab, counts) for _ in range(n)]
        job.shuffle(sampled)
        return job.template.format(context=' '.join(sampled), query='')

    # The number of words: grown from budget / 6 until the text reaches the budget, less a step.
    vocab = vocabulary()
    num_words = budget // word_length
    while count(text_of(vocab, num_words)) < budget:
        num_words += step
    num_words -= step

    records = []
    for index in range(job.count):
        vocab, words_used = vocabulary(), num_words
        text = text_of(vocab, words_used)
        tokens = count(text)
        while tokens > budget:
            words_used -= step
            text = text_of(vocab, words_used)
            tokens = count(text)
        length = tokens + job.task.tokens_to_generate
        records.append(_record(index, text, vocab[1:4], length, FWE_PREFIX))
    return records


# qa ------------------------------------------------------------------------------------------------


def question_answering(job: Job) -> list[dict]:
    rng, count = job.rng, job.counter
    file_name, read = files.QA_READERS[job.task.args['dataset']]
    qa = read(job.inputs)
    documents = qa.documents
    if job.count > len(qa.questions):
        raise RulerBuildError(
            f'{job.task.name}: {job.count} samples asked, {Path(job.inputs) / file_name} has '
            f'{len(qa.questions)} questions (the official generator loops forever here): '
            f'give --count {len(qa.questions)} or less'
        )

    def make(index: int, num_docs: int) -> tuple[str, list[str]]:
        question = qa.questions[index]
        own, more = question['context'], question.get('more_context', [])
        if num_docs < len(documents):
            if num_docs - len(own) > len(more):
                taken = set(own + more)
                others = [i for i in range(len(documents)) if i not in taken]
                chosen = own + more + rng.sample(others, max(0, num_docs - len(own) - len(more)))
            else:
                chosen = own + rng.sample(more, num_docs - len(own))
            shown = [documents[i] for i in chosen]
        else:
            shown = (documents * -(-num_docs // len(documents)))[:num_docs]
        job.shuffle(shown)
        context = '\n\n'.join(f'Document {i + 1}:\n{d}' for i, d in enumerate(shown))
        return job.template.format(context=context, query=question['query']), question['outputs']

    budget, extra, step = job.length, job.task.tokens_to_generate, 10
    per_doc = count(make(0, step)[0]) / step
    upper = max(int((budget / per_doc) * 3), step * 2)
    size = search_size(job, lambda n: count(make(0, n)[0]) + extra, step, upper, budget) or step

    records = []
    for index in range(job.count):

        def attempt(n: int, index=index):
            text, answer = make(index, n)
            return _checked(count(text) + extra, budget, text, answer)

        text, answer, length = fit(attempt, size, step, job.task.name)
        records.append(_record(index, text, answer, length, QA_PREFIX))
    return records


GENERATORS = {
    'niah': niah,
    'variable_tracking': variable_tracking,
    'common_words_extraction': common_words,
    'freq_words_extraction': frequent_words,
    'qa': question_answering,
}
