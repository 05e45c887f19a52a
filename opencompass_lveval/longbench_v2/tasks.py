"""The LongBench v2 table: its settings (0-shot, chain of thought, no context, retrieval), classes
and request constants, as THUDM/LongBench's ``pred.py`` and ``result.py`` (commit 2e00731) use them.

Everything a setting changes is a field of its row: the first call's template, the file its
results go to, the first call's token budget, and whether a second call asks for the answer. The
prompt texts are in ``prompts.py``; nothing else branches on a setting's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import prompts

# Every request pred.py sends: one user message, this temperature, 128 new tokens except the
# first call of chain of thought, which has room for the reasoning.
TEMPERATURE = 0.1
ANSWER_MAX_TOKENS = 128
REASONING_MAX_TOKENS = 1024

CHOICES = ('A', 'B', 'C', 'D')
DIFFICULTIES = ('easy', 'hard')
LENGTHS = ('short', 'medium', 'long')
# The fields pred.py keeps of each record (its ``main`` drops the rest, ``retrieved_context``
# included), in its order: the order of every result line's keys.
RECORD_FIELDS = (
    '_id',
    'domain',
    'sub_domain',
    'difficulty',
    'length',
    'question',
    'choice_A',
    'choice_B',
    'choice_C',
    'choice_D',
    'answer',
    'context',
)
# result.py's table: its header and the columns after the file name.
TABLE_HEADER = 'Model\tOverall\tEasy\tHard\tShort\tMedium\tLong'

# config/model2maxlen.json: the prompt budget (tokens, the BOS included) of the paper's models.
MODEL_MAX_LENGTHS = {
    'GLM-4-9B-Chat': 120000,
    'Llama-3.1-8B-Instruct': 120000,
    'Llama-3.1-70B-Instruct': 120000,
    'Llama-3.3-70B-Instruct': 120000,
    'Llama-3.1-Nemotron-70B-Instruct': 120000,
    'Qwen2.5-7B-Instruct': 120000,
    'Qwen2.5-72B-Instruct': 120000,
    'Mistral-Large-Instruct-2407': 120000,
    'Mistral-Large-Instruct-2411': 120000,
    'c4ai-command-r-plus-08-2024': 120000,
    'glm-4-plus': 120000,
    'gpt-4o-2024-08-06': 120000,
    'gpt-4o-mini-2024-07-18': 120000,
    'o1-mini-2024-09-12': 120000,
    'o1-preview-2024-09-12': 120000,
    'claude-3.5-sonnet-20241022': 200000,
}
# config/model2path.json: the served model (the request's ``model``) and its tokenizer. A model
# listed here is cut with its Hugging Face tokenizer; any other with tiktoken's gpt-4o encoding.
MODEL_PATHS = {
    'GLM-4-9B-Chat': 'THUDM/glm-4-9b-chat',
    'Llama-3.1-8B-Instruct': 'meta-llama/Llama-3.1-8B-Instruct',
    'Llama-3.1-70B-Instruct': 'meta-llama/Llama-3.1-70B-Instruct',
    'Llama-3.3-70B-Instruct': 'meta-llama/Llama-3.3-70B-Instruct',
    'Llama-3.1-Nemotron-70B-Instruct': 'nvidia/Llama-3.1-Nemotron-70B-Instruct-HF',
    'Qwen2.5-7B-Instruct': 'Qwen/Qwen2.5-7B-Instruct',
    'Qwen2.5-72B-Instruct': 'Qwen/Qwen2.5-72B-Instruct',
    'Mistral-Large-Instruct-2407': 'mistralai/Mistral-Large-Instruct-2407',
    'Mistral-Large-Instruct-2411': 'mistralai/Mistral-Large-Instruct-2411',
    'c4ai-command-r-plus-08-2024': 'CohereForAI/c4ai-command-r-plus-08-2024',
    'glm-4-plus': 'THUDM/glm-4-9b-chat',
}


@dataclass(frozen=True)
class Setting:
    """One way pred.py asks a question (its command-line switches)."""

    name: str  # what the golden requests call its first call: 0shot, cot, no_context, rag
    template: str  # the first call's prompt
    file_suffix: str  # after the model's name in the result file: '', '_cot', ...
    first_max_tokens: int
    answer_template: Optional[str] = None  # the second call's prompt (chain of thought)
    uses_retrieval: bool = False  # the context is the record's retrieved chunks

    @property
    def calls(self) -> int:
        return 2 if self.answer_template else 1

    def result_file(self, model: str, rag: int = 0) -> str:
        """The file pred.py writes for ``model`` (its last path part), as ``main`` names it."""
        suffix = f'_rag_{rag}' if self.uses_retrieval else self.file_suffix
        return f'{model.split("/")[-1]}{suffix}.jsonl'


ZERO_SHOT = Setting('0shot', prompts.ZERO_SHOT, '', ANSWER_MAX_TOKENS)
CHAIN_OF_THOUGHT = Setting(
    'cot', prompts.COT, '_cot', REASONING_MAX_TOKENS, answer_template=prompts.COT_ANSWER
)
NO_CONTEXT = Setting('no_context', prompts.NO_CONTEXT, '_no_context', ANSWER_MAX_TOKENS)
RETRIEVAL = Setting('rag', prompts.RAG, '', ANSWER_MAX_TOKENS, uses_retrieval=True)
SETTINGS = (ZERO_SHOT, CHAIN_OF_THOUGHT, NO_CONTEXT, RETRIEVAL)
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}
# The golden requests' name of the chain of thought's second call.
ANSWER_CALL = 'cot_ans'


def setting_named(name: str) -> Setting:
    """The row for ``name``, or an error listing the settings."""
    if name not in SETTINGS_BY_NAME:
        raise ValueError(
            f'LongBench v2 setting must be one of {list(SETTINGS_BY_NAME)}, not {name!r}'
        )
    return SETTINGS_BY_NAME[name]


def served_model(model: str) -> str:
    """The ``model`` pred.py puts in a request: the model2path value, else the name itself."""
    return MODEL_PATHS.get(model, model)
