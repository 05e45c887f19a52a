"""The golden set through a real OpenCompass run: ``LongContextAPI(inputs='official',
official='longbench_v2')`` for both golden models (budgets 2000 and 8000) on the 12 official-mode
datasets, against a server on 127.0.0.1 that answers from ``responses.json`` (as the golden set was
made) and keeps every request body as received. Every body equals a golden one byte for byte (the
CoT answer calls included), the predictions keep the answer calls' bodies and first replies, the
judgements equal the result files pred.py wrote, and result.py's table equals result.txt."""

import json
from collections import Counter
from pathlib import Path

import pytest
from parity_data import DATA
from runs import load_config, run_opencompass
from servers import ChatServer

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.longbench_v2.benchmark import kept_details

GOLDEN = DATA / 'golden' / 'longbench_v2'
TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp'
MODELS = {'llama2_sp-2k': 2000, 'llama2_sp-8k': 8000}
SERVED = 'realtok/llama2_sp'


def golden_requests() -> dict[str, list[dict]]:
    return {
        model: [json.loads(line) for line in (GOLDEN / f'requests_{model}.jsonl').open()]
        for model in MODELS
    }


def golden_server() -> ChatServer:
    """Answers a golden request from responses.json by its record and kind; anything else with
    a marker the judgements would show."""
    replies = {
        record['_id']: record['responses']
        for record in json.loads((GOLDEN / 'responses.json').read_text())['records']
    }
    asked = {
        request['body']['messages'][0]['content']: (request['_id'], request['kind'])
        for sent in golden_requests().values()
        for request in sent
    }

    def answer(prompt: str) -> str:
        found = asked.get(prompt)
        return 'NOT A GOLDEN REQUEST' if found is None else replies[found[0]][found[1]]

    return ChatServer(answer)


@pytest.fixture(scope='module')
def golden_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp('longbench_v2_golden_run')
    server = golden_server()
    cfg = load_config('eval_demo.py')  # its runners; the datasets and models here
    cfg.datasets = named('longbench_v2').configs(str(GOLDEN), mode='official', rag=8)
    cfg.models = [
        dict(
            type='opencompass_lveval.models.api.LongContextAPI',
            abbr=name,
            path=SERVED,
            tokenizer_path=str(TOKENIZER),
            url=server.url,
            inputs='official',
            official='longbench_v2',
            max_length=budget,
            max_seq_len=16384,
            batch_size=64,
            concurrency=4,
            run_cfg=dict(num_gpus=0),
        )
        for name, budget in MODELS.items()
    ]
    # updated in place: a plain dict copy would dump the summarizer's class as its repr
    cfg.summarizer.update(named('longbench_v2').summary_config(cfg.datasets))
    config = folder / 'golden.py'
    cfg.dump(str(config))
    try:
        run_opencompass(config, folder)
    finally:
        server.stop()
    (run,) = [path for path in (folder / 'out').iterdir() if path.is_dir()]
    return run, server


@pytest.mark.slow
def test_every_request_body_is_a_golden_one_byte_for_byte(golden_run):
    """The bodies received, as bytes: each the golden body serialised compactly in its key
    order (messages, model, max_tokens, temperature), and every golden body received once per
    model: 157 each, the 29 CoT answer calls included."""
    _, server = golden_run
    expected = Counter(
        json.dumps(request['body'], ensure_ascii=False, separators=(',', ':')).encode()
        for sent in golden_requests().values()
        for request in sent
    )
    assert Counter(server.bodies) == expected
    assert sum(expected.values()) == 314


def predictions(run: Path, model: str, abbr: str) -> list[dict]:
    found = json.loads((run / 'predictions' / model / f'{abbr}.json').read_text())
    return [found[key] for key in sorted(found, key=int)]


@pytest.mark.slow
def test_the_predictions_keep_the_answer_calls_and_the_first_replies(golden_run):
    """Each CoT prediction holds its first reply and, where one was made, its answer call's
    body: the golden answer call of that record; the usage record counts both calls."""
    run, _ = golden_run
    benchmark = named('longbench_v2')
    for model in MODELS:
        answer_calls = {
            request['body']['messages'][0]['content']: request['body']
            for request in golden_requests()[model]
            if request['kind'] == 'cot_ans'
        }
        seen = 0
        for size in benchmark.sizes:
            for entry in predictions(run, model, benchmark.abbr('cot', size)):
                body = entry['answer_body']
                assert (body is None) == (entry['first_reply'] == '')
                assert entry['usage']['requests'] == (1 if body is None else 2)
                if body is not None:
                    content = body['messages'][0]['content']
                    assert json.dumps(body) == json.dumps(answer_calls[content])
                    seen += 1
        assert seen == 29


def golden_lines() -> dict[str, dict[str, dict]]:
    """Result file name (without .jsonl) -> _id -> the line pred.py wrote."""
    return {
        path.stem: {line['_id']: line for line in map(json.loads, path.open())}
        for path in (GOLDEN / 'results').iterdir()
    }


def row_name(model: str, setting: str) -> str:
    from opencompass_lveval.longbench_v2.tasks import setting_named

    return setting_named(setting).result_file(model, 8)[: -len('.jsonl')]


@pytest.mark.slow
def test_the_judgements_and_result_py_table_equal_the_golden_ones(golden_run):
    """Per model and setting, the records kept (an empty reply drops one) and their judgements
    equal pred.py's result file; the report's result.py table equals result.txt's rows."""
    run, _ = golden_run
    benchmark = named('longbench_v2')
    lines = golden_lines()
    results = {}
    for model in MODELS:
        results[model] = {}
        for task in benchmark.tasks:
            judged = {}
            for size in benchmark.sizes:
                abbr = benchmark.abbr(task, size)
                result = json.loads((run / 'results' / model / f'{abbr}.json').read_text())
                results[model][abbr] = result
                judged.update(
                    {d['_id']: (d['extracted'], d['judge']) for d in kept_details(result)}
                )
            expected = lines[row_name(model, task)]
            assert judged == {key: (line['pred'], line['judge']) for key, line in expected.items()}
    table = benchmark.result_table(results)
    golden_rows = {
        line.split('\t')[0]: line.split('\t')[1:]
        for line in (GOLDEN / 'result.txt').read_text().split('\n')[1:]
    }
    shown = {
        row_name(model, task): [str(value) for value in values]
        for model, task, *values in table.rows
    }
    assert shown == golden_rows
