"""The open-weight models of the LV-Eval and Ada-LEval papers: one row each.

``window`` is the context each model claims (tokens); prompts are middle-truncated to it.
``gpus`` sizes tensor parallelism (vLLM) or device placement (HF): 70B-class models need 4 GPUs of
80 GB for weights plus a 128k KV cache. ``rope_scaling`` is set where the released config does not
reach the claimed window by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class PaperModel:
    abbr: str
    path: str  # Hugging Face id; point it at a local copy on offline clusters
    window: int
    papers: tuple[str, ...]
    chat: bool = True
    gpus: int = 1
    rope_scaling: Optional[dict] = None
    trust_remote_code: bool = False
    vllm: bool = True  # False where vLLM has no implementation of the architecture
    extra: dict = field(default_factory=dict)


K = 1024
PAPER_MODELS: tuple[PaperModel, ...] = (
    PaperModel('llama2-7b-chat-4k', 'meta-llama/Llama-2-7b-chat-hf', 4 * K, ('lveval',)),
    PaperModel('qwen-7b-chat-8k', 'Qwen/Qwen-7B-Chat', 8 * K, ('lveval',), trust_remote_code=True),
    PaperModel('llama3-8b-instruct-8k', 'meta-llama/Meta-Llama-3-8B-Instruct', 8 * K, ('lveval',)),
    PaperModel('vicuna-7b-v1.5-16k', 'lmsys/vicuna-7b-v1.5-16k', 16 * K, ('lveval', 'adaleval')),
    PaperModel('vicuna-13b-v1.5-16k', 'lmsys/vicuna-13b-v1.5-16k', 16 * K, ('adaleval',)),
    PaperModel(
        'chatglm2-6b-32k', 'THUDM/chatglm2-6b-32k', 32 * K, ('adaleval',), trust_remote_code=True
    ),
    PaperModel(
        'chatglm3-6b-32k',
        'THUDM/chatglm3-6b-32k',
        32 * K,
        ('lveval', 'adaleval'),
        trust_remote_code=True,
    ),
    PaperModel(
        'bluelm-7b-chat-32k',
        'vivo-ai/BlueLM-7B-Chat-32K',
        32 * K,
        ('lveval',),
        trust_remote_code=True,
        vllm=False,
    ),
    PaperModel(
        'longchat-7b-v1.5-32k', 'lmsys/longchat-7b-v1.5-32k', 32 * K, ('lveval', 'adaleval')
    ),
    PaperModel(
        'internlm2-chat-7b',
        'internlm/internlm2-chat-7b',
        32 * K,
        ('adaleval',),
        trust_remote_code=True,
    ),
    PaperModel(
        'glm-4-9b-chat-128k', 'THUDM/glm-4-9b-chat', 128 * K, ('lveval',), trust_remote_code=True
    ),
    PaperModel(
        'qwen2.5-72b-instruct-128k',
        'Qwen/Qwen2.5-72B-Instruct',
        128 * K,
        ('lveval',),
        gpus=4,
        rope_scaling={'type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768},
    ),
    PaperModel(
        'llama-3.1-70b-instruct-128k',
        'meta-llama/Llama-3.1-70B-Instruct',
        128 * K,
        ('lveval',),
        gpus=4,
    ),
    PaperModel('yi-6b-200k', '01-ai/Yi-6B-200K', 200_000, ('lveval',), chat=False),
    PaperModel(
        'llama3-8b-instruct-1m',
        'gradientai/Llama-3-8B-Instruct-Gradient-1048k',
        1_048_576,
        ('lveval',),
    ),
)


def vllm_entries(paper: Optional[str] = None) -> list[dict]:
    """Config dicts (without ``type``) for LongContextVLLM; HF-only architectures are left out."""
    entries = []
    for model in PAPER_MODELS:
        if not model.vllm or (paper and paper not in model.papers):
            continue
        model_kwargs = {
            'tensor_parallel_size': model.gpus,
            'trust_remote_code': model.trust_remote_code,
            'gpu_memory_utilization': 0.9,
        }
        if model.rope_scaling:
            model_kwargs['hf_overrides'] = {'rope_scaling': model.rope_scaling}
        entries.append(
            dict(
                abbr=f'{model.abbr}-vllm',
                path=model.path,
                max_seq_len=model.window,
                chat=model.chat,
                model_kwargs=model_kwargs,
                max_out_len=64,
                batch_size=16,
                run_cfg=dict(num_gpus=model.gpus),
            )
        )
    return entries


def hf_entries(paper: Optional[str] = None) -> list[dict]:
    """Config dicts (without ``type``) for LongContextHF, every paper model."""
    entries = []
    for model in PAPER_MODELS:
        if paper and paper not in model.papers:
            continue
        model_kwargs = {'trust_remote_code': model.trust_remote_code, 'device_map': 'auto'}
        if model.rope_scaling:
            model_kwargs['rope_scaling'] = model.rope_scaling
        entries.append(
            dict(
                abbr=f'{model.abbr}-hf',
                path=model.path,
                max_seq_len=model.window,
                chat=model.chat,
                model_kwargs=model_kwargs,
                tokenizer_kwargs={'trust_remote_code': model.trust_remote_code},
                max_out_len=64,
                batch_size=1,
                run_cfg=dict(num_gpus=model.gpus),
            )
        )
    return entries
