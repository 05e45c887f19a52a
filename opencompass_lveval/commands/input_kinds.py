"""What ``lveval inputs`` makes of one prompt for each kind of model: the ids of an in-process
wrapper, the request of an API model, the text of a tokenizer-free CPU baseline (counted in the
benchmark's own length unit), and the counts of one model x dataset they add up to."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..models.inputs import ModelInput

SHOWN = 60  # characters of decoded text shown at each end and around the cut
PROMPT_TOKENS = 'prompt tokens'
# A total's keys besides its units (``PairCount.totals``).
TOTAL_KEYS = ('datasets', 'records', 'answer tokens', 'cost')


def shown(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def describe(tokenizer, item: ModelInput) -> list[str]:
    """The decoded text at both ends (template included) and around the cut."""
    ids = item.ids
    lines = [
        f'    starts {shown(tokenizer.decode(ids[:24])[:SHOWN])}',
        f'    ends   {shown(tokenizer.decode(ids[-24:])[-SHOWN:])}',
    ]
    if item.cut_at is not None:
        before = tokenizer.decode(ids[max(0, item.cut_at - 12) : item.cut_at])
        after = tokenizer.decode(ids[item.cut_at : item.cut_at + 12])
        lines.append(f'    cut    {shown(before[-SHOWN // 2 :])} | {shown(after[: SHOWN // 2])}')
    return lines


@dataclass
class Made:
    """One prompt as a model receives it: the JSON line's own fields, its size, whether it was
    cut, the answer tokens at most (None: not counted in tokens) and the lines shown for it."""

    fields: dict
    size: int
    truncated: bool
    answer: Optional[int]
    preview: list[str]


class ModelInputs:
    """The ids an in-process wrapper (vLLM, HF) would receive."""

    def __init__(self, builder, parser) -> None:
        self.builder, self.parser = builder, parser
        self.tokenizer, self.mode = builder.tokenizer, builder.inputs
        self.counted_in = f'tokens of {builder.settings.tokenizer_path or builder.settings.name}'

    def unit(self, abbr: str) -> str:
        return PROMPT_TOKENS

    def prompt_text(self, parsed) -> str:
        return self.builder.prompt_text(parsed)

    def make(self, parsed, max_out_len: int, abbr: str) -> Made:
        item = self.builder.build(parsed, max_out_len)
        fields = {'input_ids': item.ids, 'n_ids': len(item.ids), 'budget': item.budget}
        return Made(
            fields, len(item.ids), item.truncated, max_out_len, describe(self.tokenizer, item)
        )

    def cost(self, prompt_tokens: int, answer_tokens: int) -> Optional[float]:
        return None


class ApiInputs:
    """The request an API model would send: its body (messages, text or ids) and counts."""

    def __init__(self, builder, parser, prices: Optional[dict]) -> None:
        self.builder, self.parser, self.prices = builder, parser, prices
        self.mode = builder.settings.inputs
        settings = builder.settings
        self.counted_in = f'tokens of {settings.tokenizer_path or settings.name}, as sent'

    def unit(self, abbr: str) -> str:
        return PROMPT_TOKENS

    def prompt_text(self, parsed) -> str:
        return self.builder.builder.prompt_text(parsed)

    def make(self, parsed, max_out_len: int, abbr: str) -> Made:
        request = self.builder.request(parsed, max_out_len)
        fields = {
            'route': request.route,
            'transport': request.transport,
            'body': request.body,
            'local_prompt_tokens': request.local_tokens,
            'budget': request.budget,
            'answered_without_request': request.answer,
        }
        answer = (
            max(0, request.body.get('max_tokens', max_out_len)) if request.answer is None else 0
        )
        tokens = request.local_tokens if request.answer is None else 0
        sent = request.body.get('messages', [{}])[-1].get('content') or request.body.get('prompt')
        text = sent if isinstance(sent, str) else f'{len(sent)} ids'
        preview = [f'    sends  {request.transport} to /v1/{request.route}: {shown(text[:SHOWN])}']
        return Made(fields, tokens, request.truncated, answer, preview)

    def cost(self, prompt_tokens: int, answer_tokens: int) -> Optional[float]:
        from ..models.api_client import cost_usd

        return cost_usd(self.prices, prompt_tokens, answer_tokens)


class BaselineInputs:
    """The text a tokenizer-free CPU baseline answers from, counted in the length unit of the
    dataset's benchmark (``Benchmark.length_unit``), the unit its sizes are given in."""

    mode = 'baseline'

    @property
    def counted_in(self) -> str:
        from ..framework.benchmarks import length_units_text

        return f"no tokenizer: prompts in the benchmark's length unit ({length_units_text()})"

    def __init__(self, cls: Any, meta_template: Optional[dict]) -> None:
        from ..models.baselines import MessagesTemplateParser

        self.cls, self.parser = cls, MessagesTemplateParser(meta_template)

    def unit(self, abbr: str) -> Optional[str]:
        """The unit name, None for a dataset of no known benchmark (not counted)."""
        from ..framework.benchmarks import length_unit_of

        found = length_unit_of(abbr)
        return found.name if found else None

    def prompt_text(self, parsed) -> str:
        """The user message: the last of a prompt of chat messages, else the text it reads."""
        from ..prompts.messages import is_messages

        return parsed[-1]['content'] if is_messages(parsed) else self.cls.prompt_text(parsed)

    def make(self, parsed, max_out_len: int, abbr: str) -> Made:
        from ..framework.benchmarks import length_unit_of

        text, unit = self.cls.prompt_text(parsed), length_unit_of(abbr)
        size = unit.count(text)
        preview = [f'    starts {shown(text[:SHOWN])}', f'    ends   {shown(text[-SHOWN:])}']
        return Made({'length': size, 'unit': unit.name}, size, False, None, preview)

    def cost(self, prompt_tokens: int, answer_tokens: int) -> Optional[float]:
        return None


@dataclass
class PairCount:
    """One model x dataset: its records' sizes in ``unit``, cuts, answer tokens at most, whether
    each user message equals the dataset's prompt, and what record 0 looked like."""

    unit: str
    mode: str
    sizes: list[int] = field(default_factory=list)
    cut: int = 0
    answers: Optional[int] = None
    budget: Optional[int] = None
    differing: list[str] = field(default_factory=list)
    preview: list[str] = field(default_factory=list)
    cost: Optional[float] = None

    def add(self, made: Made, message_differs: Optional[str]) -> None:
        if not self.sizes:
            self.budget, self.preview = made.fields.get('budget'), made.preview
        self.sizes.append(made.size)
        self.cut += made.truncated
        if made.answer is not None:
            self.answers = (self.answers or 0) + made.answer
        if message_differs is not None:
            self.differing.append(message_differs)

    def totals(self) -> dict:
        """What this pair adds to its model's total (keys: units and ``TOTAL_KEYS``)."""
        total = {'datasets': 1, 'records': len(self.sizes), self.unit: sum(self.sizes)}
        if self.answers is not None:
            total['answer tokens'] = self.answers
        if self.cost is not None:
            total['cost'] = self.cost
        return total

    def line(self, name: str) -> str:
        """``name: N records, a-b UNIT (S in all, ...), ..., prompt same``."""
        extra = ''
        if self.answers is not None:
            priced = f', at most ${self.cost:.2f}' if self.cost is not None else ''
            extra = f', answers at most {self.answers}{priced}'
        check = (
            f'prompt DIFFERS in {len(self.differing)}, first {self.differing[0]}'
            if self.differing
            else 'prompt same'
        )
        budget = (
            '' if self.budget is None else f', budget {self.budget} ({self.mode}), {self.cut} cut'
        )
        return (
            f'{name}: {len(self.sizes)} records, {min(self.sizes)}-{max(self.sizes)} {self.unit} '
            f'({sum(self.sizes)} in all{extra}){budget}, {check}'
        )
