"""A cut counted from its seam (``models/seams.py``), in every tokenizer form the seams cover:
cl100k_base, Llama-2 SentencePiece in the legacy and the Metaspace form, Qwen2 and Llama-3
byte-level BPE. At random cuts of real and rough text the count equals the server's tokenizer
(loaded from the folder as a server loads it) run on the whole cut text, the seam is used for
most cuts and only seams are encoded; what the proofs rule out (a seam begun inside a character
spelled in bytes, added tokens, a pipeline not proven) is counted whole, and still exactly.
"""

from __future__ import annotations

import functools
import json
import random
import shutil

import pytest

from opencompass_lveval.models.api import LongContextAPI
from opencompass_lveval.models.seams import (
    ByteLevelSeams,
    SentencePieceSeams,
    letter_split_point,
    seams_of,
)

INSTRUCTION = 'Read the passages and answer.\n'
QUESTION = '\nQuestion: where is the key? Answer:'
# Plain text around a rough one: a prompt's ends are checked by decoding, which gives a text in
# NFC back for Qwen2 (a prompt whose ends are not in NFC is counted whole), and must not merge
# with the frame ('.' + '[/INST]' is one token)
OPENING = 'Passage: read the following text with care, and then answer the question after it. '
CLOSING = ' That is all there is to read in this passage, and the question comes after it'
SEAMS_OF = {
    'legacy': SentencePieceSeams,
    'metaspace': SentencePieceSeams,
    'metaspace always': SentencePieceSeams,
    'qwen2': ByteLevelSeams,
    'llama3': ByteLevelSeams,
}
CONVERSATION = {'legacy': 'llama2', 'metaspace': 'llama2', 'qwen2': 'qwen_chat'}


def sliced(cases: list, fast: set) -> list:
    """``cases`` as parameters, those not in ``fast`` marked slow (``-m "not slow"``, the fast
    loop, keeps a slice of every test; its slices leave out Llama-3, whose 17 MB tokenizer costs
    seconds to load, and keep Qwen2 for byte-level BPE)."""
    return [
        case
        if case in fast
        else pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.slow)
        for case in cases
    ]


CASES = [
    (form, frame)
    for form in SEAMS_OF
    for frame in ('bare', 'conversation format', 'chat template')
    if (frame != 'conversation format' or form in CONVERSATION)
    and (form != 'metaspace always' or frame == 'chat template')
]


@pytest.fixture(scope='module', autouse=True)
def tokenizers_loaded_once():
    """Each folder's tokenizer is loaded once in this module (as ``LongContextAPI`` loads it),
    however many models are made of it."""
    from opencompass_lveval.models import api

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api, 'load_tokenizer', functools.cache(api.load_tokenizer))
        yield


class ServerTokenizers(dict):
    """A served form's tokenizer as a server loads it (``AutoTokenizer`` on the folder), loaded
    when a test first asks for that form (one to two seconds each for Qwen2 and Llama-3), once."""

    def __init__(self, folders: dict) -> None:
        super().__init__()
        self.folders = folders

    def __missing__(self, form: str):
        from transformers import AutoTokenizer

        self[form] = AutoTokenizer.from_pretrained(str(self.folders[form]))
        return self[form]


@pytest.fixture(scope='module')
def servers(served_forms) -> dict:
    """The served forms' tokenizers as a server loads them, each loaded once in this module."""
    return ServerTokenizers(served_forms)


def served(folder, frame: str, conversation=None, max_seq_len=1_000_000) -> LongContextAPI:
    """A served model with this tokenizer folder, its prompt framed by ``frame``; the URL is
    never reached."""
    settings = {
        'bare': dict(chat=False),
        'conversation format': dict(conversation=conversation),
        'chat template': {},
    }[frame]
    return LongContextAPI(
        path='served',
        tokenizer_path=str(folder),
        max_seq_len=max_seq_len,
        url='http://127.0.0.1:9/v1',
        **settings,
    )


def frame_of(builder):
    """What the request builder frames a prompt text in: its conversation format, or its chat
    template around one user message."""
    if builder.transport == 'text':
        return functools.partial(builder._format_text, builder.builder.conversation)

    def rendered(content):
        return builder._render_messages(
            builder._messages([{'role': 'HUMAN', 'prompt': 'x'}], content)
        )

    return rendered


def seam_texts(corpora) -> dict[str, str]:
    """Real English and Chinese prose, and a mix made to trouble a pre-tokenizer at any cut:
    contractions, digit runs, whitespace runs and newlines, emoji split over byte tokens,
    accents written as combining marks (which NFC composes)."""
    rng = random.Random(7)
    books = {
        lang: sorted((corpora / lang).glob('*.txt'))[0].read_text(encoding='utf-8')[:100_000]
        for lang in ('en', 'zh')
    }
    bits = ["it's", " '", 'll', '123', '4567', '  ', '\n\n', '\t', 'é', '😀', '中文', '，', '。']
    bits += [' word', 'WORD', "'s", '?!', '--', '\r\n', '  \n ', 'a', 'b', 'e\u0301', 'q\u0301']
    rough = ''.join(rng.choice(bits) for _ in range(20_000))
    return {
        **books,
        'rough': rough,
        'mixed': books['en'][:20_000] + rough[:20_000] + books['zh'][:20_000],
    }


def server_count(server, request) -> int:
    """The prompt tokens the server finds for a request: its chat template rendered and
    tokenized, or its text tokenized with the tokenizer's special tokens."""
    if request.transport == 'messages':
        rendered = server.apply_chat_template(
            request.body['messages'], add_generation_prompt=True, tokenize=False
        )
        return len(server(rendered, add_special_tokens=False)['input_ids'])
    return len(server(request.body['prompt'])['input_ids'])


def recording_seams(seams) -> list[int]:
    """The lengths of the seams ``seams`` encodes, from now on."""
    sizes: list[int] = []
    size_of = seams.seam_size
    seams.seam_size = lambda seam, first: sizes.append(len(seam)) or size_of(seam, first)
    return sizes


@pytest.mark.slow  # seconds: two texts encoded again at every seam
@pytest.mark.parametrize('halves', [False, True])
def test_a_cut_is_counted_from_its_seam_exactly_as_encoding_it_again(corpora, halves):
    """cl100k_base's count of a cut text, from the seam only, equals encoding the whole cut text
    again, at random cuts of real and rough text; only the seam is encoded."""
    from opencompass_lveval.models.api_inputs import TiktokenTokenizer

    tokenizer = TiktokenTokenizer('cl100k_base')
    encoding = tokenizer.encoding
    rng = random.Random(3)
    longest = 0

    def seam_only(text, add_special_tokens=False):
        nonlocal longest
        longest = max(longest, len(text))
        return encoding.encode(text, disallowed_special=())

    for name, text in seam_texts(corpora).items():
        ids = encoding.encode(text, disallowed_special=())
        for _ in range(60):
            head = rng.randrange(1, len(ids) - 1)
            tail_start = rng.randrange(head, len(ids))
            first, second = ids[:head], ids[tail_start:]
            cut = (
                encoding.decode(first) + encoding.decode(second)
                if halves
                else encoding.decode(first + second)
            )
            tokenizer.encode = seam_only
            counted = tokenizer.cut_count(ids, head, tail_start, halves=halves)
            del tokenizer.encode
            assert counted == len(encoding.encode(cut, disallowed_special=())), (name, head)
    assert longest < 2_000  # seams, never a whole cut text of the books


# What a cut may put beside a split point: nothing, whitespace runs, letters, contractions,
# digits, punctuation, combining marks (NFC composes them), emoji, CJK.
RUBBLE = ['', ' ', '  ', '\n', ' \n\n', '\t', 'a', 'abc', "'s", "'", '1', '123', '.', '!?']
RUBBLE += ['\u0301', 'e\u0301', '😀', '中文', '，', '\r\n']


@pytest.mark.parametrize('form', sliced(['cl100k', 'qwen2', 'llama3'], {'cl100k'}))
def test_a_split_point_stands_whatever_a_cut_puts_beside_it(corpora, servers, form):
    """At every point ``letter_split_point`` takes in rough and real text, under each proven
    pattern, the server's ids of the text before it followed by anything (its own next
    character first) begin with the uncut ids before it, and those of anything followed by
    the text after it (its own last character first) end with the uncut ids after it."""
    from opencompass_lveval.models.api_inputs import TiktokenTokenizer

    if form == 'cl100k':
        encoding = TiktokenTokenizer('cl100k_base').encoding

        def encode(text):
            return encoding.encode(text, disallowed_special=())

        piece_bytes = encoding.decode_single_token_bytes
    else:
        server = servers[form]

        def encode(text):
            return server(text, add_special_tokens=False)['input_ids']

        piece_bytes = seams_of(server).piece_bytes
    texts = seam_texts(corpora)
    checked = 0
    for text in (texts['rough'][:600], texts['mixed'][19_600:20_400]):
        ids = encode(text)
        for k in range(1, len(ids) - 1):
            if letter_split_point(piece_bytes, ids, k - 1, k + 1) != k:
                continue
            # The text the ids stand for (Qwen2's is in NFC)
            before, after = (
                b''.join(map(piece_bytes, part)).decode() for part in (ids[:k], ids[k:])
            )
            for rubble in RUBBLE:
                assert encode(before + after[0] + rubble)[:k] == ids[:k], (before[-20:], rubble)
                tail = encode(rubble + before[-1] + after)
                assert tail[len(tail) - len(ids) + k :] == ids[k:], (after[:20], rubble)
            checked += 1
    assert checked >= 100


@pytest.mark.parametrize(
    ('form', 'frame'),
    sliced(
        CASES,
        {
            ('legacy', 'chat template'),
        },
    ),
)
def test_a_served_cut_is_counted_from_its_seam_exactly_as_the_server_counts_it(
    corpora, served_forms, servers, form, frame
):
    """A served prompt cut at random inside its frame: the count from the seam alone equals the
    server's tokenizer run on the whole cut text, for real English and Chinese prose and rough
    text (byte-fallback emoji, tabs, CRLF, runs of spaces, combining accents); the seam is used
    for most cuts, and only seams are encoded."""
    builder = served(served_forms[form], frame, CONVERSATION.get(form)).builder
    seams, decode, server = builder._seams, builder.tokenizer.decode, servers[form]
    assert type(seams) is SEAMS_OF[form]  # the form is one the seam count is proven for
    special, framed = builder.transport == 'text', frame_of(builder)
    sizes = recording_seams(seams)
    rng, counted_from_seams = random.Random(5), 0
    for name, text in seam_texts(corpora).items():
        text = OPENING + text[:12_000] + CLOSING
        sent = framed(text)
        full = builder._server_ids(sent, special)
        start, ids = builder._prompt_ids_in(full, sent, text, framed, special)
        assert builder._seam_start(start, ids) is not None, name
        for _ in range(30):
            head = rng.randrange(1, len(ids) - 1)
            tail_start = rng.randrange(head, len(ids))
            counted = seams.count(full, start, head, tail_start, start + len(ids), decode)
            if counted is not None:
                counted_from_seams += 1
                cut = framed(decode(ids[:head] + ids[tail_start:]))
                expected = len(server(cut, add_special_tokens=special)['input_ids'])
                assert counted == expected, (name, head, tail_start)
    assert counted_from_seams >= 110  # of 120: a cut without a split point nearby is rare
    assert max(sizes) < 2_000  # seams, never a whole cut text


@pytest.mark.parametrize(
    ('form', 'frame'),
    sliced(
        [(form, frame) for form in SEAMS_OF for frame in ('bare', 'chat template')],
        {('metaspace', 'chat template')},
    ),
)
def test_a_served_request_is_cut_to_the_budget_counted_from_its_seam(
    corpora, served_forms, servers, form, frame
):
    """English and Chinese prompts over the window, through the request builder (text or
    messages): what is sent, rendered and counted by the server's tokenizer, is the local count,
    fills the budget (a cut may land a token or two short where no cut gives it exactly), keeps
    instruction and question, and was counted from seams only."""
    window, answer, server = 2048, 32, servers[form]
    builder = served(served_forms[form], frame, max_seq_len=window).builder
    sizes = recording_seams(builder._seams)
    for lang in ('en', 'zh'):
        book = sorted((corpora / lang).glob('*.txt'))[0].read_text(encoding='utf-8')[:12_000]
        text = INSTRUCTION + book.strip() + QUESTION
        cuttable = (len(INSTRUCTION), len(text) - len(QUESTION))
        request = builder.request([{'role': 'HUMAN', 'prompt': text, 'cuttable': cuttable}], answer)
        content = str(request.body.get('messages') or request.body['prompt'])
        assert INSTRUCTION.strip() in content and QUESTION.strip() in content
        counted = server_count(server, request)
        assert counted == request.local_tokens
        assert window - answer - 3 <= counted <= window - answer, lang
    assert sizes and max(sizes) < 2_000


@pytest.mark.parametrize('form', ['legacy', 'metaspace'])
def test_a_served_cut_never_counts_from_inside_a_character_spelled_in_byte_ids(
    served_forms, servers, form
):
    """Rare CJK characters reach Llama-2 as byte-fallback ids, three per character: a seam may
    start or end at such a character's edge, never between its bytes. A cut through two of them
    can rejoin their bytes into a character of the vocabulary ('颀' E9 A2 80 cut after two bytes,
    '乜' E4 B9 9C from its third: '颜' E9 A2 9C, one id), which a seam begun between the bytes
    would count as two U+FFFD. Every such cut counts exactly, or is counted whole."""
    builder = served(served_forms[form], 'conversation format', 'llama2').builder
    seams, decode, pieces_of = builder._seams, builder.tokenizer.decode, builder.tokenizer.tokenize
    assert pieces_of('颀乜')[-6:] == ['<0xE9>', '<0xA2>', '<0x80>', '<0xE4>', '<0xB9>', '<0x9C>']
    assert pieces_of('颜')[-1] == '颜'
    text = 'Read this text of rare signs: ' + '颀乜 ' * 40 + 'then answer the question below it'
    framed = frame_of(builder)
    sent = framed(text)
    full = builder._server_ids(sent, True)
    start, ids = builder._prompt_ids_in(full, sent, text, framed, True)
    pieces = builder.tokenizer.convert_ids_to_tokens(ids)
    heads = [k + 1 for k, piece in enumerate(pieces) if piece == '<0xA2>']
    tails = [k for k, piece in enumerate(pieces) if piece == '<0x9C>']
    counted = 0
    for head, tail_start in [(h, t) for h in heads[5:30:3] for t in tails if t > h + 20][:120]:
        cut = framed(decode(ids[:head] + ids[tail_start:]))
        assert '颜' in cut
        found = seams.count(full, start, head, tail_start, start + len(ids), decode)
        if found is not None:
            counted += 1
            assert found == len(servers[form](cut)['input_ids']), (head, tail_start)
    assert counted >= 100


ADDED = {
    'legacy': ('</s>', '<s>'),
    'metaspace': ('</s>', '<s>'),
    'qwen2': ('<|im_end|>', '<|endoftext|>'),
    'llama3': ('<|eot_id|>', '<|begin_of_text|>'),
}


@pytest.mark.parametrize(
    ('form', 'frame'),
    sliced(
        [(form, 'chat template') for form in ADDED] + [('legacy', 'bare')],
        {('legacy', 'chat template'), ('legacy', 'bare')},
    ),
)
def test_a_prompt_holding_added_tokens_is_counted_whole(
    corpora, served_forms, servers, form, frame
):
    """Text that spells an added token ('</s>' in a web page) is read as that token, and the
    text between added tokens is pre-tokenized on its own: a prompt holding one is counted
    whole, at every cut, and still as the server counts it."""
    builder = served(served_forms[form], frame).builder
    closing, opening = ADDED[form]
    book = sorted((corpora / 'en').glob('*.txt'))[0].read_text(encoding='utf-8')[:6_000]
    words = book.split()
    for i in range(30, len(words) - 30, 25):  # none near the ends, which are checked by decoding
        words[i], words[i + 9] = f'{words[i]}{closing}x', f'{opening}{words[i + 9]}'
    text = OPENING + ' '.join(words) + CLOSING
    framed, special = frame_of(builder), builder.transport == 'text'
    sent = framed(text)
    full = builder._server_ids(sent, special)
    start, ids = builder._prompt_ids_in(full, sent, text, framed, special)
    assert start is not None and builder._seam_start(start, ids) is None
    builder = served(served_forms[form], frame, max_seq_len=len(full)).builder
    rng = random.Random(11)
    for answer in rng.sample(range(100, len(ids) - 300), 20):  # cut by ``answer`` ids and more
        request = builder.request([{'role': 'HUMAN', 'prompt': text}], answer)
        assert request.truncated
        assert request.local_tokens == server_count(servers[form], request)


@pytest.mark.parametrize('form', sliced(list(ADDED), {'legacy'}))
def test_a_seam_that_spells_an_added_token_is_counted_whole(served_forms, servers, form):
    """A cut can join the two halves of an added token's text ('</' + 's>'): the server reads
    the token there, so such a seam is counted whole; every other cut counts exactly."""
    builder = served(served_forms[form], 'bare').builder
    closing = ADDED[form][0]
    half = len(closing) // 2
    chunks = [f'alpha beta{closing[:half]} gamma', f'delta 9{closing[half:]}z epsilon']
    text = OPENING + ' '.join(chunks[i % 2] for i in range(200)) + CLOSING
    full = builder._server_ids(text, True)
    start, ids = builder._prompt_ids_in(full, text, text, frame_of(builder), True)
    assert builder._seam_start(start, ids) == start
    decode, seams = builder.tokenizer.decode, builder._seams

    def joins(head: int, tail_start: int) -> bool:
        near = ids[head - 4 : head], ids[tail_start : tail_start + 4]
        return closing in decode(near[0] + near[1]) and not any(
            closing in decode(part) for part in near
        )

    halves = range(20, len(ids) // 4)
    heads = [h for h in halves if decode(ids[h - 4 : h]).endswith(closing[:half])][:8]
    cuts = [(h, t) for h in heads for t in range(h + 10, len(ids) - 5) if joins(h, t)][:80]
    counted = 0
    for head, tail_start in cuts + [(h, h + 37) for h in range(40, len(ids) - 60, 29)]:
        cut = decode(ids[:head] + ids[tail_start:])
        found = seams.count(full, start, head, tail_start, start + len(ids), decode)
        if (head, tail_start) in cuts:
            assert closing in cut and found is None, (head, tail_start)
        elif found is not None:
            counted += 1
            assert found == len(servers[form](cut)['input_ids']), (head, tail_start)
    assert len(cuts) >= 40 and counted >= 20


def _edited(source, folder, **changes):
    """A copy of a tokenizer folder whose tokenizer.json has ``changes`` (a dotted path to a
    value), loaded as it is."""
    shutil.copytree(source, folder)
    spec = json.loads((folder / 'tokenizer.json').read_text('utf-8'))
    for path, value in changes.items():
        *parents, last = path.split('.')
        node = spec
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value
    (folder / 'tokenizer.json').write_text(json.dumps(spec), 'utf-8')
    config = json.loads((folder / 'tokenizer_config.json').read_text('utf-8'))
    config['tokenizer_class'] = 'PreTrainedTokenizerFast'
    (folder / 'tokenizer_config.json').write_text(json.dumps(config), 'utf-8')
    return folder


UNPROVEN = {
    # a pattern that keeps the punctuation after a word with it
    'pattern': ('llama3', {'pre_tokenizer.pretokenizers.0.pattern': {'Regex': r'\s?\S+|\s+'}}),
    'NFKC': ('llama3', {'normalizer': {'type': 'NFKC'}}),
    'byte-level regex': ('llama3', {'pre_tokenizer.pretokenizers.1.use_regex': True}),
    'Metaspace split': (
        'legacy',
        {
            'normalizer': None,
            'pre_tokenizer': {
                'type': 'Metaspace',
                'replacement': '▁',
                'prepend_scheme': 'first',
                'split': True,
            },
        },
    ),
    'stripped added token': ('legacy', {'added_tokens.2.lstrip': True}),
}


@pytest.mark.parametrize(
    'case', sliced(list(UNPROVEN), {'stripped added token', 'Metaspace split'})
)
def test_a_pipeline_not_proven_is_counted_whole_and_exactly(corpora, served_forms, tmp_path, case):
    """A tokenizer whose pipeline differs from a proven form in one step gets no seam counter
    (checked as it loads), and its cut prompts are counted whole, as its server counts them."""
    from transformers import AutoTokenizer

    form, changes = UNPROVEN[case]
    folder = _edited(served_forms[form], tmp_path / 'edited', **changes)
    builder = served(folder, 'bare', max_seq_len=2000).builder
    assert seams_of(builder.tokenizer) is None and builder._seams is None
    server = AutoTokenizer.from_pretrained(str(folder))
    book = sorted((corpora / 'en').glob('*.txt'))[0].read_text(encoding='utf-8')[:12_000]
    request = builder.request([{'role': 'HUMAN', 'prompt': book}], 16)
    assert request.truncated
    assert request.local_tokens == len(server(request.body['prompt'])['input_ids'])
    assert 2000 - 16 - 3 <= request.local_tokens <= 2000 - 16
