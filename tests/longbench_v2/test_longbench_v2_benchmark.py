"""LongBench v2 as a declared benchmark, against the golden set: in-process official inputs are the
golden request contents under the chat template, the dataset's prompts are pred.py's, the
evaluator's judgements and result.py's table equal the result files and result.txt, ``lveval
inputs`` shows each CoT record's first call, and the second call is a function of the record and
the first reply."""

import json

import pytest
from official import longbench_v2_prompt
from parity_data import DATA

from opencompass_lveval.framework.answer_call import AnswerCall, answer_call_of, merged_usage
from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.longbench_v2 import prompts
from opencompass_lveval.longbench_v2.benchmark import answer_prompt
from opencompass_lveval.longbench_v2.dataset import LongBenchV2Dataset, LongBenchV2Evaluator
from opencompass_lveval.longbench_v2.tasks import setting_named
from opencompass_lveval.models.inputs import InputBuilder
from opencompass_lveval.models.settings import InputSettings

GOLDEN = DATA / 'golden' / 'longbench_v2'
TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp'
MODELS = {'llama2_sp-2k': 2000, 'llama2_sp-8k': 8000}
TEMPLATES = {
    '0shot': prompts.ZERO_SHOT,  # the official files' bytes (sha256-checked)
    'cot': prompts.COT,
    'cot_ans': prompts.COT_ANSWER,
    'no_context': prompts.NO_CONTEXT,
    'rag': prompts.RAG,
}


@pytest.fixture(scope='module')
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(TOKENIZER))


def golden(model: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / f'requests_{model}.jsonl').open()]


@pytest.mark.parametrize(
    ('model', 'count'),
    [('llama2_sp-2k', 91), pytest.param('llama2_sp-8k', 91, marks=pytest.mark.slow)],
)
def test_in_process_official_inputs_are_the_golden_contents_under_the_chat_template(
    model, count, tokenizer, records, replies
):
    """A vLLM server applies the model's chat template to what pred.py sends: in process,
    ``official='longbench_v2'`` gives those ids for every golden call without a long document
    (the answer calls and no-context calls, and every call of the short records)."""
    checked, budget = 0, MODELS[model]
    settings = InputSettings(
        window=16384, path='m', inputs='official', official='longbench_v2', max_length=budget
    )
    builder = InputBuilder(tokenizer, settings)
    for request in golden(model):
        record = records[request['_id']]
        if request['kind'] not in ('no_context', 'cot_ans') and len(record['context']) > 10000:
            continue
        reasoning = replies[request['_id']]['cot'] if request['kind'] == 'cot_ans' else None
        rag = 8 if request['kind'] == 'rag' else 0
        prompt = longbench_v2_prompt(TEMPLATES[request['kind']], record, rag, reasoning)
        content = request['body']['messages'][0]['content']
        text = tokenizer.apply_chat_template(
            [{'role': 'user', 'content': content}], add_generation_prompt=True, tokenize=False
        )
        assert builder.build(prompt, 128).ids == tokenizer.encode(text, add_special_tokens=False), (
            model,
            request['seq'],
        )
        checked += 1
    assert checked == count


@pytest.mark.parametrize('setting', ['0shot', 'cot', 'no_context', 'rag'])
def test_the_datasets_prompts_are_pred_pys(setting, records):
    """Official mode: the record's whole prompt as pred.py fills it (its placeholder quirks
    included); default mode: the fields the one-pass template fills, stripped."""
    rag = 8 if setting == 'rag' else 0
    for length in ('short', 'medium', 'long'):
        official, _, _ = LongBenchV2Dataset.read_table(
            str(GOLDEN), setting, length, 'official', rag
        )
        for row in official.to_pylist():
            record = records[row['_id']]
            assert row['prompt'] == longbench_v2_prompt(TEMPLATES[setting], record, rag)
        default, _, _ = LongBenchV2Dataset.read_table(str(GOLDEN), setting, length, 'default', rag)
        for row in default.to_pylist():
            record = records[row['_id']]
            assert record['length'] == length
            assert row['question'] == record['question'].strip()
            assert (row['choice_D'], row['answer']) == (
                record['choice_D'].strip(),
                record['answer'],
            )


def golden_lines() -> dict[str, dict[str, dict]]:
    return {
        path.stem: {line['_id']: line for line in map(json.loads, path.open())}
        for path in (GOLDEN / 'results').iterdir()
    }


def final_reply(reply: dict, setting: str) -> str:
    """What the model's final answer was: the answer call's reply (none where the first reply
    was empty and no second call was made)."""
    if setting != 'cot':
        return reply[setting]
    return reply['cot_ans'] if reply['cot'] != '' else ''


@pytest.mark.parametrize('setting', ['0shot', 'cot', 'no_context', 'rag'])
def test_the_evaluator_judges_as_pred_py_and_makes_result_py_table(setting, records, replies):
    """The canned replies through the evaluator (official mode), per length: the records kept
    and their judgements are pred.py's result file's, and the table's row is result.txt's."""
    benchmark = named('longbench_v2')
    evaluator = LongBenchV2Evaluator('official')
    results = {}
    rag = 8 if setting == 'rag' else 0
    for length in benchmark.sizes:
        table, _, _ = LongBenchV2Dataset.read_table(str(GOLDEN), setting, length, 'official', rag)
        rows = table.to_pylist()
        predictions = [final_reply(replies[row['_id']], setting) for row in rows]
        results[benchmark.abbr(setting, length)] = evaluator.score(
            predictions, [row['answer'] for row in rows], rows
        )
    result_file = setting_named(setting).result_file('llama2_sp-2k', 8)[: -len('.jsonl')]
    expected = golden_lines()[result_file]
    judged = {
        d['_id']: (d['extracted'], d['judge'])
        for found in results.values()
        for d in found['details']
    }
    assert judged == {key: (line['pred'], line['judge']) for key, line in expected.items()}
    (row,) = benchmark.result_table({'llama2_sp-2k': results}).rows
    golden_rows = {
        line.split('\t')[0]: line.split('\t')[1:]
        for line in (GOLDEN / 'result.txt').read_text().split('\n')[1:]
    }
    assert [str(value) for value in row[2:]] == golden_rows[result_file]


def test_default_mode_keeps_an_empty_reply_and_counts_it_wrong():
    rows = [
        {'_id': 'a', 'answer': 'A', 'difficulty': 'easy', 'length': 'short'},
        {'_id': 'b', 'answer': 'B', 'difficulty': 'hard', 'length': 'short'},
    ]
    replies = ['**The correct answer is (A)**', '']
    official = LongBenchV2Evaluator('official').score(replies, ['A', 'B'], rows)
    default = LongBenchV2Evaluator('default').score(replies, ['A', 'B'], rows)
    assert (official['accuracy'], len(official['details'])) == (100.0, 1)
    assert (default['accuracy'], default['accuracy_difficulty_hard']) == (50.0, 0.0)
    assert official['provenance']['dropped_empty_replies'] == 1


def test_the_answer_call_is_the_record_and_the_first_reply_without_the_document(records):
    """pred.py's 0shot_cot_ans from the record and the stripped first reply, no document; no
    call for an empty first reply; the dataset config names it with its 128 tokens."""
    config = named('longbench_v2').configs('data', tasks=['cot'], sizes=['long'], mode='official')
    call = answer_call_of(config[0])
    assert call == AnswerCall(
        'opencompass_lveval.longbench_v2.benchmark:answer_prompt',
        128,
        {'mode': 'official', 'rag': 0},
    )
    record = next(iter(records.values()))
    expected = longbench_v2_prompt(prompts.COT_ANSWER, record, reasoning='  Because. ')
    assert call.prompt_for(record, '  Because. ') == expected
    assert 'The text is too long and omitted here.' in expected
    assert record['context'].strip()[:200] not in expected
    assert answer_prompt(record, '') is None


def test_a_two_call_usage_record_counts_both_calls():
    first = {
        'sent': True,
        'cached': False,
        'prompt_tokens': 2000,
        'completion_tokens': 300,
        'local_prompt_tokens': 2000,
        'prompt_tokens_match': True,
        'latency_s': 1.5,
        'truncated': True,
        'budget': 2000,
        'transport': 'messages',
        'cost_usd': None,
        'prefix_cached_tokens': None,
    }
    second = {**first, 'prompt_tokens': 400, 'completion_tokens': 12, 'local_prompt_tokens': 400}
    second.update(cached=True, truncated=False, latency_s=0.25, prompt_tokens_match=False)
    both = merged_usage(first, second)
    assert {key: both[key] for key in ('prompt_tokens', 'completion_tokens', 'latency_s')} == {
        'prompt_tokens': 2400,
        'completion_tokens': 312,
        'latency_s': 1.75,
    }
    assert (both['requests'], both['cached'], both['truncated']) == (1, False, True)
    assert both['prompt_tokens_match'] is False and both['calls'] == [first, second]
    assert merged_usage(first, None)['requests'] == 1


@pytest.mark.slow
def test_lveval_inputs_shows_each_cot_records_first_call(tmp_path, records):
    """The first call's body, as the golden set's for the record (no server asked)."""
    from opencompass_lveval.commands.inputs import run

    config = tmp_path / 'config.py'
    config.write_text(
        'from opencompass_lveval.models.api import LongContextAPI\n'
        "_lb = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])"
        ".named('longbench_v2')\n"
        f"datasets = _lb.configs({str(GOLDEN)!r}, tasks=['cot'], mode='official')\n"
        f'models = [dict(type=LongContextAPI, abbr="lb", path="realtok/llama2_sp", '
        f'tokenizer_path={str(TOKENIZER)!r}, url="http://127.0.0.1:9/v1", inputs="official", '
        'official="longbench_v2", max_length=2000, max_seq_len=16384)]\n'
    )
    out = tmp_path / 'inputs.jsonl'
    assert run(config=str(config), out=str(out)) == 0
    shown = [json.loads(line)['body'] for line in out.open()]
    expected = [r['body'] for r in golden('llama2_sp-2k') if r['kind'] == 'cot']
    assert len(shown) == 32 and sorted(map(json.dumps, shown)) == sorted(map(json.dumps, expected))
