"""Helpers for tests and benches: a tokenizer trained on the spot and a tiny random Llama, real
Hugging Face objects made offline. Needs ``transformers`` and ``tokenizers`` (and torch for the
model), imported when called."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Optional

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


def save_tiny_llama(folder: Path, window: int = 512) -> Path:
    """A 2-layer random Llama with the trained tokenizer, saved as a local HF model folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = train_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=window,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
