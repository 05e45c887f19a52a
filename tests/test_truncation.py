"""Middle truncation on token ids, with a real byte-level tokenizer trained here."""

import pytest

from opencompass_lveval.testing import train_tokenizer
from opencompass_lveval.truncation import PromptFrame, TruncationError, fit_prompt, middle_truncate

BROKEN = '\ufffd'


@pytest.fixture(scope='module')
def tokenizer():
    return train_tokenizer()


def test_short_prompts_are_untouched():
    assert middle_truncate([1, 2, 3], 3) == [1, 2, 3]
    assert middle_truncate([], 5) == []


@pytest.mark.parametrize(
    'budget, expected',
    [
        (4, [0, 1, 8, 9]),
        (5, [0, 1, 2, 8, 9]),  # odd budgets give the extra id to the head
        (1, [0]),
    ],
)
def test_even_and_odd_budgets_keep_head_and_tail(budget, expected):
    assert middle_truncate(list(range(10)), budget) == expected


def test_budget_smaller_than_protected_instructions_is_an_error():
    with pytest.raises(TruncationError, match='first 3 and last 0 tokens must survive'):
        middle_truncate(list(range(10)), 4, keep_head=3)
    with pytest.raises(TruncationError, match='last 3 tokens must survive'):
        middle_truncate(list(range(10)), 5, keep_tail=3)
    with pytest.raises(TruncationError):
        middle_truncate(list(range(10)), 0)
    assert middle_truncate(list(range(10)), 6, keep_head=3, keep_tail=3) == [0, 1, 2, 7, 8, 9]


def test_cut_inside_a_character_moves_to_its_edge(tokenizer):
    text = '话说' + '龘' * 40 + '天下'  # 龘 is not in the vocabulary: one character, several bytes
    ids = tokenizer.encode(text, add_special_tokens=False)
    pieces_per_char = len(tokenizer.encode('龘', add_special_tokens=False))
    assert pieces_per_char > 1
    for budget in range(6, len(ids) - 1):
        kept = middle_truncate(ids, budget, decode=tokenizer.decode)
        decoded = tokenizer.decode(kept)
        assert BROKEN not in decoded, budget
        assert budget - 2 * (pieces_per_char - 1) <= len(kept) <= budget
        assert decoded.startswith('话') and decoded.endswith('下')
    plain = middle_truncate(ids, 9)  # without decode the cut may split a character
    assert any(BROKEN in tokenizer.decode(middle_truncate(ids, b)) for b in range(6, 20))
    assert len(plain) == 9


def test_chat_frame_wraps_the_prompt_in_the_templates_own_ids(tokenizer):
    frame = PromptFrame.for_chat(tokenizer)
    assert tokenizer.decode(frame.prefix) == '<|user|>\n'
    assert tokenizer.decode(frame.suffix) == '<|end|>\n<|assistant|>\n'
    history = [{'role': 'system', 'content': 'Be brief.'}]
    assert (
        tokenizer.decode(PromptFrame.for_chat(tokenizer, history).prefix)
        == '<|system|>\nBe brief.<|end|>\n<|user|>\n'
    )


def test_base_frame_is_the_tokenizers_special_tokens(tokenizer):
    frame = PromptFrame.for_base(tokenizer)
    assert frame.prefix == [tokenizer.bos_token_id] and frame.suffix == []


def test_fit_prompt_fills_the_window_exactly_and_keeps_head_and_tail(tokenizer):
    prompt = 'Read this. ' + 'the river flows north past the mill. ' * 200 + 'Question: who?'
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    frame = PromptFrame.for_chat(tokenizer)
    window, max_out_len = 301, 16
    fitted = fit_prompt(tokenizer, prompt, frame, window, max_out_len)
    budget = window - max_out_len - len(frame)
    assert len(fitted) == window - max_out_len
    body = fitted[len(frame.prefix) : len(fitted) - len(frame.suffix)]
    assert body[: budget - budget // 2] == ids[: budget - budget // 2]
    assert body[budget - budget // 2 :] == ids[-(budget // 2) :]
    assert tokenizer.decode(body).startswith('Read this.')
    assert tokenizer.decode(body).endswith('Question: who?')


def test_fit_prompt_leaves_short_prompts_alone(tokenizer):
    frame = PromptFrame.for_chat(tokenizer)
    fitted = fit_prompt(tokenizer, 'Question: who?', frame, 4096, 64)
    assert tokenizer.decode(fitted) == '<|user|>\nQuestion: who?<|end|>\n<|assistant|>\n'


def test_window_too_small_for_answer_and_template_is_a_clear_error(tokenizer):
    frame = PromptFrame.for_chat(tokenizer)
    with pytest.raises(TruncationError, match='raise max_seq_len or lower max_out_len'):
        fit_prompt(tokenizer, 'hello', frame, 64 + len(frame), 64)


def test_256k_prompts_fit_a_32k_window_exactly(shared):
    """The issue's case at full size: head and tail kept to the id, the budget filled."""
    from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
    from opencompass_lveval.text import read_book

    english = ' '.join(read_book(shared / 'corpora' / 'en' / 'war_and_peace.txt').split()[:256_000])
    chinese = ''.join(read_book(shared / 'corpora' / 'zh' / 'xiyouji.txt').split())[:256_000]
    tokenizer = train_tokenizer([english[:500_000], chinese[:100_000]], vocab_size=4000)
    frame = PromptFrame.for_chat(tokenizer)
    window, max_out_len = 32 * 1024, 64
    budget = window - max_out_len - len(frame)
    for task, context in (('factrecall_en', english), ('factrecall_zh', chinese)):
        prompt = TASKS_BY_NAME[task].prompt.format(context=context, input='Q?')
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        fitted = fit_prompt(tokenizer, prompt, frame, window, max_out_len)
        body = fitted[len(frame.prefix) : len(fitted) - len(frame.suffix)]
        head, tail = budget - budget // 2, budget // 2
        assert len(ids) > 5 * budget
        # Every kept id is the original's, in place; at most a split character's pieces
        # (3 ids per cut) are left out, and then nothing decodes to a broken character.
        kept_head = next(i for i in range(head, -1, -1) if body[:i] == ids[:i])
        kept_tail = len(body) - kept_head
        assert body[kept_head:] == ids[len(ids) - kept_tail :]
        assert head - 3 <= kept_head <= head and tail - 3 <= kept_tail <= tail
        assert BROKEN not in tokenizer.decode(body)
        if task == 'factrecall_en':  # no multi-byte characters: the budget is filled exactly
            assert len(fitted) == window - max_out_len
            assert body[:head] == ids[:head] and body[head:] == ids[-tail:]
