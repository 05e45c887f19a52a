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

Counting the tokens of each sample is most of the work, and it is counted ahead in batches (in
parallel where the tokenizer's pipeline can: ``TokenCounter.counts``) without changing a draw:
drawing a sample never depends on counting it, so the next samples are drawn as though each fits
(``_fitted``), counted together, and where one does not fit the random state goes back to just
after its draw and the official retries go on from there; the samples drawn after it are dropped.
fwe draws nothing that a count decides, so its samples are counted all together.
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

from ..files.errors import DataError
from . import inputs as files
from .tasks import CWE_PREFIX, FWE_PREFIX, NIAH_PREFIX, QA_PREFIX, VT_PREFIX, VT_TEMPLATE, RulerTask

NOISE = 'The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.'
NEEDLE = 'One of the special magic {type_needle_v} for {key} is: {value}.'
# Retries at the smallest step before giving up (the official code retries forever).
MAX_RETRIES_AT_FLOOR = 1000


class RulerBuildError(DataError):
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
    # Many texts' tokens at once (in parallel where the tokenizer can), as ``counter`` counts.
    count_many: Optional[Callable[[list[str]], list[int]]] = None
    ahead: int = 1  # samples drawn ahead and counted together
    progress: Optional[Callable[[int], None]] = None  # told each time samples are done
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

    def counts(self, texts: list[str]) -> list[int]:
        """Each text's tokens, together where the job has ``count_many``."""
        if self.count_many is None or len(texts) < 2:
            return [self.counter(text) for text in texts]
        return self.count_many(texts)

    def state(self) -> tuple:
        """Both random states, to go back to."""
        return self.rng.getstate(), self.nprng.get_state()

    def restore(self, state: tuple) -> None:
        self.rng.setstate(state[0])
        self.nprng.set_state(state[1])

    def done(self, samples: int = 1) -> None:
        if self.progress is not None and samples:
            self.progress(samples)


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


def fit(
    attempt: Callable[[int], tuple],
    size: int,
    step: int,
    what: str,
    failed: Optional[Exception] = None,
):
    """A sample at ``size``, each failed attempt one ``step`` smaller down to ``step``, then
    retried at that size (new draws each time) as the official loop does. ``failed``: the
    error of an attempt at ``size`` already made (counted ahead)."""
    at_floor = 0
    while True:
        if failed is None:
            try:
                return attempt(size)
            except RETRIED as exc:
                failed = exc
        if size > step:
            size -= step
        else:
            at_floor += 1
            if at_floor >= MAX_RETRIES_AT_FLOOR:
                raise RulerBuildError(
                    f'{what}: no sample fits even at the smallest haystack ({size}) after '
                    f'{at_floor} tries ({type(failed).__name__}: {failed}); the official '
                    'generator loops forever here: give a larger --length'
                ) from failed
        failed = None


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


def _fitted(
    job: Job, makers: list, size: int, step: int, budget: int, extra: int, told: bool = True
) -> list:
    """One sample per maker, each fitted from ``size`` down (``fit``): (text, answer, length).
    The next ``job.ahead`` samples are drawn as though each fits at ``size`` and counted
    together; from the first that does not, the draws go on as the official loop's would.
    ``told``: the job's progress hears of each (not of vt's one-shot example)."""
    found: list = []
    while len(found) < len(makers):
        drawn, states, failed = [], [], None
        for make in makers[len(found) : len(found) + job.ahead]:
            try:
                drawn.append(make(size))
            except RETRIED as exc:  # failed as it was drawn: no count needed to know
                failed = exc
                break
            states.append(job.state())
        for (text, answer), tokens, state in zip(drawn, job.counts([t for t, _ in drawn]), states):
            if tokens + extra > budget:
                job.restore(state)  # as just after this attempt: the later draws are dropped
                failed = Overflow(f'{tokens + extra} exceeds {budget}')
                break
            found.append((text, answer, tokens + extra))
            job.done(int(told))
        if failed is not None:
            make = makers[len(found)]

            def attempt(n: int, make=make):
                text, answer = make(n)
                return _checked(job.counter(text) + extra, budget, text, answer)

            found.append(fit(attempt, size, step, job.task.name, failed))
            job.done(int(told))
    return found


def niah(job: Job) -> list[dict]:
    make = NeedleHaystack(job)
    step = 500 if make.haystack == 'essay' else 25
    if make.haystack != 'essay' and job.length < 4096:
        step = 5
    budget, extra = job.length, job.task.tokens_to_generate
    size = _sized(job, make, step, budget, extra, _three_times(budget))
    records = []
    for text, answers, length in _fitted(job, [make] * job.count, size, step, budget, extra):
        record = _record(0, text, answers, length, NIAH_PREFIX)
        record['index'] = record['input'].find(answers[0])  # the answer's character offset
        records.append(record)
    before = [record['input'][: record['index']] for record in records]
    for at in range(0, len(records), job.ahead):  # the answer's token offset
        for record, tokens in zip(records[at:], job.counts(before[at : at + job.ahead])):
            record['token_position_answer'] = tokens
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
    text, answer, _ = _fitted(job, [example], size, 5, 500, 0, told=False)[0]
    shot = text + ' ' + ' '.join(answer) + '\n'

    def with_shot(n: int) -> tuple[str, list[str]]:
        text, answer = chains(n)
        cut = text.index(VT_TEMPLATE[:20])
        return text[:cut] + chains.randomized(shot) + '\n' + text[cut:], answer

    # The samples: the search counts them without the example, its tokens added.
    step = 5 if job.length < 4096 else 10
    budget, extra = job.length, job.task.tokens_to_generate
    size = _sized(job, chains, step, budget, job.counter(shot) + extra, _three_times(budget))
    found = _fitted(job, [with_shot] * job.count, size, step, budget, extra)
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
    found = _fitted(job, [make] * job.count, size, step, budget, extra)
    return [
        _record(i, text, answer, length, CWE_PREFIX)
        for i, (text, answer, length) in enumerate(found)
    ]


# frequent words extraction ----------------------------------------------------------------------


def frequent_words(job: Job) -> list[dict]:
    import numpy as np
    from scipy.special import zeta

    rng, alpha = job.rng, job.task.args['alpha']
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

    # The number of words: grown from budget / 6 until the text reaches the budget, less a step
    # (counted ``job.ahead`` steps at a time: the texts draw nothing).
    vocab = vocabulary()
    num_words, reached = budget // word_length, None
    while reached is None:
        tried = [num_words + k * step for k in range(job.ahead)]
        tokens = job.counts([text_of(vocab, n) for n in tried])
        reached = next((n for n, t in zip(tried, tokens) if t >= budget), None)
        num_words = tried[-1] + step
    num_words = reached - step

    # Each sample's vocabulary is drawn in turn; its text then shrinks a step at a time until it
    # fits, drawing nothing, so the samples are counted together.
    vocabs = [vocabulary() for _ in range(job.count)]
    records = []
    for at in range(0, job.count, job.ahead):
        chunk = vocabs[at : at + job.ahead]
        used = [num_words] * len(chunk)
        texts = [text_of(vocab, num_words) for vocab in chunk]
        tokens = job.counts(texts)
        over = [i for i, n in enumerate(tokens) if n > budget]
        while over:
            for i in over:
                used[i] -= step
                texts[i] = text_of(chunk[i], used[i])
            for i, n in zip(over, job.counts([texts[i] for i in over])):
                tokens[i] = n
            over = [i for i in over if tokens[i] > budget]
        for i, (vocab, text) in enumerate(zip(chunk, texts)):
            length = tokens[i] + job.task.tokens_to_generate
            records.append(_record(at + i, text, vocab[1:4], length, FWE_PREFIX))
        job.done(len(chunk))
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
    makers = [functools.partial(make, index) for index in range(job.count)]
    found = _fitted(job, makers, size, step, budget, extra)
    return [_record(index, *sample, QA_PREFIX) for index, sample in enumerate(found)]


GENERATORS = {
    'niah': niah,
    'variable_tracking': variable_tracking,
    'common_words_extraction': common_words,
    'freq_words_extraction': frequent_words,
    'qa': question_answering,
}
