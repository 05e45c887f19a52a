"""The usage tables of ``lveval report``: usage records totalled per dataset by the infer task,
then per model and level from the records kept beside the predictions."""

import json

import pytest

from opencompass_lveval.files.errors import ReportError
from opencompass_lveval.report.usage import HEADER, usage_tables, usage_totals


def record(prompt, completion, *, cached=False, match=True, cut=False, cost=None, sent=True):
    return {
        'sent': sent,
        'prompt_tokens': prompt,
        'completion_tokens': completion,
        'local_prompt_tokens': prompt if match else prompt + 1,
        'prompt_tokens_match': match,
        'latency_s': 0.5,
        'cached': cached,
        'truncated': cut,
        'cost_usd': cost,
    }


def write_inference(run, model, stem, records, wall_s=None, gpus=0):
    """What the infer task keeps beside ``stem.json``: the totals of its records."""
    folder = run / 'predictions' / model
    folder.mkdir(parents=True, exist_ok=True)
    summary = {'wall_s': wall_s, 'gpus': gpus, 'usage': usage_totals(records)}
    (folder / f'{stem}.inference.json').write_text(json.dumps(summary))


def test_usage_is_totalled_per_level_and_in_all(tmp_path):
    write_inference(
        tmp_path,
        'gpt',
        'LVEval_factrecall_en_16k',
        [record(100, 5, cost=0.01), record(200, 7, cached=True, cost=0.02, cut=True), None],
        wall_s=3.0,
    )
    write_inference(tmp_path, 'gpt', 'LVEval_cmrc_mixup_32k', [record(300, 1, match=False)])
    write_inference(tmp_path, 'gpt', 'AdaLEval_bestanswer_1k_0', [record(0, 0, sent=False)])
    write_inference(tmp_path, 'gpt', 'AdaLEval_bestanswer_1k_1', [record(10, 1)])  # split parts
    write_inference(tmp_path, 'local-hf', 'LVEval_factrecall_en_16k', [])  # no records: no table
    (tables,) = usage_tables(tmp_path, {})
    assert tables.header == HEADER and tables.name == 'Usage and cost: gpt'
    rows = {(row[0], row[1]): row[2:] for row in tables.rows}
    # records, sent, cached, cut, prompt, completion, mismatched, latency, wall, GPUs, tok/s, USD
    assert rows[('LV-Eval', '16k')] == [2, 1, 1, 1, 300, 12, 0, 1.0, 3.0, 0, 104.0, 0.03]
    assert rows[('LV-Eval', '32k')] == [1, 1, 0, 0, 300, 1, 1, 0.5, None, 0, None, None]
    assert rows[('Ada-LEval', '1k')][:5] == [2, 1, 0, 0, 10]
    assert rows[('all', '')] == [5, 3, 1, 1, 610, 14, 1, 2.5, 3.0, 0, 208.0, 0.03]


def test_a_broken_inference_record_is_named(tmp_path):
    folder = tmp_path / 'predictions' / 'gpt'
    folder.mkdir(parents=True)
    (folder / 'LVEval_factrecall_en_16k.inference.json').write_text('{"usage"')
    with pytest.raises(
        ReportError, match='LVEval_factrecall_en_16k.inference.json: not a readable'
    ):
        usage_tables(tmp_path, {})
