"""The API client's own cost: time per request against a bare tokenization of the prompt, and
memory with 64 requests in flight.

A local HTTP server answers every request at once with an OpenAI completion, so what is timed is
the client: the request built (the prompt counted, cut where it must be), the body serialised and
sent, the answer read. For the times the server runs in a process of its own, as a real one
does (in this process it would take its share of the interpreter lock out of the client's
time); for the memory, in this process, where it can hold 64 requests until all have come. Prompts are a book from
``../shared/corpora``. Tokenizers: cl100k_base (the GPT rows, messages), and a served Llama-2
(its real SentencePiece tokenizer, from the test extra) sent as chat messages, as formatted text
and as token ids. Cases: a prompt that fits, one cut to a 32k window (the cut counted again, as
the server will count it, until it fits exactly).

    python bench/bench_api.py [--corpora DIR] [--words 100000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import sys
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import DEFAULT, read_book  # noqa: E402

from opencompass_lveval.models.api import LongContextAPI  # noqa: E402
from opencompass_lveval.testing import (  # noqa: E402
    llama2_tokenizer_folder,
    llama3_tokenizer_folder,
    qwen_tokenizer_folder,
)

ANSWER = json.dumps(
    {
        'choices': [{'index': 0, 'text': 'ok', 'message': {'role': 'assistant', 'content': 'ok'}}],
        'usage': {'prompt_tokens': 1, 'completion_tokens': 1},
    }
).encode()


class Instant(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    delay = 0.0
    received = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers['Content-Length']))
        Instant.received += 1
        time.sleep(Instant.delay)
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)


def serve_instantly(ports) -> None:
    """The answering server of the timed cases, in a process of its own."""
    server = ThreadingHTTPServer(('127.0.0.1', 0), Instant)
    ports.put(server.server_address[1])
    server.serve_forever()


def prompt_of(book: str, words: int, lang: str = 'en') -> list[dict]:
    """The book's first ``words`` words (Chinese: characters, its lines joined) between an
    instruction and a question."""
    body = ' '.join(book.split()[:words]) if lang == 'en' else ''.join(book.split())[:words]
    text = 'Read the book and answer.\n' + body + '\nQuestion: who?'
    return [{'role': 'HUMAN', 'prompt': text, 'cuttable': (26, len(text) - 14)}]


def served_rows(root: Path) -> list[tuple[str, dict]]:
    """(row name, model settings) per tokenizer form and transport: chat messages (the chat
    template), text (a conversation format for Llama-2, the bare prompt with the tokenizer's
    special tokens for the byte-level forms) and token ids."""
    forms = (
        ('Llama-2 legacy', llama2_tokenizer_folder(root / 'legacy'), 'llama2'),
        (
            'Llama-2 Metaspace',
            llama2_tokenizer_folder(root / 'metaspace', tokenizer_class='LlamaTokenizer'),
            'llama2',
        ),
        ('Qwen2', qwen_tokenizer_folder(root / 'qwen2', tokenizer_class='Qwen2Tokenizer'), None),
        ('Llama-3', llama3_tokenizer_folder(root / 'llama3'), None),
    )
    rows = [('gpt-4 cl100k, messages', dict(path='gpt-4', tokenizer_path='cl100k_base'))]
    for form, folder, conversation in forms:
        text = dict(conversation=conversation) if conversation else dict(chat=False)
        rows += [
            (f'{form}, messages', dict(path=str(folder))),
            (f'{form}, text', dict(path=str(folder), **text)),
            (f'{form}, ids', dict(path=str(folder), prompt_ids=True)),
        ]
    return rows


def best_of_both(repeat: int, bare, ours) -> tuple[float, float]:
    """The best times of two calls, measured in turn (so a slower spell of the machine hits
    both alike)."""
    times: tuple[list, list] = ([], [])
    for _ in range(repeat):
        for call, found in zip((bare, ours), times):
            started = time.perf_counter()
            call()
            found.append(time.perf_counter() - started)
    return min(times[0]), min(times[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--corpora', type=Path, default=DEFAULT)
    parser.add_argument('--lang', choices=('en', 'zh'), default='en')
    parser.add_argument('--words', type=int, default=100_000)
    parser.add_argument('--repeat', type=int, default=10)
    parser.add_argument('--rows', default='', help='only rows naming one of these (commas)')
    args = parser.parse_args()
    spawn = multiprocessing.get_context('spawn')
    ports = spawn.Queue()
    answering = spawn.Process(target=serve_instantly, args=(ports,), daemon=True)
    answering.start()
    url = f'http://127.0.0.1:{ports.get(timeout=120)}/v1'
    books = sorted((args.corpora / args.lang).glob('*.txt'))
    book = ' '.join(read_book(p) for p in books)
    prompt = prompt_of(book, args.words, args.lang)
    wanted = [name for name in args.rows.split(',') if name]
    for row, settings in served_rows(Path(tempfile.mkdtemp())):
        if wanted and not any(name in row for name in wanted):
            continue
        for window, case in ((1_000_000, 'fits'), (32 * 1024, 'cut to 32k')):
            model = LongContextAPI(max_seq_len=window, url=url, query_per_second=1000, **settings)
            encode = model.builder.tokenizer.encode
            text = prompt[0]['prompt']
            bare, ours = best_of_both(
                args.repeat,
                functools.partial(encode, text),
                functools.partial(model.generate, [prompt], 64),
            )
            tokens = len(encode(text))
            print(
                f'{row:>28}, {case:>10}: {tokens} prompt tokens; bare tokenization '
                f'{bare * 1000:.0f} ms, client per request {ours * 1000:.0f} ms ({ours / bare:.2f}x)'
            )
    answering.terminate()
    if wanted:
        return
    # Memory: 64 requests in flight (the server holds each until all 64 have arrived, and 1 s
    # more), each prompt an eighth of the words above; measured while all 64 wait for answers.
    server = ThreadingHTTPServer(('127.0.0.1', 0), Instant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f'http://127.0.0.1:{server.server_address[1]}/v1'
    Instant.delay = 3.0
    model = LongContextAPI(
        path='gpt-4',
        max_seq_len=1_000_000,
        tokenizer_path='cl100k_base',
        url=url,
        concurrency=64,
        query_per_second=1000,
    )
    size = args.words // 8
    prompts = [prompt_of(book[i * 1000 :], size, args.lang) for i in range(64)]
    one = len(prompts[0][0]['prompt'].encode('utf-8'))
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    Instant.received = 0
    sender = threading.Thread(target=model.generate, args=(prompts, 64))
    sender.start()
    while Instant.received < 64:
        time.sleep(0.01)
    held = tracemalloc.get_traced_memory()[0] - base
    by_file = tracemalloc.take_snapshot().statistics('filename')
    sender.join()
    tracemalloc.stop()
    print(
        f'64 in flight: {held / 2**20:.1f} MiB held by the client beyond the prompts, '
        f'{held / 64 / one:.2f} x one prompt ({one / 2**20:.2f} MiB) per request; the most by '
        + ', '.join(
            f'{Path(s.traceback[0].filename).name} {s.size / 64 / one:.2f}x' for s in by_file[:4]
        )
    )
    server.shutdown()


if __name__ == '__main__':
    main()
