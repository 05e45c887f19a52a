"""MRCR as a declared benchmark: every golden grade and metric case through the evaluator (value
and type), the cells of both versions read from their official files (synthetic here), MRCR v2's
text transcript cut by whole turns, GDM's reported cells in the report, the two scorers."""

import json

import pytest
from parity_data import DATA

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.models.inputs import InputBuilder
from opencompass_lveval.models.settings import InputSettings
from opencompass_lveval.mrcr.dataset import MRCRDataset, MRCREvaluator
from opencompass_lveval.prompts.messages import TURNS
from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate

GOLDEN = DATA / 'golden' / 'mrcr'
TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp'


def cases(name: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / name).open()]


@pytest.mark.parametrize(
    ('version', 'name', 'reply'),
    [
        ('v2', 'gdm_mrcr_v2_metric_cases.jsonl', 'prediction'),
        ('openai', 'openai_mrcr_grade_cases.jsonl', 'response'),
    ],
)
def test_every_golden_case_through_the_evaluator(version, name, reply):
    """The per-record score is the official grader's, value and type (OpenAI's missing prefix
    the int 0); where the official raises, 0 and the official's error."""
    found = cases(name)
    rows = [
        {
            'answer': case.get('answer', case.get('target')),
            'random_string_to_prepend': case.get('random_string_to_prepend', ''),
        }
        for case in found
    ]
    result = MRCREvaluator(version).score(
        [case[reply] for case in found], [row['answer'] for row in rows], rows
    )
    for case, detail in zip(found, result['details']):
        if case.get('official_error'):
            assert (detail['score'], detail['official_error']) == (0, case['official_error'])
            continue
        assert detail['score'] == case['official_score'], case['id']
        assert type(detail['score']).__name__ == case.get('official_type', 'float'), case['id']
    scores = [d['score'] for d in result['details']]
    assert result['score'] == pytest.approx(100 * sum(scores) / len(scores))


@pytest.fixture(scope='module')
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp('mrcr_synth')
    named('mrcr').write_synthetic(folder, seed=0, mrcr_count=3)
    return folder / 'mrcr'


def test_both_versions_cells_read_their_official_files(synthetic):
    """OpenAI MRCR: the rows of the needle count in the level's bin (words here); MRCR v2: the
    bucket file's rows, each one user message (what GDM's script sends) with its turns."""
    openai, _, synthetic_mark = MRCRDataset.read_table(
        str(synthetic / 'openai'), 'openai', 4, '8k', tokens='words'
    )
    assert synthetic_mark and openai.num_rows == 3
    for row in openai.to_pylist():
        assert 4096 <= row['tokens'] <= 8192
        assert row['answer'].startswith(row['random_string_to_prepend'])
        assert json.loads(row['messages'])[-1]['role'] == 'user'
    v2, _, _ = MRCRDataset.read_table(str(synthetic / 'v2'), 'v2', 8, '8k')
    assert v2.num_rows == 3
    for row in v2.to_pylist():
        (message,) = json.loads(row['messages'])
        text, spans = message['content'], message[TURNS]
        assert [span[2] for span in spans] == list(range(len(spans)))
        assert all(text[start:end].startswith('User: Write a ') for start, end, _ in spans)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # back to back
        assert text[: spans[0][0]].endswith('======== EXAMPLE 3 ========\n\n')
        assert text[spans[-1][1] :].startswith('User: Prepend ')
    with pytest.raises(ValueError, match='holds no mrcr_v2p1_8needle_in_\\(8192,16384\\)'):
        MRCRDataset.read_table(str(synthetic / 'v2'), 'v2', 8, '16k')


def test_a_v2_transcript_is_cut_by_whole_early_turns(synthetic):
    """Through the template and the input builder: the few-shot prefix and the final question
    stay; what goes is the first k turns, whole."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(TOKENIZER))
    table, _, _ = MRCRDataset.read_table(str(synthetic / 'v2'), 'v2', 2, '8k')
    row = table.to_pylist()[0]
    template = LongContextPromptTemplate('{messages}', messages='messages', cut=TURNS)
    prompt = template.generate_item(row)
    ((message,),) = (json.loads(row['messages']),)
    text, spans = message['content'], message[TURNS]
    builder = InputBuilder(tokenizer, InputSettings(window=6000, path='m'))
    item = builder.build(prompt, 64)
    sent = tokenizer.decode(item.ids, skip_special_tokens=True)
    kept = [k for k in range(len(spans)) if (text[: spans[0][0]] + text[spans[k][0] :]) in sent]
    assert item.truncated and len(item.ids) <= 6000 - 64 and kept
    dropped = kept[0]
    rendered = tokenizer.apply_chat_template(
        [{'role': 'user', 'content': text[: spans[0][0]] + text[spans[dropped][0] :]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert item.ids == tokenizer.encode(rendered, add_special_tokens=False)


def fake_results(scores_by_level: dict) -> dict:
    return {
        f'MRCR_v2_8needle_{level}': {
            'score': 100 * sum(scores) / len(scores),
            'details': [{'score': [score]} for score in scores],
        }
        for level, scores in scores_by_level.items()
    }


def test_the_report_shows_gdms_two_cells():
    """upto_128K: the cumulative set where it was run, else one mean over every sample of the
    five buckets to 128K; at_1M: the bucket (524288, 1048576] alone."""
    benchmark = named('mrcr')
    buckets = {'8k': [1.0], '16k': [0.5, 0.5], '32k': [0.0], '64k': [1.0], '128k': [0.25]}
    results = {
        'a': fake_results({**buckets, '1m': [0.2, 0.4]}),
        'b': fake_results({'upto128k': [0.5, 1.0], **buckets}),
        'c': fake_results({'8k': [1.0]}),  # neither cell
    }
    table = benchmark.reported_cells(results)
    assert table.header == ['model', 'upto_128K', 'at_1M']
    assert table.rows == [
        ['a', pytest.approx(100 * 3.25 / 6), pytest.approx(30.0)],
        ['b', 75.0, None],
    ]


def test_both_scorers_are_declared_under_their_names():
    scorers = named('mrcr').official_scorers()
    assert sorted(scorers) == ['mrcr_openai', 'mrcr_v2']
    assert scorers['mrcr_openai'].names == ['path', 'out']
    assert scorers['mrcr_v2'].function().__name__ == 'score_v2_file'
