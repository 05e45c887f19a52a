"""The usage tables of ``lveval report``: API usage records totalled per model and level."""

import json

import pytest

from opencompass_lveval.errors import ReportError
from opencompass_lveval.report.usage import HEADER, usage_tables


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


def write_predictions(run, model, abbr, records):
    folder = run / 'predictions' / model
    folder.mkdir(parents=True, exist_ok=True)
    entries = {str(i): {'prediction': 'x', 'usage': r} for i, r in enumerate(records)}
    (folder / f'{abbr}.json').write_text(json.dumps(entries))


def test_usage_is_totalled_per_level_and_in_all(tmp_path):
    write_predictions(
        tmp_path,
        'gpt',
        'LVEval_factrecall_en_16k',
        [record(100, 5, cost=0.01), record(200, 7, cached=True, cost=0.02, cut=True)],
    )
    write_predictions(tmp_path, 'gpt', 'LVEval_cmrc_mixup_32k', [record(300, 1, match=False)])
    timing = tmp_path / 'predictions' / 'gpt' / 'LVEval_factrecall_en_16k.inference.json'
    timing.write_text(json.dumps({'wall_s': 3.0, 'gpus': 0}))
    write_predictions(tmp_path, 'gpt', 'AdaLEval_bestanswer_1k_0', [record(0, 0, sent=False)])
    write_predictions(tmp_path, 'gpt', 'AdaLEval_bestanswer_1k_1', [record(10, 1)])  # split parts
    write_predictions(tmp_path, 'local-hf', 'LVEval_factrecall_en_16k', [])  # no records: no table
    (tables,) = usage_tables(tmp_path)
    assert tables.header == HEADER and tables.name == 'Usage and cost: gpt'
    rows = {(row[0], row[1]): row[2:] for row in tables.rows}
    # records, sent, cached, cut, prompt, completion, mismatched, latency, wall, GPUs, tok/s, USD
    assert rows[('LV-Eval', '16k')] == [2, 1, 1, 1, 300, 12, 0, 1.0, 3.0, 0, 104.0, 0.03]
    assert rows[('LV-Eval', '32k')] == [1, 1, 0, 0, 300, 1, 1, 0.5, None, 0, None, None]
    assert rows[('Ada-LEval', '1k')][:5] == [2, 1, 0, 0, 10]
    assert rows[('all', '')] == [5, 3, 1, 1, 610, 14, 1, 2.5, 3.0, 0, 208.0, 0.03]


def test_a_broken_predictions_file_is_named(tmp_path):
    folder = tmp_path / 'predictions' / 'gpt'
    folder.mkdir(parents=True)
    (folder / 'LVEval_factrecall_en_16k.json').write_text('{"0": {"usage"')
    with pytest.raises(ReportError, match='LVEval_factrecall_en_16k.json: not a readable'):
        usage_tables(tmp_path)
