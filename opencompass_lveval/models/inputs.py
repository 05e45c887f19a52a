"""Model inputs: the token ids a model receives for one prompt, in one of two modes.

- ``official`` reproduces a paper's official prediction path step by step (``official.py``;
  LV-Eval's unless the settings name another): tokenize the bare prompt with special tokens; if it
  has more than ``max_length`` ids, keep the path's head and tail (LV-Eval: ``int(max_length /
  2)`` from each end, each half decoded; LongBench v2: ``max_length // 2`` and the rest, decoded
  together; special tokens skipped); wrap the text in the official conversation format (LV-Eval)
  or the tokenizer's chat template (LongBench v2 and MRCR, which called an OpenAI-compatible
  server); tokenize that. The published numbers of open-weight models came from such paths.
- ``exact`` (the default) tokenizes the framed prompt once and, when it does not fit, cuts the
  middle of the prompt's own ids to exactly ``window - max_out_len`` ids in all; nothing is decoded
  and re-encoded. Uncut, the ids equal ``apply_chat_template(..., add_generation_prompt=True,
  tokenize=True)`` (or the given format's text, tokenized whole); cut, they are the full encoding
  with a middle run removed, head and tail to the id. What lies outside the message's cuttable
  span (``cuttable.py``: the instructions before the context and the question after it, marked by
  the dataset's template) is protected: a window too small for it is an error, not a silent cut.
  A prompt without a span (a plain string) has nothing protected.

A prompt may also be a list of chat messages (``prompts/messages.py``): the chat template renders
them all, the last user message is the one cut in the middle, or, where the messages carry turns
(a benchmark's ``cut='turns'``), whole early turns are dropped until it fits (exact mode; official
paths send messages whole).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from ..files.errors import ModelConfigError
from ..prompts.cuttable import CUTTABLE, checked, joined_span, text_span
from ..prompts.messages import fit_turns, has_turns, is_messages, plain
from ..prompts.truncation import TruncationError, middle_cut
from .formats import FORMATS, PiecesFormat, TextFormat, conversation_format
from .official import cut_ids, cut_text, official_path
from .settings import InputSettings, is_count

BARE = TextFormat('bare', '{prompt}')
_SENTINEL = 'LVEVAL\u2063PROMPT\u2063SENTINEL'  # stands for the prompt while a template renders
_CHAT_ROLES = {'HUMAN': 'user', 'BOT': 'assistant', 'SYSTEM': 'system'}  # as OpenCompass maps them
_CACHED_HISTORY = 4096  # characters of a history whose chat-template frame is kept for reuse


@dataclass(frozen=True)
class ModelInput:
    """What a model receives for one prompt, and how it came about."""

    ids: list[int]
    budget: int  # exact: the most ids allowed (window - max_out_len); official: max_length
    truncated: bool
    prompt_span: tuple[int, int]  # where the prompt's ids sit in ``ids``
    cut_at: Optional[int] = None  # exact mode: index in ``ids`` where the middle was removed


def official_max_length(window: int) -> int:
    """LV-Eval's ``--model-max-length`` rule: the window in decimal thousands, less 500 for the
    answer (31500 for a 32k = 32768 model, 199500 for 200k, 7500 for 8k)."""
    thousands = window // 1024 if window % 1024 == 0 else window // 1000
    return thousands * 1000 - 500


def _common_prefix(a: list[int], b: list[int]) -> int:
    size = 0
    for x, y in zip(a, b):
        if x != y:
            break
        size += 1
    return size


def framed_span(full: list[int], head: list[int], tail: list[int]) -> tuple[int, int]:
    """Where the prompt's ids sit in ``full``: after the ids it shares with the frame's head and
    before those it shares with the frame's tail (a token merged across a boundary counts as the
    prompt's, so cutting inside the span never touches the frame)."""
    start = _common_prefix(full, head)
    end = len(full) - min(_common_prefix(full[::-1], tail[::-1]), len(full) - start)
    return start, end


@dataclass(frozen=True)
class PromptCutter:
    """A prompt's own ids and how many at each end must survive a cut (``cuttable.py``)."""

    name: str
    prompt_ids: list[int]
    keep_head: int
    keep_tail: int
    decode: Any

    def cut(self, room: int) -> tuple[int, int]:
        """(head, tail_start) of the prompt's ids cut in the middle to ``room``
        (``truncation.middle_cut``)."""
        try:
            return middle_cut(
                self.prompt_ids, room, self.keep_head, self.keep_tail, decode=self.decode
            )
        except TruncationError as exc:
            raise TruncationError(f'{self.name}: {exc}') from exc

    def ids(self, room: int) -> list[int]:
        """The prompt's ids cut in the middle to ``room`` (unchanged if they fit)."""
        head, tail_start = self.cut(room)
        return self.prompt_ids[:head] + self.prompt_ids[tail_start:]

    def cut_text(self, room: int) -> tuple[int, int, str]:
        """(head, tail_start, the text of ``ids(room)``): what a server that takes text is sent,
        with the cut that made it (a caller counting the cut from its seam needs both)."""
        head, tail_start = self.cut(room)
        return head, tail_start, self.decode(self.prompt_ids[:head] + self.prompt_ids[tail_start:])


class InputBuilder:
    """Turns OpenCompass prompts into token ids for one tokenizer and its input settings (see the
    module and ``settings.py``).

    ``settings.conversation`` names an official format (``formats.FORMATS``) or is a format
    object; None means the tokenizer's chat template (exact mode, ``chat=True``), the tokenizer's
    special tokens only (``chat=False``), or build_chat's fallback, the bare prompt (official mode).
    """

    def __init__(self, tokenizer: Any, settings: InputSettings) -> None:
        self.tokenizer, self.settings = tokenizer, settings
        self.window, self.inputs, self.chat = settings.window, settings.inputs, settings.chat
        self.name = settings.name
        self.conversation = conversation_format(settings.conversation)
        self.official_path = official_path(settings.official, settings.name)
        self.max_length = settings.max_length or official_max_length(self.window)
        self.chat_template_kwargs = dict(settings.chat_template_kwargs or {})
        self._frames: dict[str, tuple[str, str]] = {}
        templated = self.inputs == 'exact' or self.official_path.chat_template
        if (
            templated
            and self.chat
            and self.conversation is None
            and not getattr(tokenizer, 'chat_template', None)
        ):
            raise ModelConfigError(
                f'{self.name}: its tokenizer has no chat template. Give the conversation format '
                f'it was trained with (conversation=..., one of {sorted(FORMATS)}) or, for a base '
                'model, chat=False'
            )

    # The prompt as text -------------------------------------------------------------------------

    def chat_messages(self, prompt: Any) -> list[dict]:
        """The prompt as chat messages: a list of messages as it is (role and content), an
        OpenCompass prompt as OpenCompass converts it; the last is the user's."""
        if is_messages(prompt):
            messages = plain(prompt)
        else:
            from opencompass.models.huggingface_above_v4_33 import _convert_chat_messages

            messages = _convert_chat_messages([prompt])[0]
        if not messages or messages[-1]['role'] != 'user':
            raise TruncationError("the last message of a chat prompt must be the user's")
        return messages

    def prompt_text(self, prompt: Any) -> str:
        """The text that is cut: the last user message, or the whole prompt for a base model."""
        if isinstance(prompt, str):
            return prompt
        if is_messages(prompt) and not self.chat:
            return self.one_message(prompt)
        if not self.chat:
            from opencompass.models.huggingface_above_v4_33 import _convert_base_messages

            return _convert_base_messages([prompt])[0]
        return self.chat_messages(prompt)[-1]['content']

    def one_message(self, prompt: list[dict]) -> str:
        """The text of a prompt of one chat message, for a frame that takes one text (a base
        model, a conversation format); several messages need the chat template."""
        if len(prompt) != 1:
            raise TruncationError(
                f"{self.name}: a prompt of {len(prompt)} chat messages needs the tokenizer's chat "
                'template (chat=True, no conversation format): a base model or a conversation '
                'format frames one message'
            )
        return prompt[0]['content']

    def cuttable_span(self, prompt: Any) -> Optional[tuple[int, int]]:
        """Where in ``prompt_text(prompt)`` a middle cut may remove text (None: no mark, nothing
        protected): the span marked on the prompt, followed through OpenCompass's conversion to
        messages (``_convert_chat_messages`` skips empty prompts and joins consecutive ones of
        one role with '\\n'; ``_convert_base_messages`` joins all with nothing)."""
        if isinstance(prompt, str):
            return checked(text_span(prompt), prompt)
        if is_messages(prompt):
            return checked(prompt[-1].get(CUTTABLE), self.prompt_text(prompt))
        items = [(item['prompt'], item.get(CUTTABLE)) for item in prompt]
        if self.chat:
            user = []  # the prompts of the last message, which is the user's
            for item in reversed(prompt):
                if not item['prompt']:
                    continue
                if _CHAT_ROLES[item['role']] != 'user':
                    break
                user.insert(0, (item['prompt'], item.get(CUTTABLE)))
            items, separator = user, '\n'
        else:
            separator = ''
        return checked(joined_span(items, separator), self.prompt_text(prompt))

    # Exact mode ---------------------------------------------------------------------------------

    def _render(self, messages: list[dict]) -> str:
        return self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **self.chat_template_kwargs
        )

    def _template_frame(self, history: list[dict]) -> tuple[str, str]:
        """The chat template's text before and after the last user message (cached)."""
        key = json.dumps(history, sort_keys=True)
        if key in self._frames:
            return self._frames[key]
        text = self._render(history + [{'role': 'user', 'content': _SENTINEL}])
        if text.count(_SENTINEL) != 1:
            raise TruncationError(
                f'{self.name}: the chat template does not copy the user message verbatim once'
            )
        frame = tuple(text.split(_SENTINEL))
        if len(key) <= _CACHED_HISTORY:  # a conversation's own history is not kept
            self._frames[key] = frame
        return frame

    def _encode(self, text: str, special: bool = False) -> list[int]:
        if not text and not special:
            return []
        return list(self.tokenizer.encode(text, add_special_tokens=special))

    def _framed(self, prompt: Any) -> tuple[list[int], int, int, str]:
        """(full ids, start and end of the prompt's ids in them, the prompt text): the framed
        prompt tokenized once; the span is found by matching the frame's own ids at both ends."""
        if self.chat and self.conversation is None:
            messages = self.chat_messages(prompt)
            text = messages[-1]['content']
            before, after = self._template_frame(messages[:-1])
            rendered = self._render(messages)
            if not (rendered.startswith(before) and rendered.endswith(after)):
                raise TruncationError(f'{self.name}: the chat template changes with its content')
            full = self._encode(rendered)
            return full, *framed_span(full, self._encode(before), self._encode(after)), text
        text = self.one_message(prompt) if is_messages(prompt) else self.prompt_text(prompt)
        if isinstance(self.conversation, PiecesFormat):
            return (*self._pieces(self.conversation, text), text)
        fmt = self.conversation or BARE
        full = self._encode(fmt.render(text), fmt.add_special_tokens)
        return full, *self._format_span(fmt, full), text

    def _pieces(self, fmt: PiecesFormat, text: str) -> tuple[list[int], int, int]:
        """(ids, start, end of the prompt's ids): the format's pieces around the text's own ids."""
        before, after = fmt.frame_ids(self.tokenizer)
        body = self._encode(text)
        return before + body + after, len(before), len(before) + len(body)

    def _format_span(self, fmt: TextFormat, full: list[int]) -> tuple[int, int]:
        before, after = fmt.split()
        return framed_span(full, self._encode(before, fmt.add_special_tokens), self._encode(after))

    def fit_turns(self, prompt: Any, budget: int, count) -> tuple[Any, bool]:
        """(the prompt without the fewest early turns that make ``count`` of it fit ``budget``,
        whether any went); a prompt without turns as it is."""
        if not has_turns(prompt):
            return prompt, False
        fitted, dropped, _ = fit_turns(
            prompt, budget, count, lambda text: len(self._encode(text)), self.name
        )
        return fitted, dropped > 0

    def _framed_size(self, prompt: Any) -> int:
        """``len(self._framed(prompt)[0])``, rendering and encoding the prompt once."""
        if self.chat and self.conversation is None:
            return len(self._encode(self._render(self.chat_messages(prompt))))
        return len(self._framed(prompt)[0])

    def _exact(self, prompt: Any, max_out_len: int) -> ModelInput:
        budget = self.window - max_out_len
        if has_turns(prompt):
            fitted, dropped = self.fit_turns(prompt, budget, self._framed_size)
            if dropped:
                full, start, end, _ = self._framed(fitted)
                cut_at = _common_prefix(full, self._framed(prompt)[0])
                return ModelInput(full, budget, True, (start, end), cut_at)
        full, start, end, text = self._framed(prompt)
        room = budget - (len(full) - (end - start))
        if room <= 0:
            raise TruncationError(
                f'{self.name}: window {self.window} leaves no room for the prompt after '
                f'{max_out_len} answer tokens and {len(full) - (end - start)} template tokens; '
                'raise max_seq_len or lower max_out_len'
            )
        if end - start <= room:
            return ModelInput(full, budget, False, (start, end))
        kept = self.prompt_cutter(prompt, full[start:end], text).ids(room)
        cut_at = start + (room - room // 2)
        ids = full[:start] + kept + full[end:]
        return ModelInput(ids, budget, True, (start, start + len(kept)), min(cut_at, len(ids)))

    def prompt_cutter(
        self, prompt: Any, ids: Optional[list[int]] = None, text: Optional[str] = None
    ) -> PromptCutter:
        """What cuts this prompt's text to a number of ids, its protected head and tail kept
        (``ids``/``text``: the prompt's own ids and text where the caller has them)."""
        text = self.prompt_text(prompt) if text is None else text
        span = self.cuttable_span(prompt)
        head_chars, tail_chars = (span[0], len(text) - span[1]) if span else (0, 0)
        return PromptCutter(
            self.name,
            self._encode(text) if ids is None else ids,
            len(self._encode(text[:head_chars])),
            len(self._encode(text[len(text) - tail_chars :])) if tail_chars else 0,
            self.tokenizer.decode,
        )

    # Official mode ------------------------------------------------------------------------------

    def official_text(self, prompt: Any) -> tuple[str, bool]:
        """(the prompt text after the official path's cut, whether it was cut): the bare prompt
        tokenized with special tokens; over ``max_length`` ids, the path's head and tail
        decoded without special tokens (``official.py``)."""
        text, _, cut = self.official_cut(prompt)
        return text, cut is not None

    def official_cut(self, prompt: Any) -> tuple[str, list[int], Optional[tuple[int, int]]]:
        """(``official_text``'s text, the uncut prompt's ids, the (head, tail_start) kept or None
        where nothing was cut): the ids let a caller count the cut text without encoding it."""
        text = self.prompt_text(prompt)
        if self.official_path.cut == 'none':
            return text, [], None
        ids = self.tokenizer(text, truncation=False)['input_ids']
        cut = cut_ids(self.official_path, ids, self.max_length)
        if cut is None:
            return text, ids, None

        def decode(kept: list[int]) -> str:
            return self.tokenizer.decode(kept, skip_special_tokens=True)

        return cut_text(self.official_path, ids, cut, decode), ids, cut

    def official_messages(self, prompt: Any) -> tuple[list[dict], bool]:
        """(the chat messages the official path sends, whether its cut shortened the last)."""
        messages = self.chat_messages(prompt)
        text, truncated = self.official_text(prompt)
        messages[-1]['content'] = text
        return messages, truncated

    def _official(self, prompt: Any, max_out_len: int) -> ModelInput:
        if self.official_path.chat_template and self.chat and self.conversation is None:
            messages, truncated = self.official_messages(prompt)
            ids, start, end, _ = self._framed(messages)
            self._check_official_window(ids, max_out_len)
            return ModelInput(ids, self.max_length, truncated, (start, end))
        if is_messages(prompt):
            self.one_message(prompt)  # a format frames one message
        text, truncated = self.official_text(prompt)
        fmt = self.conversation or BARE
        if isinstance(fmt, PiecesFormat):
            ids, start, end = self._pieces(fmt, text)
        else:
            ids = list(
                self.tokenizer(
                    fmt.render(text), truncation=False, add_special_tokens=fmt.add_special_tokens
                )['input_ids']
            )
            start, end = self._format_span(fmt, ids)
        self._check_official_window(ids, max_out_len)
        return ModelInput(ids, self.max_length, truncated, (start, end))

    def _check_official_window(self, ids: list[int], max_out_len: int) -> None:
        if len(ids) + max_out_len > self.window:
            lower = (
                f'lower max_length ({self.max_length}) or '
                if self.official_path.cut != 'none'
                else ''
            )
            raise TruncationError(
                f'{self.name}: the official inputs take {len(ids)} ids and the answer '
                f'{max_out_len}, more than the window {self.window}; {lower}raise max_seq_len'
            )

    # Both ---------------------------------------------------------------------------------------

    def build(self, prompt: Any, max_out_len: int) -> ModelInput:
        """The ids for one OpenCompass prompt (a string or a PromptList of rounds), leaving
        ``max_out_len`` ids of the window for the answer (0 for perplexity scoring)."""
        if not is_count(max_out_len) or max_out_len < 0:
            raise ModelConfigError(
                f'{self.name}: max_out_len (the answer length) must be a whole number of tokens, '
                f'0 or more, not {max_out_len!r}: a negative one made budgets past the window'
            )
        if self.inputs == 'official':
            return self._official(prompt, max_out_len)
        return self._exact(prompt, max_out_len)

    def untruncated_length(self, prompt: Any) -> int:
        """Ids of the framed prompt before any cut."""
        return len(self._framed(prompt)[0])

    def check(self, max_out_len: int) -> None:
        """Fail now, before any weights load, if the window cannot hold the frame, the answer
        and some prompt."""
        probe = self.build('x', max_out_len)
        if self.inputs == 'official' and self.official_path.cut != 'none':
            frame = len(probe.ids) - (probe.prompt_span[1] - probe.prompt_span[0])
            if self.max_length + frame + max_out_len > self.window:
                raise TruncationError(
                    f'{self.name}: official max_length {self.max_length} + {frame} template ids + '
                    f'{max_out_len} answer tokens exceed the window {self.window}; lower '
                    'max_length or raise max_seq_len'
                )
