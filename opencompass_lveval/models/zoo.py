"""The open-weight models of the LV-Eval and Ada-LEval papers, one row each, saying how each was
fed: its conversation format, its official ``max_length``, and the input mode its configs use.

Rows with an official LV-Eval reference (the published numbers came from LV-Eval's prediction
code) run in ``official`` mode with the format that code used (``formats.FORMATS``) and its
``--model-max-length`` (the window in decimal thousands less 500). Rows without one (the v2
paper's newer models, Ada-LEval's models) run in ``exact`` mode with the tokenizer's chat
template, or with a format where the tokenizer has none. ``window`` is the context each model
claims; ``gpus`` sizes tensor parallelism (vLLM) or device placement (HF); ``rope_scaling`` is set
where the released config does not reach the claimed window by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

K = 1024


@dataclass(frozen=True)
class PaperModel:
    abbr: str
    path: str  # Hugging Face id; point it at a local copy on offline clusters
    window: int
    papers: tuple[str, ...]
    inputs: str  # what its configs use: 'official' (an official reference exists) or 'exact'
    conversation: Optional[str] = None  # an official format name; None: the chat template
    max_length: Optional[int] = None  # the official --model-max-length, for 'official' inputs
    chat: bool = True
    gpus: int = 1
    rope_scaling: Optional[dict] = None
    trust_remote_code: bool = False  # only where the model ships its own code
    backends: tuple[str, ...] = ('vllm', 'hf')
    note: str = ''


YARN_X4 = {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768}

# fmt: off
PAPER_MODELS: tuple[PaperModel, ...] = (
    PaperModel('llama2-7b-chat-4k', 'meta-llama/Llama-2-7b-chat-hf', 4 * K, ('lveval',),
               'official', 'llama2', 3500),
    PaperModel('qwen-7b-chat-8k', 'Qwen/Qwen-7B-Chat', 8 * K, ('lveval',), 'official',
               'qwen_chat', 7500, trust_remote_code=True, backends=('hf',),
               note='vLLM dropped its architecture (QWenLMHeadModel) after 0.23'),
    PaperModel('llama3-8b-instruct-8k', 'meta-llama/Meta-Llama-3-8B-Instruct', 8 * K, ('lveval',),
               'official', 'bare', 7500, note="official build_chat matches no Llama-3 name"),
    PaperModel('vicuna-7b-v1.5-16k', 'lmsys/vicuna-7b-v1.5-16k', 16 * K, ('lveval', 'adaleval'),
               'official', 'vicuna', 15500),
    PaperModel('vicuna-13b-v1.5-16k', 'lmsys/vicuna-13b-v1.5-16k', 16 * K, ('adaleval',),
               'exact', 'vicuna'),
    PaperModel('chatglm2-6b-32k', 'THUDM/chatglm2-6b-32k', 32 * K, ('adaleval',), 'exact',
               'chatglm2', trust_remote_code=True),
    PaperModel('chatglm3-6b-32k', 'THUDM/chatglm3-6b-32k', 32 * K, ('lveval', 'adaleval'),
               'official', 'chatglm3', 31500, trust_remote_code=True),
    PaperModel('bluelm-7b-chat-32k', 'vivo-ai/BlueLM-7B-Chat-32K', 32 * K, ('lveval',),
               'official', 'bluelm', 31500, trust_remote_code=True, backends=('hf',),
               note='vLLM has no implementation of its architecture'),
    PaperModel('longchat-7b-v1.5-32k', 'lmsys/longchat-7b-v1.5-32k', 32 * K,
               ('lveval', 'adaleval'), 'official', 'bare', 31500,
               note='official build_chat matches no LongChat name: the bare prompt'),
    PaperModel('internlm2-chat-7b', 'internlm/internlm2-chat-7b', 32 * K, ('adaleval',),
               'exact', trust_remote_code=True),
    PaperModel('glm-4-9b-chat-128k', 'THUDM/glm-4-9b-chat', 128 * K, ('lveval',), 'exact',
               trust_remote_code=True),
    PaperModel('qwen2.5-72b-instruct-128k', 'Qwen/Qwen2.5-72B-Instruct', 128 * K, ('lveval',),
               'exact', gpus=4, rope_scaling=YARN_X4),
    PaperModel('llama-3.1-70b-instruct-128k', 'meta-llama/Llama-3.1-70B-Instruct', 128 * K,
               ('lveval',), 'exact', gpus=4),
    PaperModel('yi-6b-200k', '01-ai/Yi-6B-200K', 200_000, ('lveval',), 'official', 'bare',
               199500, chat=False),
    PaperModel('llama3-8b-instruct-1m', 'gradientai/Llama-3-8B-Instruct-Gradient-1048k',
               1_048_576, ('lveval',), 'exact'),
)
# fmt: on


def _common(model: PaperModel) -> dict:
    return dict(
        path=model.path,
        max_seq_len=model.window,
        inputs=model.inputs,
        conversation=model.conversation,
        max_length=model.max_length,
        chat=model.chat,
        trust_remote_code=model.trust_remote_code,
        rope_scaling=model.rope_scaling,
        max_out_len=64,
        run_cfg=dict(num_gpus=model.gpus),
    )


def vllm_entries(paper: Optional[str] = None) -> list[dict]:
    """Config dicts (without ``type``) for LongContextVLLM; rows vLLM cannot run are left out."""
    return [
        dict(
            abbr=f'{model.abbr}-vllm',
            model_kwargs={'tensor_parallel_size': model.gpus, 'gpu_memory_utilization': 0.9},
            # The engine batches only what one call hands it, and a call's tail decodes alone:
            # generation fell from 1.04x a raw call to 0.81x as the batch grew from 4 to 24
            # (bench/bench_vllm.py). Prefix caching and chunked prefill: engine_defaults.
            batch_size=32,
            **_common(model),
        )
        for model in PAPER_MODELS
        if 'vllm' in model.backends and (paper is None or paper in model.papers)
    ]


def hf_entries(paper: Optional[str] = None) -> list[dict]:
    """Config dicts (without ``type``) for LongContextHF, every paper model."""
    return [
        dict(
            abbr=f'{model.abbr}-hf',
            model_kwargs={'device_map': 'auto'},
            batch_size=1,
            **_common(model),
        )
        for model in PAPER_MODELS
        if 'hf' in model.backends and (paper is None or paper in model.papers)
    ]


def markdown_table() -> str:
    """The table of the paper models in docs/running.md: format, budget, mode, back ends."""
    from .formats import FORMATS, PiecesFormat

    lines = [
        '| model | window | papers | inputs | conversation format | budget | back ends | '
        'remote code |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for model in PAPER_MODELS:
        if model.conversation is None:
            fmt = 'chat template'
        else:
            found = FORMATS[model.conversation]
            text = getattr(found, 'template', '')
            shape = (
                'token pieces'
                if isinstance(found, PiecesFormat)
                else repr(text if len(text) <= 40 else '...' + text[-28:])
            )
            fmt = f'`{model.conversation}`: {shape}'.replace('|', '\\|')
        if not model.chat:
            fmt += ' (base model)'
        budget = (
            f'bare prompt cut to {model.max_length} ids, then the format'
            if model.inputs == 'official'
            else f'{model.window} - answer ids in all'
        )
        backends = ', '.join(model.backends) + (f' ({model.note})' if model.note else '')
        lines.append(
            f'| {model.abbr} | {model.window} | {", ".join(model.papers)} | {model.inputs} | '
            f'{fmt} | {budget} | {backends} | {"yes" if model.trust_remote_code else "no"} |'
        )
    return '\n'.join(lines)


# The API models of the papers -------------------------------------------------------------------

OPENAI = 'https://api.openai.com/v1'
ANTHROPIC = 'https://api.anthropic.com/v1'  # Anthropic's OpenAI-compatible endpoint
LVEVAL_SYSTEM = 'You are a helpful assistant.'


@dataclass(frozen=True)
class ApiPaperModel:
    """An API row of a paper: how its official code called the model (``api_inputs.py``)."""

    abbr: str
    path: str  # the model id the endpoint knows
    window: int
    paper: str
    published: str  # the row's name in the paper's tables
    official: Optional[str]  # the official API path; None: no official code ran it (exact)
    max_length: Optional[int] = None  # LV-Eval's --model-max-length
    system_prompt: Optional[str] = None
    cheap: bool = False  # Ada-LEval's 200 / 50-sample subsets for API models
    url: str = OPENAI
    key_env: str = 'OPENAI_API_KEY'
    prices: Optional[dict] = None  # USD per 1M tokens at release; check your own
    note: str = ''


# fmt: off
API_PAPER_MODELS: tuple[ApiPaperModel, ...] = (
    ApiPaperModel('gpt-3.5-16k', 'gpt-3.5-turbo-1106', 16385, 'lveval', 'GPT-3.5-16k', 'lveval',
                  15500, LVEVAL_SYSTEM, prices={'prompt': 1.0, 'completion': 2.0},
                  note='no temperature, no max_tokens (the script sent none)'),
    ApiPaperModel('gpt-4-8k', 'gpt-4-0613', 8192, 'lveval', 'GPT-4-8k', 'lveval', 7500,
                  LVEVAL_SYSTEM, prices={'prompt': 30.0, 'completion': 60.0},
                  note='no temperature, no max_tokens (the script sent none)'),
    ApiPaperModel('gpt-4-turbo-0125', 'gpt-4-0125-preview', 128000, 'adaleval',
                  'GPT-4-Turbo-0125', 'adaleval', cheap=True,
                  prices={'prompt': 10.0, 'completion': 30.0}),
    ApiPaperModel('gpt-4-turbo-1106', 'gpt-4-1106-preview', 128000, 'adaleval',
                  'GPT-4-Turbo-1106', 'adaleval', cheap=True,
                  prices={'prompt': 10.0, 'completion': 30.0}),
    ApiPaperModel('gpt-3.5-turbo-1106', 'gpt-3.5-turbo-1106', 16385, 'adaleval',
                  'GPT-3.5-Turbo-1106', 'adaleval', cheap=True,
                  prices={'prompt': 1.0, 'completion': 2.0}),
    ApiPaperModel('claude-2', 'claude-2.0', 100000, 'adaleval', 'Claude-2', None, cheap=True,
                  url=ANTHROPIC, key_env='ANTHROPIC_API_KEY',
                  prices={'prompt': 8.0, 'completion': 24.0},
                  note="no official code: exact inputs, cl100k_base counts (Claude's "
                       'tokenizer is not public; the server count is compared)'),
)
# fmt: on


def api_entries(paper: Optional[str] = None) -> list[dict]:
    """Config dicts (without ``type``) for LongContextAPI, one per API row of the papers."""
    return [
        dict(
            abbr=model.abbr,
            path=model.path,
            url=model.url,
            key_env=model.key_env,
            tokenizer_path='cl100k_base',
            max_seq_len=model.window,
            inputs='official' if model.official else 'exact',
            official=model.official,
            max_length=model.max_length,
            system_prompt=model.system_prompt,
            prices=model.prices,
            max_out_len=64,
            batch_size=8,
            query_per_second=2,
            concurrency=4,
            run_cfg=dict(num_gpus=0),
        )
        for model in API_PAPER_MODELS
        if paper is None or model.paper == paper
    ]


def api_markdown_table() -> str:
    """The table of the papers' API rows in docs/running.md."""
    lines = [
        '| row | model id | window | paper | inputs | budget | system prompt | sampling | '
        'samples | USD per 1M in / out |',
        '|---|---|---|---|---|---|---|---|---|---|',
    ]
    for model in API_PAPER_MODELS:
        if model.official == 'lveval':
            budget, sampling = f'prompt cut to {model.max_length} by halves', 'none sent'
        elif model.official == 'adaleval':
            budget = 'no cut; max_tokens = min(1024, window - prompt)'
            sampling = 'temperature 0'
        else:
            budget, sampling = f'{model.window} - answer tokens in all', 'temperature 0'
        prices = f'{model.prices["prompt"]:g} / {model.prices["completion"]:g}'
        lines.append(
            f'| {model.abbr} | {model.path} | {model.window} | {model.paper} | '
            f'{"official" if model.official else "exact"} | {budget} | '
            f'{repr(model.system_prompt) if model.system_prompt else "none"} | {sampling} | '
            f'{"200 / 50 (cheap)" if model.cheap else "all"} | {prices} |'
        )
    return '\n'.join(lines)
