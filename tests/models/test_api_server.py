"""LongContextAPI against real OpenAI-compatible servers on 127.0.0.1: ``transformers serve`` and
vLLM's server (its CPU build), serving a tiny random-weight Llama that carries the real Llama-2
SentencePiece tokenizer and chat template. The server's own ``usage.prompt_tokens`` is the check
of every local count; its access log counts the requests."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from runs import derived_config, results, run_opencompass
from servers import (
    VLLM_SIZE,
    CutOffProxy,
    Server,
    require_vllm,
    transformers_serve,
    vllm_serve,
)
from test_api import marked_prompt

pytestmark = [pytest.mark.slow, pytest.mark.server]
WINDOW = 1024
KEEP = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k', 'AdaLEval_bestanswer_1k')


@pytest.fixture(scope='module')
def served_model(tmp_path_factory, tokenizer_folders) -> Path:
    """The tiny Llama both servers serve, in the smallest shape vLLM's CPU kernels take."""
    from transformers import AutoTokenizer

    from opencompass_lveval.testing import save_tiny_llama

    folder = tmp_path_factory.mktemp('served')
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folders['llama2'])
    return save_tiny_llama(
        folder / 'tiny-llama', window=4 * WINDOW, tokenizer=tokenizer, **VLLM_SIZE
    )


@pytest.fixture(scope='module')
def transformers_server(served_model):
    pytest.importorskip('fastapi', reason='transformers serve needs the serving extra')
    pytest.importorskip('uvicorn', reason='transformers serve needs the serving extra')
    log = served_model.parent / 'transformers.log'
    server = Server('transformers serve', served_model, log, transformers_serve, False).start()
    yield server
    server.stop()


@pytest.fixture(scope='module')
def vllm_server(served_model):
    require_vllm()
    launch = partial(vllm_serve, window=4 * WINDOW)
    server = Server('vllm serve', served_model, served_model.parent / 'vllm.log', launch, True)
    yield server.start()
    server.stop()


@pytest.fixture(
    scope='module', params=['transformers', pytest.param('vllm', marks=pytest.mark.vllm)]
)
def served(request) -> Server:
    return request.getfixturevalue(f'{request.param}_server')


def prediction_files(folder: Path) -> list[Path]:
    """OpenCompass's predictions files (not the inference records beside them)."""
    return [p for p in folder.glob('*.json') if not p.name.endswith('.inference.json')]


def api_model(served: Server, **settings) -> dict:
    """A served model's config; token ids where the server takes them (vLLM)."""
    config = dict(
        type='opencompass_lveval.models.api.LongContextAPI',
        abbr='served-llama',
        path=str(served.model),
        url=served.url,
        prompt_ids=served.takes_token_ids,
        max_seq_len=WINDOW,
        max_out_len=8,
        batch_size=4,
        concurrency=2,
        retry=1,
        timeout=120,
        run_cfg=dict(num_gpus=0),
    )
    return {**config, **settings}


def counted_as_sent(served: Server, tmp_path: Path, transport: str, **settings) -> None:
    """An uncut and two cut prompts: every request's ``usage.prompt_tokens`` equals the local
    count, and a cut prompt arrives at exactly the budget."""
    from opencompass_lveval.models.api import LongContextAPI

    config = api_model(served, cache_dir=str(tmp_path / 'cache'), **settings)
    for key in ('type', 'abbr', 'max_out_len', 'batch_size', 'run_cfg'):
        config.pop(key)
    model = LongContextAPI(**config)
    before = served.requests()
    model.generate([marked_prompt(20), marked_prompt(900), marked_prompt(3000)], max_out_len=8)
    assert served.requests() - before == 3
    assert [r['transport'] for r in model.usage] == [transport] * 3
    assert [r['truncated'] for r in model.usage] == [False, True, True]
    for record in model.usage:
        assert record['prompt_tokens'] == record['local_prompt_tokens'], record
    assert [r['local_prompt_tokens'] for r in model.usage[1:]] == [WINDOW - 8] * 2


@pytest.mark.parametrize('conversation', [None, 'vicuna'], ids=['chat-template', 'vicuna-text'])
def test_the_server_counts_what_was_counted_here(served, tmp_path, conversation):
    """Messages framed by the server's chat template, and a conversation format sent as text."""
    transport = 'text' if conversation else 'messages'
    counted_as_sent(served, tmp_path, transport, conversation=conversation, prompt_ids=False)


@pytest.mark.vllm
def test_the_vllm_server_counts_the_token_ids_sent(vllm_server, tmp_path):
    """The offline wrappers' ids as the prompt of ``/v1/completions`` (transformers serve refuses
    a list of ids; vLLM takes it)."""
    counted_as_sent(vllm_server, tmp_path, 'ids', prompt_ids=True)


def test_opencompass_run_cut_off_and_resumed_from_the_cache(served, tmp_path):
    """LV-Eval and Ada-LEval records through ``opencompass``: the server lost mid-run (a proxy
    drops every request after the fourth) fails the task loudly; ``-r`` with the server back
    finishes it, sending only what had not been answered; every prediction carries its usage,
    and the server agreed with every local count."""
    from opencompass_lveval.commands.data import synth

    synth(out_dir=str(tmp_path / 'data' / 'demo'), count=3, scale=10, seed=0)
    proxy = CutOffProxy(served.url, limit=4)
    model = api_model(served, url=proxy.url)
    config = derived_config(tmp_path, 'eval_demo.py', keep=KEEP, models=[model])
    total = 3 + 3 + 10
    try:
        run_opencompass(config, tmp_path, {}, '-m', 'infer')  # exits 0 though the task failed
        folder = sorted((tmp_path / 'out').iterdir())[-1]
        logs = ''.join(p.read_text() for p in (folder / 'logs' / 'infer').rglob('*.out'))
        assert 'ApiError' in logs and 'did not answer' in logs
        predictions = folder / 'predictions' / 'served-llama'
        assert len(prediction_files(predictions)) < len(KEEP)  # not everything was answered
        cached = len(list((folder / 'api_cache' / 'served-llama').rglob('*.json')))
        assert 0 < cached <= 4

        proxy.limit, proxy.forwarded = None, 0
        run_opencompass(config, tmp_path, {}, '-r', folder.name)
        assert proxy.forwarded == total - cached  # the cached answers were not asked again
    finally:
        proxy.stop()
    assert sorted(results(tmp_path, 'served-llama')) == sorted(KEEP)
    records = []
    for path in prediction_files(predictions):
        records += [entry['usage'] for entry in json.loads(path.read_text()).values()]
    assert len(records) == total
    for record in records:
        assert record['prompt_tokens'] == record['local_prompt_tokens'] > 0, record
        if record['truncated']:
            assert record['local_prompt_tokens'] == record['budget']
    # lveval report totals the usage records per level.
    from opencompass_lveval.report import write_report

    written = write_report(folder)
    usage = next(p for p in written if p.name == 'usage_served-llama.csv').read_text().splitlines()
    assert usage[-1].split(',')[:7] == [
        'all',
        '',
        str(total),
        str(total - sum(r['cached'] for r in records)),
        str(sum(r['cached'] for r in records)),
        str(sum(r['truncated'] for r in records)),
        str(sum(r['prompt_tokens'] for r in records)),
    ]


def test_lveval_judge_against_the_server_resumes_from_its_cache(served, tmp_path):
    """``lveval judge`` with the served model as the judge (its random replies are rated or
    counted unparseable; the plumbing is what is checked): one request per sample, the tokens the
    server counted, the server lost mid-run (a proxy drops every request after the third) makes
    failures that are counted, and the next run asks only for what has no verdict."""
    import shutil

    from parity_data import REPO

    preds = tmp_path / 'preds'
    preds.mkdir()
    shutil.copy(REPO / 'tests' / 'data' / 'golden' / 'lveval' / 'factrecall_en_16k.jsonl', preds)
    samples = 40
    proxy = CutOffProxy(served.url, limit=3)
    config = tmp_path / 'judge.py'
    config.write_text(
        'judge = dict(type="LongContextAPI", abbr="served-judge", '
        f'path={str(served.model)!r}, url={proxy.url!r}, max_seq_len={WINDOW}, retry=0, '
        'timeout=60, prices=dict(prompt=30.0, completion=60.0))\n'
    )
    command = [str(Path(sys.executable).with_name('lveval')), 'judge', str(preds)]
    command += ['--config', str(config)]
    cache = preds / 'eval_result' / 'judge_cache'
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=300).stdout
        verdicts = list(cache.rglob('verdicts/**/*.json'))
        first = json.loads((preds / 'eval_result' / 'judge_result.json').read_text())
        info = first['factrecall_en_16k']['judge']
        assert len(verdicts) == 3, out
        assert info['samples'] == samples and info['failed'] > 0
        assert info['rated'] + info['unparseable'] + info['failed'] == samples

        proxy.limit, proxy.forwarded = None, 0
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        # One request per distinct prompt (factrecall repeats its question, and answers
        # repeat), and only for the prompts without a verdict.
        after = list(cache.rglob('verdicts/**/*.json'))
        assert proxy.forwarded == len(after) - len(verdicts) > 0
    finally:
        proxy.stop()
    info = json.loads((preds / 'eval_result' / 'judge_result.json').read_text())[
        'factrecall_en_16k'
    ]['judge']
    assert info['failed'] == 0 and info['rated'] + info['unparseable'] == samples
    assert info['prompt_tokens'] > 0
    assert info['cost_usd'] == pytest.approx(
        (info['prompt_tokens'] * 30 + info['completion_tokens'] * 60) / 1e6
    )
