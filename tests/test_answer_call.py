"""Two-call answers in OpenCompass's inference (``TwoCallGenInferencer``) for any model: here a CPU
baseline on LongBench v2's chain of thought, in process. The second prompt is the declared
function of the record and the first reply, the prediction the second reply, and both are kept
in the prediction file; a declared benchmark states both features as data."""

import json

import pytest
from parity_data import DATA

from opencompass_lveval.framework.answer_call import AnswerCall
from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.framework.declared import DeclaredBenchmark
from opencompass_lveval.longbench_v2.benchmark import answer_prompt

GOLDEN = DATA / 'golden' / 'longbench_v2'


@pytest.mark.slow  # OpenCompass's dataset registry takes seconds to import
def test_each_prediction_is_the_second_reply_to_the_prompt_made_from_the_first(tmp_path):
    from opencompass.registry import ICL_PROMPT_TEMPLATES, ICL_RETRIEVERS
    from opencompass.utils import build_dataset_from_cfg

    from opencompass_lveval.framework.two_calls import TwoCallGenInferencer
    from opencompass_lveval.models.baselines import RandomGuessBaseline

    (config,) = named('longbench_v2').configs(
        str(GOLDEN), tasks=['cot'], sizes=['short'], mode='official'
    )
    dataset = build_dataset_from_cfg(config)
    infer = config['infer_cfg']
    retriever = ICL_RETRIEVERS.build({**infer['retriever'], 'dataset': dataset})
    template = ICL_PROMPT_TEMPLATES.build(infer['prompt_template'])
    model = RandomGuessBaseline(seed=3)
    options = {k: v for k, v in infer['inferencer'].items() if k != 'type'}
    inferencer = TwoCallGenInferencer(model=model, batch_size=4, **options)
    finals = inferencer.inference(
        retriever,
        prompt_template=template,
        output_json_filepath=str(tmp_path),
        output_json_filename='cot.json',
    )
    written = json.loads((tmp_path / 'cot.json').read_text())
    rows = dataset.test
    assert len(finals) == len(written) == len(rows) == 11
    for index, row in enumerate(rows):
        entry = written[str(index)]
        assert entry['first_reply'] == model.generate([entry['origin_prompt']], 1024)[0]
        second = answer_prompt(row, entry['first_reply'], mode='official')
        assert entry['answer_prompt'] == second
        assert entry['prediction'] == finals[index] == model.generate([second], 128)[0]
        assert entry['prediction'].startswith('The correct answer is (')


class Chat(DeclaredBenchmark):
    name, title, prefix = 'chat_toy', 'Chat toy', 'ChatToy'
    tasks, sizes = ('recall',), ('1k',)
    input_fields, messages_field, cut = ('messages',), 'messages', 'turns'
    answer_call = AnswerCall('opencompass_lveval.longbench_v2.benchmark:answer_prompt', 16)

    def score_record(self, prediction, answer):
        return 100.0 * (prediction == answer)

    def synthetic_records(self, task, size, count, seed):
        return []


def test_a_declared_benchmark_states_messages_and_a_second_call_as_data():
    (config,) = Chat().configs('data')
    template, inferencer = config['infer_cfg']['prompt_template'], config['infer_cfg']['inferencer']
    assert (template['messages'], template['cut']) == ('messages', 'turns')
    assert inferencer['type'].endswith('two_calls.TwoCallGenInferencer')
    assert inferencer['answer_call'] == {
        'prompt': 'opencompass_lveval.longbench_v2.benchmark:answer_prompt',
        'max_out_len': 16,
        'options': {},
    }

    class Misdeclared(Chat):
        input_fields, answer_call = ('context',), 'second'

    assert Misdeclared().check_declaration() == [
        "Misdeclared.messages_field 'messages' is not among its input_fields ('context',): list "
        'it there (the prompt is that field)',
        "Misdeclared.answer_call must be an AnswerCall(prompt=..., max_out_len=...), not 'second'",
    ]
    with pytest.raises(ValueError, match="answer_call prompt 'no.such:thing' names no function"):
        AnswerCall('no.such:thing', 8).function()
