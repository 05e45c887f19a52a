"""Middle truncation on token ids, with a real byte-level tokenizer trained here."""

from itertools import cycle, islice

import pytest
from official import chat_template_ids
from opencompass.utils.prompt import PromptList

from opencompass_lveval.models.inputs import InputBuilder
from opencompass_lveval.models.settings import InputSettings
from opencompass_lveval.prompts.truncation import TruncationError, middle_truncate
from opencompass_lveval.testing import train_tokenizer

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


def test_exact_ids_are_the_chat_templates_own(tokenizer):
    builder = InputBuilder(tokenizer, InputSettings(window=4096))
    item = builder.build('Question: who?', max_out_len=64)
    assert item.ids == chat_template_ids(tokenizer, 'Question: who?') and not item.truncated
    assert tokenizer.decode(item.ids) == '<|user|>\nQuestion: who?<|end|>\n<|assistant|>\n'
    rounds = PromptList(
        [{'role': 'SYSTEM', 'prompt': 'Be brief.'}, {'role': 'HUMAN', 'prompt': 'Question: who?'}]
    )
    assert tokenizer.decode(builder.build(rounds, 64).ids) == (
        '<|system|>\nBe brief.<|end|>\n<|user|>\nQuestion: who?<|end|>\n<|assistant|>\n'
    )


def test_base_framing_is_the_tokenizers_special_tokens(tokenizer):
    item = InputBuilder(tokenizer, InputSettings(window=4096, chat=False)).build(
        'Question: who?', 64
    )
    assert item.ids == tokenizer.encode('Question: who?', add_special_tokens=True)
    assert item.ids[0] == tokenizer.bos_token_id and item.prompt_span == (1, len(item.ids))


def test_cut_fills_the_window_exactly_and_keeps_head_and_tail(tokenizer):
    prompt = 'Read this. ' + 'the river flows north past the mill. ' * 200 + 'Question: who?'
    full = chat_template_ids(tokenizer, prompt)
    window, max_out_len = 301, 16
    item = InputBuilder(tokenizer, InputSettings(window=window)).build(prompt, max_out_len)
    assert item.truncated and len(item.ids) == window - max_out_len == item.budget
    start, end = item.prompt_span
    kept = end - start
    head, tail = kept - kept // 2, kept // 2
    assert item.ids[: start + head] == full[: start + head]  # the full encoding, cut in the middle
    assert item.ids[start + head :] == full[len(full) - tail - (len(item.ids) - end) :]
    text = tokenizer.decode(item.ids)
    assert text.startswith('<|user|>\nRead this.')
    assert text.endswith('Question: who?<|end|>\n<|assistant|>\n')


def test_window_too_small_for_answer_and_template_is_a_clear_error(tokenizer):
    builder = InputBuilder(tokenizer, InputSettings(window=70))
    with pytest.raises(TruncationError, match='raise max_seq_len or lower max_out_len'):
        builder.check(64)
    builder.check(16)


@pytest.mark.slow
def test_256k_prompts_fit_a_32k_window_exactly(corpora):
    """The issue's case at full size: head and tail kept to the id, the budget filled."""
    from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
    from opencompass_lveval.prompts.text import read_book

    # The books' heads, repeated in turn until the prompt is 256k words (characters) long.
    english_words = [
        word
        for name in ('dracula', 'frankenstein', 'alice_in_wonderland')
        for word in read_book(corpora / 'en' / f'{name}.txt').split()
    ]
    english = ' '.join(islice(cycle(english_words), 256_000))
    chinese = ''.join(
        islice(cycle(''.join(read_book(corpora / 'zh' / 'xiyouji.txt').split())), 256_000)
    )
    tokenizer = train_tokenizer([english[:500_000], chinese[:100_000]], vocab_size=4000)
    window, max_out_len = 32 * 1024, 64
    builder = InputBuilder(tokenizer, InputSettings(window=window))
    for task, context in (('factrecall_en', english), ('factrecall_zh', chinese)):
        prompt = TASKS_BY_NAME[task].prompt.format(context=context, input='Q?')
        full = chat_template_ids(tokenizer, prompt)
        item = builder.build(prompt, max_out_len)
        start, end = item.prompt_span
        ids = full[start : len(full) - (len(item.ids) - end)]  # the prompt's own ids, uncut
        body = item.ids[start:end]
        budget = window - max_out_len - (len(item.ids) - len(body))
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
            assert len(item.ids) == window - max_out_len
            assert body[:head] == ids[:head] and body[head:] == ids[-tail:]


# What a cut keeps is what the dataset's template marks ---------------------------------------

LONG = 'the river flows north past the mill. '


def shipped_case(case: str) -> tuple[str, dict, str, str, object]:
    """(dataset abbr, record, the text before the cuttable part, the text after it, label) for
    a prompt of each shipped kind whose cuttable part is long."""
    from opencompass_lveval.adaleval import prompts
    from opencompass_lveval.adaleval.dataset import PROMPT_PARTS
    from opencompass_lveval.adaleval.tasks import BESTANSWER, TSORT
    from opencompass_lveval.lveval.tasks import TASKS_BY_NAME

    def parts(sample):
        return {part: getattr(sample, part) for part in PROMPT_PARTS}

    if case == 'lveval':
        task = TASKS_BY_NAME['loogle_SD_mixup']
        head, _, rest = task.prompt.partition('{context}')
        record = {'context': LONG * 1000, 'input': 'Who?'}
        return task.abbr('16k'), record, head, rest.replace('{input}', 'Who?'), None
    if case == 'bestanswer':
        record = {'question': 'Which mill?', 'all_answers': [LONG * 800] * 2, 'answer': 'A1'}
        sample = BESTANSWER.sample(record, None)
        end = prompts.BESTANSWER_END_PROMPT
        return 'AdaLEval_bestanswer_1k', parts(sample), prompts.BESTANSWER_META_PROMPT, end, None
    record = {'answer': [1, 2, 3, 4], 'prompt': prompts.tsort_prompt('b', [LONG * 400] * 4, 'a')}
    sample = TSORT.sample(record, None)
    if case == 'tsort':
        return 'AdaLEval_tsort_2k', parts(sample), prompts.TSORT_INSTRUCTION, '', None
    order = '[2, 1, 4, 3]'  # perplexity mode: the order scored is kept too
    return (
        'AdaLEval_tsort_ppl_2k',
        parts(sample),
        prompts.TSORT_INSTRUCTION,
        'Answer: ' + order,
        order,
    )


@pytest.mark.parametrize('case', ['lveval', 'bestanswer', 'tsort', 'tsort_ppl'])
def test_a_cut_keeps_what_the_shipped_config_marks(tokenizer, case):
    from shipped import shipped_prompt

    abbr, record, head, tail, label = shipped_case(case)
    mode = 'gen' if label is None else 'ppl'
    prompt = shipped_prompt(abbr, record, label=label, mode=mode)
    chat = label is None  # perplexity scoring frames the text with special tokens only
    head_ids, tail_ids = (len(tokenizer.encode(t, add_special_tokens=False)) for t in (head, tail))
    window = 2 * max(head_ids, tail_ids) + 120
    builder = InputBuilder(tokenizer, InputSettings(window=window, chat=chat))
    assert builder.untruncated_length(prompt) > 3 * window
    item = builder.build(prompt, 16)
    assert item.truncated
    start, end = item.prompt_span
    text = tokenizer.decode(item.ids[start:end])
    assert text.startswith(head) and text.endswith(tail)
    with pytest.raises(TruncationError, match='must survive'):
        InputBuilder(tokenizer, InputSettings(window=head_ids + tail_ids, chat=chat)).build(
            prompt, 16
        )


def test_an_edited_template_with_the_mark_is_still_protected(tokenizer):
    """Protection follows the mark, not a known text: an edited LV-Eval prompt keeps its own
    instructions; the same text without a mark (a plain string) has nothing protected."""
    from shipped import shipped_prompt

    instructions = 'Read every passage below; the answer is in exactly one of them. ' * 4
    question = '\n\nAnswer from the passages above, in a few words.\nQuestion: {input}\nAnswer:'
    edited = dict(round=[dict(role='HUMAN', prompt=instructions + '{context}' + question)])
    record = {'context': LONG * 300, 'input': 'Who?'}
    prompt = shipped_prompt('LVEval_factrecall_en_16k', record, template=edited)
    text = prompt[-1]['prompt']
    assert text == instructions + record['context'] + question.format(input='Who?')
    instruction_ids = len(tokenizer.encode(instructions, add_special_tokens=False))
    window = instruction_ids + 40  # room for about half of the instructions
    with pytest.raises(TruncationError, match='must survive'):
        InputBuilder(tokenizer, InputSettings(window=window)).build(prompt, 16)
    cut = InputBuilder(tokenizer, InputSettings(window=window)).build(
        text, 16
    )  # unmarked: cut anywhere
    assert cut.truncated
    roomy = InputBuilder(tokenizer, InputSettings(window=3 * instruction_ids)).build(prompt, 16)
    start, end = roomy.prompt_span
    kept = tokenizer.decode(roomy.ids[start:end])
    assert kept.startswith(instructions) and kept.endswith(question.format(input='Who?'))


def test_the_builder_reads_the_span_of_the_message_it_cuts(tokenizer):
    turns = PromptList(
        [
            {'role': 'HUMAN', 'prompt': 'Q1', 'cuttable': (0, 2)},
            {'role': 'BOT', 'prompt': 'A1'},
            {'role': 'HUMAN', 'prompt': 'Read: ABC.', 'cuttable': (6, 9)},
        ]
    )
    assert InputBuilder(tokenizer, InputSettings(window=4096)).cuttable_span(turns) == (
        6,
        9,
    )  # the last user's
    base = InputBuilder(
        tokenizer, InputSettings(window=4096, chat=False)
    )  # one text: 'Q1A1Read: ABC.'
    assert base.cuttable_span(turns) == (10, 13)
    assert base.cuttable_span('Read: ABC.') is None  # a plain string has no mark
    stale = PromptList([{'role': 'HUMAN', 'prompt': 'Read', 'cuttable': (2, 9)}])
    with pytest.raises(ValueError, match='does not fit'):
        base.cuttable_span(stale)
