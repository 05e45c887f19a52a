"""Prompts of chat messages and the cut that drops whole early turns (``prompts/messages.py``),
through the in-process input builder and the API request builder: on literal conversations,
against the tokenizer's own chat template and counts made here."""

import json

import pytest
from parity_data import DATA

from opencompass_lveval.models.api_inputs import ApiInputBuilder
from opencompass_lveval.models.inputs import InputBuilder
from opencompass_lveval.models.settings import InputSettings
from opencompass_lveval.prompts.messages import (
    TURNS,
    checked_messages,
    fit_turns,
    mark_conversation_turns,
    without_turns,
)
from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate
from opencompass_lveval.prompts.truncation import TruncationError

TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp'


def conversation(exchanges: int, words: int = 40) -> list[dict]:
    messages = [{'role': 'system', 'content': 'You write.'}]
    for number in range(exchanges):
        messages.append({'role': 'user', 'content': f'Write poem {number} about the sea.'})
        messages.append({'role': 'assistant', 'content': ' '.join([f'wave{number}'] * words)})
    messages.append({'role': 'user', 'content': 'Prepend abc to the second poem.'})
    return messages


@pytest.fixture(scope='module')
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(TOKENIZER))


def test_exchanges_are_turns_and_a_preamble_or_system_message_stays():
    messages = [
        {'role': 'system', 'content': 'S'},
        {'role': 'user', 'content': 'examples'},  # no reply: a preamble
        {'role': 'user', 'content': 'q1'},
        {'role': 'assistant', 'content': 'a1'},
        {'role': 'assistant', 'content': 'a1 more'},
        {'role': 'user', 'content': 'q2'},
        {'role': 'assistant', 'content': 'a2'},
        {'role': 'user', 'content': 'last'},
    ]
    marked = mark_conversation_turns(messages)
    assert [m.get(TURNS) for m in marked] == [
        None,
        None,
        [[0, 2, 0]],
        [[0, 2, 0]],
        [[0, 7, 0]],
        [[0, 2, 1]],
        [[0, 2, 1]],
        None,
    ]
    assert [m['content'] for m in without_turns(marked, {0})] == [
        'S',
        'examples',
        'q2',
        'a2',
        'last',
    ]


def test_turns_inside_one_text_go_whole_and_the_rest_keeps_its_place():
    text = 'PREFIX|one;two;three;QUESTION'
    message = {'role': 'user', 'content': text, TURNS: [[7, 11, 0], [11, 15, 1], [15, 21, 2]]}
    (left,) = without_turns([message], {0, 1})
    assert left['content'] == 'PREFIX|three;QUESTION'
    assert left[TURNS] == [[7, 13, 2]] and left['content'][7:13] == 'three;'


def test_the_fewest_early_turns_are_dropped_to_fit():
    messages = mark_conversation_turns(conversation(5, words=10))

    def words(found):
        return sum(len(m['content'].split()) for m in found)

    whole = words(messages)  # 2 + 5 * (6 + 10) + 6 = 88
    assert whole == 88
    fitted, dropped, count = fit_turns(messages, 60, words, lambda text: len(text.split()), 'model')
    assert (dropped, count) == (2, 56)  # one turn less (72) does not fit
    assert fitted[1]['content'] == 'Write poem 2 about the sea.'
    with pytest.raises(TruncationError, match='all 5 of its droppable turns dropped'):
        fit_turns(messages, 7, words, lambda text: len(text.split()), 'model')


def test_a_template_gives_the_records_messages_and_marks_turns_when_asked():
    record = {'messages': json.dumps(conversation(2)), 'answer': 'x'}
    plain = LongContextPromptTemplate('{messages}', messages='messages').generate_item(record)
    assert plain == conversation(2)
    marked = LongContextPromptTemplate('{messages}', messages='messages', cut=TURNS)
    assert [m.get(TURNS) is not None for m in marked.generate_item(record)] == [
        False,
        True,
        True,
        True,
        True,
        False,
    ]
    with pytest.raises(ValueError, match="the last message must be the user's"):
        checked_messages(conversation(1)[:-1], 'field')


def test_in_process_inputs_are_the_chat_template_of_the_fewest_exchanges_that_fit(tokenizer):
    """Exact mode: the ids are ``apply_chat_template`` of the conversation without its first k
    exchanges, k the smallest whose ids leave room for the answer."""
    messages = conversation(8)
    window, answer = 400, 32

    def template_ids(found):
        text = tokenizer.apply_chat_template(found, add_generation_prompt=True, tokenize=False)
        return tokenizer.encode(text, add_special_tokens=False)

    fits = [
        k
        for k in range(9)
        if len(template_ids(messages[:1] + messages[1 + 2 * k :])) <= window - answer
    ]
    builder = InputBuilder(tokenizer, InputSettings(window=window, path='m'))
    item = builder.build(mark_conversation_turns(messages), answer)
    assert item.truncated and fits[0] > 0
    assert item.ids == template_ids(messages[:1] + messages[1 + 2 * fits[0] :])
    whole = InputBuilder(tokenizer, InputSettings(window=4000, path='m'))
    item = whole.build(mark_conversation_turns(messages), answer)
    assert item.ids == template_ids(messages) and not item.truncated
    with pytest.raises(TruncationError, match='leaves no room for the prompt'):
        builder.build(messages, answer)  # no turns marked: only the last message may be cut


def test_api_requests_drop_the_same_turns_and_send_messages_as_they_are(tokenizer):
    messages = conversation(8)
    settings = InputSettings(window=400, path=str(TOKENIZER))
    builder = ApiInputBuilder(settings, tokenizer, model_id='m')
    request = builder.request(mark_conversation_turns(messages), 32)
    offline = InputBuilder(tokenizer, settings).build(mark_conversation_turns(messages), 32)
    sent = request.body['messages']
    assert request.truncated and request.local_tokens == len(offline.ids)
    assert sent == messages[:1] + messages[len(messages) - len(sent) + 1 :]
    assert all(set(m) == {'role', 'content'} for m in sent)


def test_official_paths_of_a_server_send_messages_whole_or_refuse(tokenizer):
    """official='mrcr': no cut (the official code sends the conversation as it is), so a
    conversation over the window is an error naming it; under it, the chat template's ids."""
    messages = conversation(8)
    settings = dict(path='m', inputs='official', official='mrcr')
    small = InputBuilder(tokenizer, InputSettings(window=400, **settings))
    with pytest.raises(TruncationError, match='more than the window 400; raise max_seq_len'):
        small.build(mark_conversation_turns(messages), 32)
    large = InputBuilder(tokenizer, InputSettings(window=4000, **settings))
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert large.build(messages, 32).ids == tokenizer.encode(text, add_special_tokens=False)


def test_the_mrcr_path_sends_what_openai_s_card_sends(tokenizer):
    """openai/mrcr's card calls ``chat.completions.create(model=..., messages=...)``: the body is
    those two keys, the messages as they are, no sampling sent; a served model's (its own
    tokenizer) and a closed API's (a tiktoken encoding) alike."""
    from opencompass_lveval.models.api_inputs import TiktokenTokenizer

    messages = conversation(3)
    settings = InputSettings(window=4000, path='m', inputs='official', official='mrcr')
    for counting in (tokenizer, TiktokenTokenizer('cl100k_base')):
        builder = ApiInputBuilder(settings, counting, model_id='gpt-4.1')
        request = builder.request(messages, 32, sampling={'temperature': 0.7})
        assert json.dumps(request.body) == json.dumps({'model': 'gpt-4.1', 'messages': messages})
        assert not request.truncated


def test_a_conversation_needs_the_chat_template():
    from opencompass_lveval.testing import train_tokenizer

    tokenizer = train_tokenizer()
    builder = InputBuilder(tokenizer, InputSettings(window=400, path='m', chat=False))
    with pytest.raises(TruncationError, match='a prompt of 18 chat messages needs the'):
        builder.build(conversation(8), 32)
    assert builder.build([{'role': 'user', 'content': 'one message'}], 32).ids
