"""The LV-Eval task table: the one place that knows the 11 datasets.

Loaders, OpenCompass dataset configs, the scorer, the summary groups and the builders are all
derived from ``TASKS``; adding a dataset is adding one row. Prompts, generation lengths and metric
names are the official constants, byte-identical (``tests/test_tasks.py`` checks them against the
reference).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ..framework.sizes import is_size

# The official length levels, the only ones in the default configs; any other size (``512k``,
# ``1000k``, ``8k``) is a level too, for data made with the builders.
LEVELS = ('16k', '32k', '64k', '128k', '256k')
ABBR_PREFIX = 'LVEval_'  # OpenCompass's dataset abbreviations: LVEval_{dataset}_{level}

_EN_MIXUP_PROMPT = (
    'Please answer the following question based on the given passages. Questions and answers are '
    'only relevant to one passage. Only give me the answer and do not output any other explanation '
    'and evidence.\n\nArticle: {context}\n\nPlease answer the following question based on the above '
    'passages. Questions and answers are only relevant to one passage. Only give me the answer and '
    'do not output any other explanation and evidence.\n\nQuestion: {input}\nAnswer:'
)
_HOTPOT_PROMPT = (
    'Answer the question based on the given passages. Questions and answers are only relevant to '
    'some passages. Only give me the answer and do not output any other explanation and evidence.'
    '\n\nArticle: {context}\n\nPlease answer the following question based on the above passages. '
    'Questions and answers are only relevant to some passages. Only give me the answer and do not '
    'output any other explanation and evidence.\n\nQuestion: {input}\nAnswer:'
)
_MULTIFIELDQA_ZH_PROMPT = (
    '请阅读以下文章并用中文回答问题，问题和答案只与其中一篇文章有关。只需要直接给出问题的答案，'
    '不要输出其他任何解释和证据。\n\n文章：{context}\n\n请基于上面的文章回答下面的问题，问题和答案只与'
    '其中一篇文章有关。只需要直接给出问题的答案，不要输出其他任何解释和证据。\n\n问题：{input}\n回答：'
)
_FACTRECALL_EN_PROMPT = (
    'Please answer the following questions based on the given article.\n\nArticle: {context}\n\n'
    'Please answer the following questions based on the above article.\n\nQuestion: {input}\nAnswer:'
)
_FACTRECALL_ZH_PROMPT = (
    '请基于给定的文章回答下述问题。\n\n文章：{context}\n\n现在请基于上述文章回答下面的问题。\n\n'
    '问题：{input}\n回答：'
)
_ZH_MIXUP_PROMPT = (
    '请根据下面给定的文章回答问题，问题和答案只与其中一篇文章有关。\n\n文章：{context}\n\n'
    '现在请基于上述文章回答下面的问题，问题和答案只与其中一篇文章有关。\n\n问题：{input}\n回答：'
)
_LIC_PROMPT = (
    '请根据下面给定的文章回答问题，问题和答案只与其中一篇文章有关。\n\n文章：{context}\n\n'
    '请现在基于上述文章回答下面的问题，问题和答案只与其中一篇文章有关。\n\n问题：{input}\n回答：'
)


# The LLM judge's rating prompts (LV-Eval v2 paper, appendix, Figure A10, "Rating prompt for LLM
# auto judge"), word for word as the figure's Python strings render: ``{{answer}}`` prints as
# ``{answer}``, ``{A}``, ``{Q}`` and ``{R}`` take the answer, the question and the response; the
# figure's wrapped lines are joined. The factrecall prompt rates the response against the answer
# only, the other also against the question.
JUDGE_FACTRECALL_PROMPT = (
    "You are a LLM evaluator. There are a refernce {{answer}}, and a LLM's {{response}}. Your task "
    'is to rate the {{response}} based on the following two aspects:\n'
    '## Semantic similarity between {{answer}} and {{response}}\n'
    '## {{response}} recall of the {{answer}}\n'
    'You must rate the response on a scale of 0 to 10 by strictly following this format: '
    '"[rating]", for example: "[5]".\n'
    '<The start of {{answer}}>\n{A}\n<The end of {{answer}}>\n'
    '<The start of {{response}}>\n{R}\n<The end of {{response}}>'
)
JUDGE_QA_PROMPT = (
    'You are a LLM evaluator. There are a pair of {{question}} and {{answer}}, and a {{response}} '
    "from the evaluated LLM. Your task is to rate LLM's {{response}} based on the following two "
    'aspects:\n'
    '## Semantic similarity between {{answer}} and {{response}}\n'
    '## Is the {{response}} relevant to the {{question}}?\n'
    'You must rate the response on a scale of 0 to 10 by strictly following this format: '
    '"[rating]", for example: "[5]".\n'
    '<The start of {{question}}>\n{Q}\n<The end of {{question}}>\n'
    '<The start of {{answer}}>\n{A}\n<The end of {{answer}}>\n'
    '<The start of {{response}}>\n{R}\n<The end of {{response}}>'
)


@dataclass(frozen=True)
class Task:
    """One LV-Eval dataset: everything needed to load, prompt, score, group and build it."""

    name: str
    language: str  # 'en' (lengths in words) or 'zh' (lengths in characters)
    metric: str  # name of the official metric function in metrics.METRICS
    group: str  # OpenCompass summary group, kept for existing leaderboards
    qa_pairs: int  # records per length level in the official release
    max_out_len: int
    prompt: str
    # How the release was constructed (docs/lveval.md, Datasets), for the builders:
    hops: int = 1  # supporting documents per QA pair
    confusing_facts: bool = False  # CFI: confusing facts inserted into the context
    keyword_rules: bool = False  # KPR: keyword and phrase replacement applied
    answer_keywords: bool = False  # records carry answer keywords for the metric's gate
    haystack: bool = False  # a needle in a haystack of books (factrecall), not mixed documents
    # The answer is a span of the context (the needle, an extracted span): depth maps place each
    # record by where it first occurs.
    answer_in_context: bool = False
    judge_prompt: str = JUDGE_QA_PROMPT  # the LLM judge's rating prompt (str.format: Q, A, R)

    def abbr(self, level: str) -> str:
        """The OpenCompass dataset abbreviation, e.g. ``LVEval_cmrc_mixup_16k``."""
        return f'{ABBR_PREFIX}{self.name}_{level}'

    def subset(self, level: str) -> str:
        """The official subset / file stem, e.g. ``cmrc_mixup_16k``."""
        return f'{self.name}_{level}'

    def judge_request(self, question: str, answer: str, response: str) -> str:
        """The judge's prompt for one sample (the answer the metric scores against: the first),
        every field filled in one pass (text inside a field stays as it is)."""
        return self.judge_prompt.format(Q=question, A=answer, R=response)


# One row per dataset, laid out as a table.
# fmt: off
TASKS: tuple[Task, ...] = (
    Task('hotpotwikiqa_mixup', 'en', 'qa_f1_score_with_gold_ans', 'multi_hop_cqa', 124, 64,
         _HOTPOT_PROMPT, hops=2, confusing_facts=True, keyword_rules=True, answer_keywords=True),
    Task('loogle_SD_mixup', 'en', 'qa_f1_score_with_gold_ans', 'single_hop_qa', 160, 64,
         _EN_MIXUP_PROMPT, answer_keywords=True),
    Task('loogle_CR_mixup', 'en', 'qa_f1_score_with_gold_ans', 'multi_hop_qa', 99, 64,
         _EN_MIXUP_PROMPT, hops=2, answer_keywords=True),
    Task('loogle_MIR_mixup', 'en', 'qa_f1_score_with_gold_ans', 'multi_hop_qa', 139, 64,
         _EN_MIXUP_PROMPT, hops=2, answer_keywords=True),
    Task('multifieldqa_en_mixup', 'en', 'qa_f1_score_with_gold_ans', 'single_hop_cqa', 101, 64,
         _EN_MIXUP_PROMPT, confusing_facts=True, keyword_rules=True, answer_keywords=True),
    Task('multifieldqa_zh_mixup', 'zh', 'qa_f1_zh_score_with_gold_ans', 'single_hop_cqa', 133, 64,
         _MULTIFIELDQA_ZH_PROMPT, confusing_facts=True, keyword_rules=True, answer_keywords=True),
    Task('factrecall_en', 'en', 'qa_f1_score', 'factrecall_cqa', 200, 16, _FACTRECALL_EN_PROMPT,
         confusing_facts=True, keyword_rules=True, haystack=True, answer_in_context=True,
         judge_prompt=JUDGE_FACTRECALL_PROMPT),
    Task('factrecall_zh', 'zh', 'qa_f1_zh_score', 'factrecall_cqa', 200, 16, _FACTRECALL_ZH_PROMPT,
         confusing_facts=True, keyword_rules=True, haystack=True, answer_in_context=True,
         judge_prompt=JUDGE_FACTRECALL_PROMPT),
    Task('cmrc_mixup', 'zh', 'qa_f1_zh_score_with_gold_ans', 'single_hop_qa', 200, 64,
         _ZH_MIXUP_PROMPT, keyword_rules=True, answer_in_context=True),
    Task('lic_mixup', 'zh', 'qa_f1_zh_score_with_gold_ans', 'multi_hop_cqa', 197, 64, _LIC_PROMPT,
         hops=2, confusing_facts=True, answer_keywords=True),
    Task('dureader_mixup', 'zh', 'rouge_zh_score_blacklist', 'multi_hop_qa', 176, 64,
         _ZH_MIXUP_PROMPT, hops=2),
)
# fmt: on

TASKS_BY_NAME: dict[str, Task] = {task.name: task for task in TASKS}

# Summary groups in the order OpenCompass's LV-Eval summarizer prints them.
GROUPS = ('single_hop_qa', 'single_hop_cqa', 'multi_hop_qa', 'multi_hop_cqa', 'factrecall_cqa')


def split_subset(subset: str) -> tuple[Task, str]:
    """``'cmrc_mixup_16k'`` -> (cmrc_mixup task, '16k'); any size is a level (``_512k``, ``_1m``);
    a clear error for unknown names."""
    name, _, level = subset.rpartition('_')
    if name not in TASKS_BY_NAME or not is_size(level):
        raise ValueError(
            f'{subset!r} is not an LV-Eval subset: expected {{dataset}}_{{level}} with dataset in '
            f'{sorted(TASKS_BY_NAME)} and a level such as {", ".join(LEVELS)} or 512k'
        )
    return TASKS_BY_NAME[name], level


def split_abbr(abbr: str) -> Optional[tuple[Task, str]]:
    """(task, level) of an OpenCompass abbreviation (``LVEval_cmrc_mixup_512k``), else None."""
    if not abbr.startswith(ABBR_PREFIX):
        return None
    try:
        return split_subset(abbr[len(ABBR_PREFIX) :])
    except ValueError:
        return None


def subset_of_file(name: str) -> Optional[str]:
    """The subset a file holds when its name is exactly ``{dataset}_{level}.jsonl`` (a path or a
    zip member), else None."""
    stem, ext = os.path.splitext(os.path.basename(name))
    if ext != '.jsonl':
        return None
    try:
        split_subset(stem)
    except ValueError:
        return None
    return stem
