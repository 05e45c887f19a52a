"""How each paper's official code fed a model: what ``inputs='official'`` reproduces.

A model config names the path (``official=``); models know the papers' code, never a benchmark
(the benchmark's data and prompts travel with the sample). What a path decides:

- the cut of an over-long prompt, on the ids of the one user message (special tokens included,
  as the official code encoded it): ``halves`` (LV-Eval's ``prediction.py``: ``int(max_length /
  2)`` ids from each end, each half decoded on its own, special tokens skipped); ``joined``
  (LongBench v2's ``pred.py``: the first ``max_length // 2`` ids and the last ``max_length -
  max_length // 2``, decoded together, special tokens skipped: Python's ``-max_len//2`` floors,
  so an odd budget keeps one more at the end); ``none`` (Ada-LEval, MRCR: sent as it is);
- the frame of an in-process model: LV-Eval's conversation formats (``formats.py``), or the
  tokenizer's chat template, as the OpenAI-compatible server the official code called applies it
  (LongBench v2, MRCR);
- what an API request holds: the sampling sent and the order of the body's keys (as the
  official client serialised them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..files.errors import ModelConfigError

CUTS = ('halves', 'joined', 'none')


@dataclass(frozen=True)
class OfficialPath:
    """One paper's official prediction code, as far as the model's inputs go."""

    name: str
    cut: str  # one of CUTS
    chat_template: bool  # in process: the tokenizer's chat template frames the (cut) messages
    send_sampling: bool  # API: max_tokens and a temperature are sent (LV-Eval's script sent none)
    temperature: float = 0.0  # API: the temperature sent, where sampling is sent
    body_keys: tuple[str, ...] = ('model', 'messages')  # API: the body's first keys, in order
    answer_cap: Optional[int] = None  # Ada-LEval: max_tokens = min(cap, window - prompt tokens)
    overflow_answer: Optional[str] = None  # Ada-LEval: the answer when the prompt fills the window
    max_length_needed: bool = False  # its budget is the paper's table's, never derived


OFFICIAL_PATHS = {
    path.name: path
    for path in (
        # LV-Eval's prediction.py / prediction_gpt.py: the bare prompt cut to max_length in two
        # halves; build_chat's formats; the GPT script sent neither temperature nor max_tokens.
        OfficialPath('lveval', 'halves', chat_template=False, send_sampling=False),
        # Ada-LEval's OpenAIWrapper: no cut; temperature 0; max_tokens min(1024, window - n), n
        # the prompt's content tokens; with no room left it answers this without a request.
        OfficialPath(
            'adaleval',
            'none',
            chat_template=False,
            send_sampling=True,
            body_keys=('model', 'messages', 'max_tokens', 'n'),
            answer_cap=1024,
            overflow_answer=(
                'Failed to obtain answer via API. Input string longer than context window. '
            ),
        ),
        # LongBench v2's pred.py: OpenAI-compatible chat calls of one user message, the prompt cut
        # to config/model2maxlen.json's budget on the ids of the model's tokenizer (tiktoken's
        # gpt-4o encoding for the GPT and o1 rows), temperature 0.1; the body as openai's client
        # sent it: messages, model, max_tokens, temperature.
        OfficialPath(
            'longbench_v2',
            'joined',
            chat_template=True,
            send_sampling=True,
            temperature=0.1,
            body_keys=('messages', 'model', 'max_tokens', 'temperature'),
            max_length_needed=True,
        ),
        # MRCR (openai/mrcr's card): the messages sent as they are, no cut; the card's call
        # names the model and the messages only, so max_tokens and temperature are the API's
        # defaults. (eval_hub's mrcr_v2 calls Gemini through google-genai at temperature 1.0.)
        OfficialPath('mrcr', 'none', chat_template=True, send_sampling=False),
    )
}
DEFAULT_PATH = 'lveval'  # in-process models in official mode, unless a config names another


def official_path(name: Optional[str], who: str) -> OfficialPath:
    """The path ``name`` names (None: LV-Eval's), or an error listing them."""
    found = OFFICIAL_PATHS.get(DEFAULT_PATH if name is None else name)
    if found is None:
        raise ModelConfigError(
            f'{who}: official={name!r} names no official prediction path; use one of '
            f'{sorted(OFFICIAL_PATHS)}'
        )
    return found


def cut_ids(path: OfficialPath, ids: list[int], max_length: int) -> Optional[tuple[int, int]]:
    """(head, tail_start) of the ids ``path`` keeps of a prompt over ``max_length``; None where
    it is kept whole (no cut, or it fits)."""
    if path.cut == 'none' or len(ids) <= max_length:
        return None
    if path.cut == 'halves':
        half = int(max_length / 2)
        return half, len(ids) - half
    head = max_length // 2
    return head, len(ids) - (max_length - head)


def cut_text(path: OfficialPath, ids: list[int], cut: tuple[int, int], decode) -> str:
    """The text the official code made of the kept ids (``decode``: skipping special tokens)."""
    head, tail_start = cut
    if path.cut == 'halves':
        return decode(ids[:head]) + decode(ids[tail_start:])
    return decode(ids[:head] + ids[tail_start:])
