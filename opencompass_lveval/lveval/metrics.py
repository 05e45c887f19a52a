"""LV-Eval's official metrics as pure functions (no I/O, no OpenCompass).

Every function reproduces the official ``metrics.py`` of LV-Eval bit for bit, including its quirks
(thresholds 0.2 / 0.4 as in the code, not the paper; blacklist applied to the keyword count only;
only the first answer scored by the caller). The one deliberate difference: a keyword string that
normalises to no tokens crashes the official code with a division by zero; here it is treated as
absent and flagged in the ``Judgement`` so evaluators can count it.
"""

from __future__ import annotations

import functools
import hashlib
import re
import string
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.responses import response_text

BLACKLIST_EN = frozenset(
    (
        'and',
        'to',
        'of',
        'in',
        'her',
        'was',
        'with',
        'for',
        'it',
        'from',
        'is',
        'that',
        'his',
        'he',
        'by',
        'she',
        'they',
        'or',
        'at',
        'because',
        'be',
        'on',
        'are',
        'their',
        'what',
        'as',
        'had',
        'were',
        'about',
        'being',
        'this',
        'who',
        'but',
        'have',
        'has',
        'when',
        'which',
        'does',
    )
)
BLACKLIST_ZH = frozenset(
    (
        '的',
        '和',
        '是',
        '等',
        '在',
        '年',
        '可以',
        '为',
        '与',
        '‰',
        '了',
        '或',
        '一种',
        '月',
        'c',
        '至',
        '日',
        '有',
        '进行',
        '于',
        '不',
        '中',
        '×',
        '根据',
        '小',
        '由',
        '亩',
        '也',
        '要',
        '指',
        '法',
        '会',
        '元',
        '主要',
        '以及',
        '通过',
        '首先',
        '对',
        '然后',
        '号',
        '以',
        '所',
        '后',
        '丁',
        '包括',
        '无',
        '将',
        '用',
        '能',
        '形',
        '方面',
        '因素',
        '位于',
        '而',
        '从',
        '到',
        '一定',
        '用于',
        '但',
        '使用',
        '让',
        '具有',
        '并',
        '亿元',
        '万元',
        '上',
        '类',
        '基于',
        '才',
        '来',
        '地',
        '片',
        '其他',
        '个',
        '或者',
        '变得',
        '时',
        '给',
        '你',
        '使',
        '条',
        '受',
        '已经',
        '带',
        '度',
    )
)
ZH_PUNCTUATION = (
    '！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』'
    '【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.'
)

# Keyword-recall thresholds of the official code (the paper states them the other way round).
KEYWORD_THRESHOLD_EN = 0.2
KEYWORD_THRESHOLD_ZH = 0.4

_DROP_EN_PUNCTUATION = str.maketrans('', '', string.punctuation)
_DROP_ZH_PUNCTUATION = str.maketrans('', '', string.punctuation + ZH_PUNCTUATION)
_ARTICLES = re.compile(r'\b(a|an|the)\b')


@dataclass(frozen=True)
class Judgement:
    """One sample's score and why it is what it is (for OpenCompass's per-sample details)."""

    score: float
    keyword_gate_failed: bool = False
    # The keyword string normalised to no tokens: the official code divides by zero here; we skip
    # the gate (English) or fall back to the answer as keywords (Chinese) and flag the sample.
    keywords_unusable: bool = False
    error: Optional[str] = None  # ROUGE raised; the official code scores that 0.0


def english_tokens(text: str) -> list[str]:
    """Lowercase, drop ASCII punctuation, blank out the words a/an/the, split on whitespace."""
    return _ARTICLES.sub(' ', text.lower().translate(_DROP_EN_PUNCTUATION)).split()


class _IsolatedJieba:
    """jieba 0.42.1 precise mode with the default dictionary, immune to global jieba changes.

    The official scores were computed with an untouched global dictionary. A private Tokenizer
    ignores ``jieba.add_word``/``load_userdict`` done elsewhere in the process; the HMM's
    force-split set is module-global in jieba, so it is emptied for the duration of each cut.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokenizer = None

    def cut(self, text: str) -> list[str]:
        import jieba
        from jieba import finalseg

        with self._lock:
            if self._tokenizer is None:
                jieba.setLogLevel(60)
                self._tokenizer = jieba.Tokenizer(jieba.DEFAULT_DICT)
                self._tokenizer.initialize()
            saved, finalseg.Force_Split_Words = finalseg.Force_Split_Words, set()
            try:
                return list(self._tokenizer.cut(text, cut_all=False, HMM=True))
            finally:
                finalseg.Force_Split_Words = saved


jieba_cut = _IsolatedJieba().cut


def normalise_zh_token(token: str) -> str:
    """Lowercase, drop ASCII and Chinese punctuation, drop all whitespace."""
    return ''.join(token.lower().translate(_DROP_ZH_PUNCTUATION).split())


def chinese_tokens(text: str) -> list[str]:
    """jieba words of ``text``, each normalised; empty ones dropped (word level, not characters)."""
    return [tok for tok in map(normalise_zh_token, jieba_cut(text)) if tok]


def f1(prediction_tokens: list[str], answer_tokens: list[str]) -> float:
    """Multiset-overlap F1; 0 when nothing overlaps (same float operations as the official code)."""
    num_same = sum((Counter(prediction_tokens) & Counter(answer_tokens)).values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(answer_tokens)
    return (2 * precision * recall) / (precision + recall)


def keyword_recall(
    prediction_tokens: list[str], keyword_tokens: list[str], blacklist: frozenset[str]
) -> float:
    """Share of keyword tokens found in the prediction; blacklisted words never count as found."""
    common = Counter(prediction_tokens) & Counter(keyword_tokens)
    found = sum(n for word, n in common.items() if word not in blacklist)
    return 1.0 * found / len(keyword_tokens)


def qa_f1_score(prediction: str, answer: str, keywords: Optional[str] = None) -> Judgement:
    """English token F1 (factrecall_en)."""
    return Judgement(f1(english_tokens(prediction), english_tokens(answer)))


def qa_f1_zh_score(prediction: str, answer: str, keywords: Optional[str] = None) -> Judgement:
    """Chinese jieba-word F1 (factrecall_zh)."""
    return Judgement(f1(chinese_tokens(prediction), chinese_tokens(answer)))


def qa_f1_score_with_gold_ans(
    prediction: str, answer: str, keywords: Optional[str] = None
) -> Judgement:
    """English F1 behind a keyword gate: 0 if under 20% of the answer keywords are present."""
    prediction_tokens = english_tokens(prediction)
    answer_tokens = english_tokens(answer)
    unusable = False
    if keywords:
        keyword_tokens = english_tokens(keywords)
        if not keyword_tokens:
            unusable = True
        elif keyword_recall(prediction_tokens, keyword_tokens, BLACKLIST_EN) < KEYWORD_THRESHOLD_EN:
            return Judgement(0.0, keyword_gate_failed=True)
    return Judgement(f1(prediction_tokens, answer_tokens), keywords_unusable=unusable)


def qa_f1_zh_score_with_gold_ans(
    prediction: str, answer: str, keywords: Optional[str] = None
) -> Judgement:
    """Chinese F1 behind a keyword gate at 40%; without keywords the answer is the keyword list."""
    prediction_tokens = chinese_tokens(prediction)
    answer_tokens = chinese_tokens(answer)
    keyword_tokens = chinese_tokens(keywords) if keywords else []
    unusable = bool(keywords) and not keyword_tokens
    if not keyword_tokens:
        keyword_tokens = answer_tokens
    if (
        keyword_tokens
        and keyword_recall(prediction_tokens, keyword_tokens, BLACKLIST_ZH) < KEYWORD_THRESHOLD_ZH
    ):
        return Judgement(0.0, keyword_gate_failed=True, keywords_unusable=unusable)
    return Judgement(f1(prediction_tokens, answer_tokens), keywords_unusable=unusable)


# sha256 of rouge 1.0.1's own files. rouge-chinese, which OpenCompass installs, writes its files
# into the same `rouge` package folder, so whichever installs last wins (pip happens to put rouge
# last, uv puts rouge-chinese last), and its ROUGE-L differs: dureader would score silently wrong.
ROUGE_1_0_1_SHA256 = {
    '__init__.py': '75c480826661fa25df62a57e4ccfc5240f86ae0df49c9ec0e8cbfc87fd3a5101',
    'rouge.py': '8f97599be50cc8897c3801ecb33773392f6399db9ad0219fb2dd93aeab0c5c53',
    'rouge_score.py': '8ee6d532297568be63d6ed84d2c1cdda3050fcc466f1c4308d83fa028d5b162d',
}


@functools.lru_cache(maxsize=1)
def genuine_rouge() -> type:
    """rouge 1.0.1's ``Rouge``, or an error naming the overwritten files and the fix."""
    import rouge

    folder = Path(rouge.__file__).parent
    changed = [
        name
        for name, digest in ROUGE_1_0_1_SHA256.items()
        if not (folder / name).is_file()
        or hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest
    ]
    if changed:
        raise RuntimeError(
            f"{folder}: {', '.join(changed)} are not rouge 1.0.1's (rouge-chinese, an OpenCompass "
            'dependency, installs its own files there, and its ROUGE-L differs from the official '
            "one). Fix: pip install --force-reinstall --no-deps 'rouge==1.0.1'"
        )
    return rouge.Rouge


def _rouge_l_f(prediction: str, answer: str) -> tuple[float, Optional[str]]:
    """``rouge`` 1.0.1's ROUGE-L F, run at the official script's stack depth.

    The package recurses once per token, so long texts raise RecursionError depending on how deep
    the caller already is; a fresh thread calling ``get_scores`` directly has exactly the depth the
    official ``evaluation.py`` had, so the same inputs fail (and score 0.0) the same way anywhere.
    """
    rouge_class = genuine_rouge()
    outcome: list = []

    def score_in_thread() -> None:
        try:
            outcome.append(
                rouge_class().get_scores([prediction], [answer], avg=True)['rouge-l']['f']
            )
        except Exception as exc:  # the official code scores any error 0.0
            outcome.append(type(exc).__name__)

    worker = threading.Thread(target=score_in_thread)
    worker.start()
    worker.join()
    value = outcome[0]
    return (0.0, value) if isinstance(value, str) else (value, None)


def rouge_zh_score_blacklist(
    prediction: str, answer: str, keywords: Optional[str] = None
) -> Judgement:
    """dureader: jieba twice, normalise, drop blacklisted words, ROUGE-L F (errors score 0.0)."""

    def prepare(text: str) -> str:
        spaced = ' '.join(jieba_cut(text))
        tokens = (normalise_zh_token(tok) for tok in jieba_cut(spaced))
        return ' '.join(tok for tok in tokens if tok not in BLACKLIST_ZH)

    score, error = _rouge_l_f(prepare(prediction), prepare(answer))
    return Judgement(score, error=error)


Metric = Callable[[str, str, Optional[str]], Judgement]
METRICS: dict[str, Metric] = {
    metric.__name__: metric
    for metric in (
        qa_f1_score,
        qa_f1_zh_score,
        qa_f1_score_with_gold_ans,
        qa_f1_zh_score_with_gold_ans,
        rouge_zh_score_blacklist,
    )
}


def judge_all(
    metric: str, predictions: list, answers: list[list[str]], keywords: list
) -> list[Judgement]:
    """Score every sample on its first answer, as the official script does.

    A prediction that is not a string is read by ``responses.response_text`` (a number as its
    text, a one-string list as that string, anything else as an empty answer) instead of
    crashing the whole evaluation; callers count them.
    """
    score = METRICS[metric]
    return [
        score(response_text(prediction), answer_list[0], keyword or '')
        for prediction, answer_list, keyword in zip(predictions, answers, keywords)
    ]


def subset_score(scores: list[float]) -> float:
    """A subset's score as the official script reports it: ``round(100 * mean, 2)``."""
    total = 0.0
    for score in scores:  # sequential sum, as the official loop adds them
        total += score
    return round(100 * total / len(scores), 2)
