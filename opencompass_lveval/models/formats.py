"""Conversation formats as data: the text or token pieces a model's prompt is wrapped in.

The official LV-Eval prediction code (docs/models.md, "LV-Eval, open-weight models", step 4)
wraps the prompt either with ``build_chat`` (a text template, tokenized whole with the
tokenizer's special tokens: BOS where it adds one) or, for models with a ``chat`` method, with the
model's own code, which joins token ids piece by piece. Both kinds are rows here, so the paper
model table can say how each model was fed, and the input builder can reproduce it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

PROMPT = '{prompt}'


@dataclass(frozen=True)
class Special:
    """A special token, by name (``<|im_start|>``), as the model's own code inserts its id."""

    name: str


@dataclass(frozen=True)
class Text:
    """A text piece, tokenized on its own without special tokens."""

    text: str


Piece = Union[Special, Text, str]  # str: only PROMPT, the prompt tokenized on its own


@dataclass(frozen=True)
class TextFormat:
    """A text template around ``{prompt}``, tokenized as one text (``build_chat``)."""

    name: str
    template: str
    add_special_tokens: bool = True  # the tokenizer's own BOS / prefix tokens, as officially

    def split(self) -> tuple[str, str]:
        """(text before the prompt, text after it)."""
        before, _, after = self.template.partition(PROMPT)
        return before, after

    def render(self, prompt: str) -> str:
        before, after = self.split()
        return before + prompt + after


@dataclass(frozen=True)
class PiecesFormat:
    """Token pieces joined around the prompt's own ids (a model's ``chat`` method)."""

    name: str
    pieces: tuple[Piece, ...]

    def frame_ids(self, tokenizer: Any) -> tuple[list[int], list[int]]:
        """(ids before the prompt, ids after it)."""
        before: list[int] = []
        after: list[int] = []
        target = before
        for piece in self.pieces:
            if piece == PROMPT:
                target = after
            elif isinstance(piece, Special):
                target.append(tokenizer.convert_tokens_to_ids(piece.name))
            else:
                target.extend(tokenizer.encode(piece.text, add_special_tokens=False))
        return before, after


Format = Union[TextFormat, PiecesFormat]

VICUNA_SYSTEM = (
    'A chat between a curious user and an artificial intelligence assistant. The assistant gives '
    "helpful, detailed, and polite answers to the user's questions."
)

# The official formats, by name: LV-Eval's build_chat branches (first match on the model name)
# and the chat methods of the remote-code models. ``bare`` is build_chat's fallback (LongChat,
# Yi-200K, Llama-3 and any unknown name).
FORMATS: dict[str, Format] = {
    fmt.name: fmt
    for fmt in (
        TextFormat('bare', PROMPT),
        TextFormat('llama2', '[INST]{prompt}[/INST]\n\n'),
        TextFormat('vicuna', VICUNA_SYSTEM + ' USER: {prompt} ASSISTANT:'),
        TextFormat('bluelm', '[|Human|]:{prompt}[|AI|]:'),
        TextFormat('mistral', '<s>[INST] {prompt} [/INST]'),
        TextFormat('internlm', '<|User|>:{prompt}<eoh>\n<|Bot|>:'),
        TextFormat('chatglm2', '[Round 1]\n\n问：{prompt}\n\n答：'),
        # Qwen-7B-Chat's make_context (chatml; no BOS; each piece tokenized on its own).
        PiecesFormat(
            'qwen_chat',
            (
                Special('<|im_start|>'),
                Text('system'),
                Text('\n'),
                Text('You are a helpful assistant.'),
                Special('<|im_end|>'),
                Text('\n'),
                Special('<|im_start|>'),
                Text('user'),
                Text('\n'),
                PROMPT,
                Special('<|im_end|>'),
                Text('\n'),
                Special('<|im_start|>'),
                Text('assistant'),
                Text('\n'),
            ),
        ),
        # ChatGLM3's build_chat_input: [gMASK] sop <|user|> + "\n" + prompt + <|assistant|>.
        PiecesFormat(
            'chatglm3',
            (
                Special('[gMASK]'),
                Special('sop'),
                Special('<|user|>'),
                Text('\n'),
                PROMPT,
                Special('<|assistant|>'),
            ),
        ),
    )
}


def conversation_format(spec: Union[str, Format, None]) -> Format | None:
    """A format from its name (``'llama2'``), a format object, or None (none given)."""
    if spec is None or isinstance(spec, (TextFormat, PiecesFormat)):
        return spec
    if spec not in FORMATS:
        raise ValueError(f'unknown conversation format {spec!r}; choose from {sorted(FORMATS)}')
    return FORMATS[spec]
