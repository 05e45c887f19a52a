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
    """A file's line: the prompt without its answer prefix, the answers, the length."""
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


class NeedleHaystack:
    """niah.py's ``generate_input_output``: keys and values drawn, needles shuffled and placed in
    the haystack (essay sentences at drawn depths, noise or needle-like lines at drawn places),
    the queried keys drawn, the template filled."""

    def __init__(self, job: Job) -> None:
        args = job.task.args
        self.job, self.rng = job, job.rng
        self.kind_k, self.kind_v = args['type_needle_k'], args['type_needle_v']
        self.haystack, self.num_v, self.num_q = (
            args['type_haystack'],
            args['num_needle_v'],
            args['num_needle_q'],
        )
        self.num_k = max(args['num_needle_k'], self.num_q)
        self.words = files.needle_words() if 'words' in (self.kind_k, self.kind_v) else None
        self.template, self.type_word = job.template, self.kind_v
        if self.num_q * self.num_v == 1:  # one answer: the template is made singular
            for old, new in (
                ('Some', 'A'),
                ('are all', 'is'),
                ('are', 'is'),
                ('answers', 'answer'),
            ):
                self.template = self.template.replace(old, new)
            self.type_word = self.kind_v[:-1]
        if self.haystack == 'essay':
            self.essay = files.essay_words(job.inputs)
            self.split = files.sentence_splitter(job.punkt or files.punkt_folder(job.inputs))
            self.depths = _depths()
            self.sentences = functools.lru_cache(maxsize=8)(self._sentences)

    def draw(self, kind: str) -> str:
        if kind == 'numbers':
            return str(self.rng.randint(10**6, 10**7 - 1))
        if kind == 'words':
            return self.rng.choice(self.words)
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _sentences(self, size: int) -> tuple[str, ...]:
        """The first ``size`` essay words (repeated where too few), split into sentences."""
        essay = self.essay
        used = essay[:size] if size <= len(essay) else (essay * -(-size // len(essay)))[:size]
        return tuple(self.split(' '.join(used).strip()))

    def context(self, size: int, needles: list[str]) -> str:
        if self.haystack == 'essay':
            found = self.sentences(size)
            drawn = self.rng.sample(self.depths, len(needles))
            cuts = [0, *sorted(int(len(found) * (depth / 100)) for depth in drawn), len(found)]
            parts = []
            for i in range(1, len(cuts)):
                parts.append(' '.join(found[cuts[i - 1] : cuts[i]]))
                if i - 1 < len(needles):
                    parts.append(needles[i - 1])
            return ' '.join(parts)
        if self.haystack == 'noise':
            lines = [NOISE] * size
        else:
            lines = [
                self.needle(self.draw(self.kind_k), self.draw(self.kind_v)) for _ in range(size)
            ]
        places = sorted(self.rng.sample(range(size), len(needles)), reverse=True)
        for place, needle in zip(places, needles):
            lines.insert(place, needle)
        return '\n'.join(lines)

    def needle(self, key: str, value: str) -> str:
        return NEEDLE.format(type_needle_v=self.kind_v, key=key, value=value)

    def __call__(self, size: int) -> tuple[str, list[str]]:
        keys, values, needles = [], [], []
        for _ in range(self.num_k):
            keys.append(self.draw(self.kind_k))
            values.append([])
            for _ in range(self.num_v):
                values[-1].append(self.draw(self.kind_v))
                needles.append(self.needle(keys[-1], values[-1][-1]))
        self.job.shuffle(needles)
        context = self.context(size, needles)
        chosen = self.rng.sample(range(self.num_k), self.num_q)
        queries = [keys[i] for i in chosen]
        query = ', '.join(queries[:-1]) + ', and ' + queries[-1] if len(queries) > 1 else queries[0]
        text = self.template.format(type_needle_v=self.type_word, context=context, query=query)
        return text, [a for i in chosen for a in values[i]]


def _sized(job: Job, make, step: int, budget: int, extra: int, estimate, probe: int = 0) -> int:
    """The official sizing: a sample of ``probe`` items (default one step) gives tokens per item,
    ``estimate`` turns that into the search's upper bound (at least two steps), and the binary
    search from one step finds the size (one step where none fits)."""
    probe = probe or step
    upper = max(estimate(job.counter(make(probe)[0]) / probe), step * 2)
    found = search_size(job, lambda n: job.counter(make(n)[0]) + extra, step, upper, budget)
    return found or step


def _three_times(budget: int):
    """The upper bound of niah, vt and qa: three times the items the budget holds."""
    return lambda per_item: int((budget / per_item) * 3)


def _fitted(job: Job, make, size: int, step: int, budget: int, extra: int, count: int) -> list:
    """``count`` samples, each fitted from ``size`` down (``fit``): (text, answer, length)."""

    def attempt(n: int):
        text, answer = make(n)
        return _checked(job.counter(text) + extra, budget, text, answer)

    return [fit(attempt, size, step, job.task.name) for _ in range(count)]


def niah(job: Job) -> list[dict]:
    make = NeedleHaystack(job)
    step = 500 if make.haystack == 'essay' else 25
    if make.haystack != 'essay' and job.length < 4096:
        step = 5
    budget, extra = job.length, job.task.tokens_to_generate
    size = _sized(job, make, step, budget, extra, _three_times(budget))
    records = []
    for text, answers, length in _fitted(job, make, size, step, budget, extra, job.count):
        record = _record(0, text, answers, length, NIAH_PREFIX)
        at = record['input'].find(answers[0])  # the answer's character offset is the 'index'
        record['index'] = at
        record['token_position_answer'] = job.counter(record['input'][:at])
        records.append(record)
    return records


# variable tracking ------------------------------------------------------------------------------


class VariableChains:
    """variable_tracking.py's ``generate_input_output`` on the noise haystack: chains of
    ``VAR X = ...`` drawn (the one-shot example's with 3-letter names and the value 12345) and
    placed at drawn lines."""

    def __init__(self, job: Job) -> None:
        args = job.task.args
        if args['type_haystack'] != 'noise':
            raise RulerBuildError(
                f'{job.task.name}: only the noise haystack of synthetic.yaml is built'
            )
        self.job, self.rng = job, job.rng
        self.chains, self.hops = args['num_chains'], args['num_hops']
        self.plain = VT_TEMPLATE + VT_PREFIX

    def name(self, k: int) -> str:
        return ''.join(self.rng.choices(string.ascii_uppercase, k=k)).upper()

    def drawn(self, example: bool) -> tuple[list[list[str]], list[list[str]]]:
        k, hops = (3, min(10, self.hops)) if example else (5, self.hops)
        names = [self.name(k) for _ in range((hops + 1) * self.chains)]
        while len(set(names)) < self.chains * (hops + 1):
            names.append(self.name(k))  # a repeated name adds a short chain: IndexError below
        all_vars, chains = [], []
        for i in range(0, len(names), hops + 1):
            these = names[i : i + hops + 1]
            all_vars.append(these)
            first = '12345' if example else str(self.job.nprng.randint(10000, 99999))
            chain = [f'VAR {these[0]} = {first}']
            for j in range(hops):
                chain.append(f'VAR {these[j + 1]} = VAR {these[j]} ')
            chains.append(chain)
        return all_vars, chains

    def __call__(self, size: int, example: bool = False) -> tuple[str, list[str]]:
        all_vars, chains = self.drawn(example)
        value = chains[0][0].split('=')[-1].strip()
        lines = [NOISE] * size
        for chain in chains:
            places = sorted(self.rng.sample(range(len(lines)), len(chain)))
            for j, place in enumerate(places):
                lines.insert(place + j, chain[j])
        context = '\n'.join(lines).replace('. \n', '.\n')
        template = self.plain if example and self.job.template != self.plain else self.job.template
        return template.format(context=context, query=value, num_v=self.hops + 1), all_vars[0]

    def randomized(self, shot: str) -> str:
        """The one-shot example with new names and a new value, drawn per sample."""
        for item in shot.strip().split()[-self.hops - 1 :]:
            shot = shot.replace(item, self.name(len(item)))
        return shot.replace('12345', str(self.job.nprng.randint(10000, 99999)))


def variable_tracking(job: Job) -> list[dict]:
    chains = VariableChains(job)
    # The one-shot example: its own search in 500 tokens, no answer tokens, steps of 5 lines.
    example = functools.partial(chains, example=True)
    size = _sized(job, example, 5, 500, 0, _three_times(500))
    text, answer, _ = _fitted(job, example, size, 5, 500, 0, 1)[0]
    shot = text + ' ' + ' '.join(answer) + '\n'

    def with_shot(n: int) -> tuple[str, list[str]]:
        text, answer = chains(n)
        cut = text.index(VT_TEMPLATE[:20])
        return text[:cut] + chains.randomized(shot) + '\n' + text[cut:], answer

    # The samples: the search counts them without the example, its tokens added.
    step = 5 if job.length < 4096 else 10
    budget, extra = job.length, job.task.tokens_to_generate
    size = _sized(job, chains, step, budget, job.counter(shot) + extra, _three_times(budget))
    found = _fitted(job, with_shot, size, step, budget, extra, job.count)
    return [_record(i, t, a, n, VT_PREFIX) for i, (t, a, n) in enumerate(found)]


# common words extraction ------------------------------------------------------------------------


def common_words(job: Job) -> list[dict]:
    args, rng = job.task.args, job.rng
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
    size = _sized(job, make, step, budget, extra, lambda per: int(budget // per) * 2, probe=4096)
    found = _fitted(job, make, size, step, budget, extra, job.count)
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
    rng = job.rng
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
    size = _sized(job, functools.partial(make, 0), step, budget, extra, _three_times(budget))
    records = []
    for index in range(job.count):
        found = _fitted(job, functools.partial(make, index), size, step, budget, extra, 1)
        records.append(_record(index, *found[0], QA_PREFIX))
    return records


GENERATORS = {
    'niah': niah,
    'variable_tracking': variable_tracking,
    'common_words_extraction': common_words,
    'freq_words_extraction': frequent_words,
    'qa': question_answering,
}
