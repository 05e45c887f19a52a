"""The official metrics on literal strings: every rule of docs/lveval.md, Metrics, has a case that
breaks if the rule is implemented differently."""

import sys
from pathlib import Path

import jieba
import pytest
from jieba import finalseg

from opencompass_lveval.lveval.metrics import (
    BLACKLIST_EN,
    chinese_tokens,
    english_tokens,
    f1,
    jieba_cut,
    judge_all,
    keyword_recall,
    qa_f1_score,
    qa_f1_score_with_gold_ans,
    qa_f1_zh_score,
    qa_f1_zh_score_with_gold_ans,
    rouge_zh_score_blacklist,
    subset_score,
)


def test_english_tokens_lowercase_strip_punctuation_and_articles():
    assert english_tokens("The Cat, an apple; a dog! Theatre don't") == [
        'cat',
        'apple',
        'dog',
        'theatre',
        'dont',
    ]
    assert english_tokens('the.') == []  # punctuation goes first, then the article
    assert english_tokens('  ') == []


def test_chinese_tokens_are_jieba_words_not_characters():
    assert chinese_tokens('我爱北京天安门！') == ['我', '爱', '北京', '天安门']
    assert chinese_tokens('Hello，World 你好') == ['hello', 'world', '你好']
    assert chinese_tokens('。！？') == []


def test_f1_is_multiset_overlap():
    assert f1(['a', 'b', 'c'], ['b', 'c', 'd', 'e']) == pytest.approx(4 / 7, abs=1e-15)
    assert f1(['x', 'x'], ['x']) == pytest.approx(2 / 3)  # the second x is not matched
    assert f1([], ['a']) == 0
    assert f1(['a'], ['b']) == 0


def test_qa_f1_score_plain():
    assert qa_f1_score('The Eiffel Tower.', 'eiffel tower').score == 1.0
    assert qa_f1_score('Paris, France', 'Paris').score == pytest.approx(2 / 3)


def test_english_gate_threshold_is_point_two_inclusive():
    keywords = 'alpha beta gamma delta epsilon'
    passed = qa_f1_score_with_gold_ans('alpha omega', 'alpha omega', keywords)
    assert passed.score == 1.0 and not passed.keyword_gate_failed  # 1/5 = 0.2 is enough
    failed = qa_f1_score_with_gold_ans('alpha', 'alpha', keywords + ' zeta')
    assert failed.score == 0.0 and failed.keyword_gate_failed  # 1/6 < 0.2


def test_english_gate_blacklist_leaves_count_but_not_denominator():
    keywords = 'in of to and paris london'  # 6 tokens, 4 blacklisted
    judged = qa_f1_score_with_gold_ans('paris', 'paris', keywords)
    assert judged.keyword_gate_failed  # 1/6, not 1/2
    assert keyword_recall(['and', 'to'], ['and', 'to', 'paris'], BLACKLIST_EN) == 0.0
    # The blacklist is not applied to the F1 itself.
    assert qa_f1_score_with_gold_ans('paris and london', 'paris and london', 'paris').score == 1.0


def test_english_gate_skipped_without_keywords_or_with_unusable_ones():
    for keywords in (None, ''):
        judged = qa_f1_score_with_gold_ans('x', 'x', keywords)
        assert judged.score == 1.0 and not judged.keywords_unusable
    judged = qa_f1_score_with_gold_ans('cat', 'cat', 'The.')  # the official code divides by 0
    assert judged.score == 1.0 and judged.keywords_unusable and not judged.keyword_gate_failed


def test_chinese_gate_uses_answer_when_keywords_absent():
    assert qa_f1_zh_score_with_gold_ans('北京', '北京天安门').score == pytest.approx(2 / 3)
    judged = qa_f1_zh_score_with_gold_ans('我在上海', '北京天安门')
    assert judged.score == 0.0 and judged.keyword_gate_failed


def test_chinese_gate_threshold_is_point_four_and_blacklist_not_counted():
    keywords = '北京和上海的天安门'  # 北京 和 上海 的 天安门
    assert not qa_f1_zh_score_with_gold_ans('北京上海', '北京', keywords).keyword_gate_failed
    assert qa_f1_zh_score_with_gold_ans('北京', '北京', keywords).keyword_gate_failed  # 1/5
    # 和 and 的 are found but blacklisted: 0/5 instead of 2/5.
    assert qa_f1_zh_score_with_gold_ans('和的', '和的', keywords).keyword_gate_failed


def test_chinese_unusable_keywords_fall_back_to_the_answer():
    judged = qa_f1_zh_score_with_gold_ans('北京', '北京天安门', '。！')
    assert judged.keywords_unusable and judged.score == pytest.approx(2 / 3)


def test_qa_f1_zh_score_plain():
    assert qa_f1_zh_score('他在北京的天安门', '北京天安门').score == pytest.approx(
        2 * (2 / 5) * 1.0 / (2 / 5 + 1.0)
    )


def test_rouge_blacklist_scores_and_errors():
    assert rouge_zh_score_blacklist('北京天安门', '北京天安门').score == pytest.approx(
        1.0, abs=1e-8
    )
    assert rouge_zh_score_blacklist('我爱北京天安门', '北京的天安门很大').score == pytest.approx(
        0.5714285665306124, abs=1e-15
    )
    empty = rouge_zh_score_blacklist('', '北京天安门')
    assert empty.score == 0.0 and empty.error == 'ValueError'
    # Blacklisted words vanish before ROUGE: only 的 differs here.
    assert rouge_zh_score_blacklist('北京的天安门', '北京天安门').score == pytest.approx(
        1.0, abs=1e-8
    )


@pytest.mark.slow
def test_rouge_recursion_error_scores_zero_at_any_caller_depth():
    long_text = '，'.join(['北京天安门'] * 700)
    at_top = rouge_zh_score_blacklist(long_text, long_text)
    assert at_top.score == 0.0 and at_top.error == 'RecursionError'
    medium = ' '.join(['北京'] * 300)

    def nested(depth):
        return nested(depth - 1) if depth else rouge_zh_score_blacklist(medium, medium)

    top = rouge_zh_score_blacklist(medium, medium)
    assert top.error is None and top.score > 0.99
    assert nested(sys.getrecursionlimit() - 150) == top


@pytest.fixture
def restore_global_jieba():
    jieba.initialize()
    freq, total = dict(jieba.dt.FREQ), jieba.dt.total
    force_split = set(finalseg.Force_Split_Words)
    yield
    jieba.dt.FREQ, jieba.dt.total = freq, total
    finalseg.Force_Split_Words.clear()
    finalseg.Force_Split_Words.update(force_split)


def test_cuts_ignore_changes_to_the_global_jieba_dictionary(restore_global_jieba):
    before = jieba_cut('我爱北京天安门，小明硕士毕业于中国科学院计算所')
    jieba.add_word('北京天安门')
    jieba.suggest_freq(('中国', '科学院'), tune=True)
    jieba.del_word('小明')
    assert '北京天安门' in jieba.lcut('我爱北京天安门')  # the global dictionary did change
    assert jieba_cut('我爱北京天安门，小明硕士毕业于中国科学院计算所') == before
    assert finalseg.Force_Split_Words  # and the global force-split set is left as it was


def test_judge_all_scores_first_answer_only_and_tolerates_missing_predictions():
    judged = judge_all(
        'qa_f1_score', ['paris', None], [['paris', 'london'], ['rome']], [None, None]
    )
    assert [j.score for j in judged] == [1.0, 0]
    assert judge_all('qa_f1_score', ['london'], [['paris', 'london']], [''])[0].score == 0


def test_subset_score_rounds_like_the_official_script():
    assert subset_score([1.0, 0.0, 0.0]) == 33.33
    assert subset_score([0.5]) == 50.0
    assert subset_score([0.123456]) == 12.35


def test_rouge_overwritten_by_rouge_chinese_is_refused_naming_the_fix(tmp_path, monkeypatch):
    """rouge-chinese (an OpenCompass dependency) writes its files into rouge's folder when it
    installs last; dureader must then stop with the fix, not score with another ROUGE-L."""
    import shutil

    rouge_chinese = pytest.importorskip('rouge_chinese', reason='OpenCompass installs it')
    from opencompass_lveval.lveval.metrics import genuine_rouge

    genuine_rouge.cache_clear()
    assert genuine_rouge().__module__ == 'rouge.rouge'  # the installed one is rouge 1.0.1's
    clobbered = tmp_path / 'rouge'
    shutil.copytree(Path(rouge_chinese.__file__).parent, clobbered)
    monkeypatch.setattr(sys, 'path', [str(tmp_path), *sys.path])
    for name in [m for m in sys.modules if m == 'rouge' or m.startswith('rouge.')]:
        monkeypatch.delitem(sys.modules, name)
    genuine_rouge.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"rouge\.py.*not rouge 1\.0\.1's.*--no-deps"):
            rouge_zh_score_blacklist('北京天安门', '北京天安门')
    finally:
        genuine_rouge.cache_clear()
