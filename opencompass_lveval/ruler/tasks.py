"""The RULER task table: the 13 tasks of NVIDIA/RULER's ``scripts/synthetic.yaml``, one row each.

Everything that differs between the tasks is a field of its row: which generator builds it and
with what settings, the prompt and answer prefix, the tokens reserved for the answer, and the
official metric. The texts and numbers are those of RULER commit c3f5e3b
(``scripts/data/synthetic/constants.py``, ``scripts/eval/synthetic/constants.py``,
``scripts/data/template.py``); docs/ruler.md says what each one does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The five task kinds: prompt, answer prefix, tokens to generate (RULER's data constants).
NIAH_TEMPLATE = (
    'Some special magic {type_needle_v} are hidden within the following text. Make sure to '
    'memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all '
    'the special magic {type_needle_v} for {query} mentioned in the provided text?'
)
NIAH_PREFIX = ' The special magic {type_needle_v} for {query} mentioned in the provided text are'
VT_TEMPLATE = (
    'Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n'
    '{context}\nQuestion: Find all variables that are assigned the value {query} in the text '
    'above.'
)
VT_PREFIX = (
    ' Answer: According to the chain(s) of variable assignment in the text above, {num_v} '
    'variables are assigned the value {query}, they are: '
)
CWE_TEMPLATE = (
    'Below is a numbered list of words. In these words, some appear more often than others. '
    'Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most common '
    'words in the above list?'
)
CWE_PREFIX = ' Answer: The top 10 words that appear most often in the list are:'
FWE_TEMPLATE = (
    'Read the following coded text and track the frequency of each coded word. Find the three '
    'most frequently appeared coded words. {context}\nQuestion: Do not provide any explanation. '
    "Please ignore the dots '....'. What are the three most frequently appeared words in the "
    'above coded text?'
)
FWE_PREFIX = (
    ' Answer: According to the coded text above, the three most frequently appeared words are:'
)
QA_TEMPLATE = (
    'Answer the question based on the given documents. Only give me the answer and do not output '
    'any other words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the question '
    'based on the given documents. Only give me the answer and do not output any other words.\n\n'
    'Question: {query}'
)
QA_PREFIX = ' Answer:'

# RULER's model templates (scripts/data/template.py), by name; ``base`` is the default.
TEMPLATES = {
    'base': '{task_template}',
    'meta-chat': '[INST] {task_template} [/INST]',
    'vicuna-chat': (
        'A chat between a curious user and an artificial intelligence assistant. The assistant '
        "gives helpful, detailed, and polite answers to the user's questions. USER: "
        '{task_template} ASSISTANT:'
    ),
    'lwm-chat': 'You are a helpful assistant. USER: {task_template} ASSISTANT: ',
    'command-r-chat': (
        '<BOS_TOKEN><|START_OF_TURN_TOKEN|><|USER_TOKEN|>{task_template}<|END_OF_TURN_TOKEN|>'
        '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'
    ),
    'chatglm-chat': '[gMASK]sop<|user|> \n {task_template}<|assistant|> \n ',
    'RWKV': (
        'User: hi\n\nAssistant: Hi. I am your assistant and I will provide expert full response '
        'in full details. Please feel free to ask any question and I will always answer it\n\n'
        'User: {task_template}\n\nAssistant:'
    ),
    'Phi3': '<|user|>\n{task_template}<|end|>\n<|assistant|>\n',
    'meta-llama3': (
        '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{task_template}<|eot_id|>'
        '<|start_header_id|>assistant<|end_header_id|>\n\n'
    ),
    'jamba': (
        '<|startoftext|><|bom|><|system|> <|eom|><|bom|><|user|> {task_template}<|eom|><|bom|>'
        '<|assistant|>'
    ),
    'nemotron5-instruct': (
        '<SPECIAL_10>System\n\n<SPECIAL_11>User\n{task_template}\n<SPECIAL_11>Assistant\n'
    ),
}

# The official runs' defaults (prepare.py, run.sh).
DEFAULT_SEED = 42
DEFAULT_COUNT = 500
DEFAULT_TEMPLATE = 'base'
# The lengths RULER's papers and run.sh report, in the model's tokens.
LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)


@dataclass(frozen=True, eq=False)  # rows compare and hash by identity
class RulerTask:
    """One RULER task: its generator kind and settings (synthetic.yaml's ``args``), the prompt
    and answer prefix of its kind, the tokens kept for the answer, its metric and category."""

    name: str
    kind: str  # the generator: 'niah', 'variable_tracking', 'common_words_extraction', ...
    category: str  # the papers' grouping: niah, vt, cwe, fwe, qa
    template: str
    answer_prefix: str
    tokens_to_generate: int
    metric: str  # 'string_match_all' | 'string_match_part'
    args: dict = field(default_factory=dict)

    def prompt_template(self, model_template: str = DEFAULT_TEMPLATE) -> str:
        """The template the generator fills, as prepare.py passes it: the model template around
        the task's prompt, then the answer prefix."""
        if model_template not in TEMPLATES:
            raise ValueError(
                f'RULER template must be one of {", ".join(TEMPLATES)}, not {model_template!r}'
            )
        return TEMPLATES[model_template].format(task_template=self.template) + self.answer_prefix


def _niah(name: str, haystack: str, key: str, value: str, k=1, v=1, q=1) -> RulerTask:
    settings = dict(type_haystack=haystack, type_needle_k=key, type_needle_v=value)
    settings.update(num_needle_k=k, num_needle_v=v, num_needle_q=q)
    return RulerTask(
        name, 'niah', 'niah', NIAH_TEMPLATE, NIAH_PREFIX, 128, 'string_match_all', settings
    )


TASKS = (
    _niah('niah_single_1', 'noise', 'words', 'numbers'),
    _niah('niah_single_2', 'essay', 'words', 'numbers'),
    _niah('niah_single_3', 'essay', 'words', 'uuids'),
    _niah('niah_multikey_1', 'essay', 'words', 'numbers', k=4),
    _niah('niah_multikey_2', 'needle', 'words', 'numbers'),
    _niah('niah_multikey_3', 'needle', 'uuids', 'uuids'),
    _niah('niah_multivalue', 'essay', 'words', 'numbers', v=4),
    _niah('niah_multiquery', 'essay', 'words', 'numbers', q=4),
    RulerTask(
        'vt',
        'variable_tracking',
        'vt',
        VT_TEMPLATE,
        VT_PREFIX,
        30,
        'string_match_all',
        dict(type_haystack='noise', num_chains=1, num_hops=4),
    ),
    RulerTask(
        'cwe',
        'common_words_extraction',
        'cwe',
        CWE_TEMPLATE,
        CWE_PREFIX,
        120,
        'string_match_all',
        dict(freq_cw=30, freq_ucw=3, num_cw=10),
    ),
    RulerTask(
        'fwe',
        'freq_words_extraction',
        'fwe',
        FWE_TEMPLATE,
        FWE_PREFIX,
        50,
        'string_match_all',
        dict(alpha=2.0),
    ),
    RulerTask(
        'qa_1', 'qa', 'qa', QA_TEMPLATE, QA_PREFIX, 32, 'string_match_part', {'dataset': 'squad'}
    ),
    RulerTask(
        'qa_2', 'qa', 'qa', QA_TEMPLATE, QA_PREFIX, 32, 'string_match_part', {'dataset': 'hotpotqa'}
    ),
)
TASKS_BY_NAME = {task.name: task for task in TASKS}


def task_named(name: str) -> RulerTask:
    """The row for ``name``, or an error listing the tasks."""
    if name not in TASKS_BY_NAME:
        raise ValueError(f'RULER task must be one of {", ".join(TASKS_BY_NAME)}, not {name!r}')
    return TASKS_BY_NAME[name]
