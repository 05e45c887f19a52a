"""CPU baselines registered as OpenCompass models: no weights, a floor row for every table.

- ``ExtractiveBaseline``: returns the candidate answer that best matches the question (BM25),
  minus the words of the question itself; a retrieval floor a model must beat. A prompt is read
  as its benchmark declares (``Benchmark.extractive_reading``: the question from the last match
  of a pattern to the end, the candidates the context before it split on a pattern), else as
  LV-Eval's are: the question is the last paragraph (after the last blank line), the candidates
  the sentences and lines of the text before it (split after ``.!?`` and their CJK forms, ``;``,
  and at line breaks). English terms are lowercase words; Chinese ones characters and character
  bigrams.
- ``RandomGuessBaseline``: a valid random answer, seeded per prompt: what the benchmark that
  recognises the prompt gives (Ada-LEval: a permutation for TSort, a designation for BestAnswer),
  a random context sentence otherwise.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import Counter
from typing import Optional

from opencompass.models.base import BaseModel, LMTemplateParser
from opencompass.models.huggingface_above_v4_33 import _convert_base_messages
from opencompass.registry import MODELS

from ..framework import benchmarks
from ..prompts.messages import as_text, is_messages

_SENTENCE_END = re.compile(benchmarks.SENTENCE_ENDS)
_WORD = re.compile(r'\w+')
_CJK = re.compile(r'[\u4e00-\u9fff]')


def is_chinese(text: str) -> bool:
    sample = text[:2000]
    return len(_CJK.findall(sample)) > 0.3 * max(1, len(sample.split()))


def terms(text: str, chinese: bool) -> list[str]:
    """Lowercase words (English) or characters and character bigrams (Chinese)."""
    if not chinese:
        return _WORD.findall(text.lower())
    chars = [c for c in text if not c.isspace()]
    return chars + [a + b for a, b in zip(chars, chars[1:])]


def split_prompt(prompt: str) -> tuple[str, str]:
    """(context, question): LV-Eval prompts end with a paragraph holding the question."""
    context, _, question = prompt.rstrip().rpartition('\n\n')
    return context, question


def read_prompt(prompt: str) -> tuple[list[str], str]:
    """(candidate answers, question): as the benchmark the prompt is of declares
    (``extractive_reading``), else the sentences before the last paragraph, and that paragraph."""
    for benchmark in benchmarks.BENCHMARKS:
        for reading in benchmark.prompt_readings():
            if (found := reading.read(prompt)) is not None:
                return found
    context, question = split_prompt(prompt)
    return sentences(context), question


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def bm25_best(
    candidates: list[str], query: list[str], chinese: bool, k1: float = 1.5, b: float = 0.75
) -> int:
    """Index of the candidate with the highest BM25 score for ``query`` (first on ties). Terms
    are summed in the query's order, not a set's: a set's order follows the process's string
    hashes, and near-equal scores (RULER's needles) would then pick differently from one process
    to the next."""
    unique = list(dict.fromkeys(query))
    docs = [Counter(terms(c, chinese)) for c in candidates]
    lengths = [sum(d.values()) for d in docs]
    average = sum(lengths) / len(docs) or 1.0
    frequency = Counter(term for d in docs for term in d)
    idf = {t: math.log(1 + (len(docs) - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in unique}
    scores = [
        sum(
            idf[t] * d[t] * (k1 + 1) / (d[t] + k1 * (1 - b + b * n / average))
            for t in unique
            if d[t]
        )
        for d, n in zip(docs, lengths)
    ]
    return max(range(len(scores)), key=scores.__getitem__)


class MessagesTemplateParser(LMTemplateParser):
    """OpenCompass's parser for models without a chat frame, passing a prompt of chat messages
    through as it is (OpenCompass's would refuse its dicts)."""

    def parse_template(self, prompt_template, mode: str):
        if is_messages(prompt_template):
            return prompt_template
        if type(prompt_template) in (list, tuple):  # a batch (a PromptList is one prompt)
            return [self.parse_template(p, mode=mode) for p in prompt_template]
        return super().parse_template(prompt_template, mode)


class CPUBaseline(BaseModel):
    """Shared plumbing: no weights, no tokenizer, prompts flattened to text (a prompt of chat
    messages: their contents, a blank line between), word counts as token counts (``lveval
    inputs --count-only`` counts their prompts in each benchmark's length unit)."""

    is_api = False

    def __init__(
        self,
        path: str = 'cpu-baseline',
        max_seq_len: int = 10**9,
        meta_template: Optional[dict] = None,
        **kwargs,
    ) -> None:
        super().__init__(path=path, max_seq_len=max_seq_len, meta_template=meta_template, **kwargs)
        self.template_parser = MessagesTemplateParser(meta_template)

    @staticmethod
    def prompt_text(parsed) -> str:
        """The text a baseline answers from, for a prompt parsed by its template parser."""
        if is_messages(parsed):
            return as_text(parsed)
        return _convert_base_messages([parsed])[0]

    def get_token_len(self, prompt: str) -> int:
        return len(self.prompt_text(prompt).split())

    def generate(self, inputs: list, max_out_len: int, **kwargs) -> list[str]:
        return [self.answer(self.prompt_text(text), max_out_len) for text in inputs]

    def answer(self, prompt: str, max_out_len: int) -> str:
        raise NotImplementedError


@MODELS.register_module()
class ExtractiveBaseline(CPUBaseline):
    """The candidate (a context sentence) that best matches the question, without the
    question's own words; prompts read by ``read_prompt``."""

    def answer(self, prompt: str, max_out_len: int) -> str:
        candidates, question = read_prompt(prompt)
        chinese = is_chinese(prompt)
        if not candidates:
            return ''
        query = terms(question, chinese)
        best = candidates[bm25_best(candidates, query, chinese)]
        if chinese:
            asked = set(question)
            return ''.join(c for c in best if c not in asked)[:max_out_len]
        asked = set(_WORD.findall(question.lower()))
        words = [w for w in best.split() if ''.join(_WORD.findall(w.lower())) not in asked]
        return ' '.join(words[:max_out_len])


@MODELS.register_module()
class RandomGuessBaseline(CPUBaseline):
    """A valid random answer, the same for the same prompt and seed whatever the batching."""

    def __init__(self, seed: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seed = seed

    def answer(self, prompt: str, max_out_len: int) -> str:
        rng = random.Random(f'{self.seed}:{hashlib.sha1(prompt.encode()).hexdigest()}')
        for benchmark in benchmarks.BENCHMARKS:  # each recognises its own prompts
            answer = benchmark.random_answer(prompt, rng)
            if answer is not None:
                return answer
        candidates = sentences(split_prompt(prompt)[0])
        return ' '.join(rng.choice(candidates).split()[:max_out_len]) if candidates else ''
