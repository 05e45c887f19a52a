"""``lveval inputs``: the exact token ids each model of a config would receive, without weights.

For every model x dataset x record of an OpenCompass config, the record is loaded, its prompt
rendered by the dataset's own template and role parser as the inferencer would, and turned into
ids by the model's input builder (its tokenizer alone is loaded). One JSON line each; a short
summary per model x dataset with the decoded text around the template and the cut answers the
usual questions (chat template on or off, one BOS or two, where the middle went) before any GPU
time is spent. Each line also holds the user message, and the summary says whether it equals the
dataset's prompt (the template's HUMAN text filled from the record) for every record: a parser
that adds a separator shows here as ``prompt DIFFERS``.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Optional

from .arguments import COUNT

if TYPE_CHECKING:
    from ..models.inputs import ModelInput

SHOWN = 60  # characters of decoded text shown at each end and around the cut


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(',') if name.strip()]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'inputs',
        help='write the exact token ids each model of an OpenCompass config would receive, per '
        'dataset and record, loading only the tokenizers (no weights, no GPU)',
    )
    parser.add_argument('config')
    parser.add_argument('--out', help='a JSON-lines file to write (not with --count-only)')
    parser.add_argument(
        '--count-only',
        action='store_true',
        help='write nothing: print the prompt tokens (and, for API models with prices, the '
        'cost) per model x dataset, to know what a run costs before it starts',
    )
    parser.add_argument('--models', type=_names, help='model abbrs, comma-separated')
    parser.add_argument('--datasets', type=_names, help='dataset abbrs, comma-separated')
    parser.add_argument('--limit', type=COUNT, help='records per dataset (default: all)')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    if bool(args.out) == args.count_only:
        raise ValueError('give --out FILE to write the inputs, or --count-only to count them')
    return run(
        config=args.config,
        out=args.out,
        models=args.models,
        datasets=args.datasets,
        limit=args.limit,
        count_only=args.count_only,
    )


def _pick(configs: list, wanted: Optional[list[str]], kind: str) -> list:
    if not wanted:
        return list(configs)
    known = {c['abbr']: c for c in configs}
    missing = [name for name in wanted if name not in known]
    if missing:
        raise ValueError(f'no {kind} {missing} in the config; it has {sorted(known)}')
    return [known[name] for name in wanted]


def _shown(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def dataset_prompt(prompt) -> str:
    """The dataset's own prompt text, before any role parser: the template output itself, or
    the text of its last HUMAN round."""
    if isinstance(prompt, str):
        return prompt
    texts = [p['prompt'] for p in prompt if isinstance(p, dict) and p.get('role') == 'HUMAN']
    return texts[-1] if texts else ''


def first_difference(expected: str, got: str) -> str:
    """Where ``got`` leaves ``expected``, shown in a few characters of each."""
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    if at is None:
        at = min(len(expected), len(got))
    return (
        f'at character {at} of {len(expected)}: dataset {_shown(expected[at : at + 20])}, '
        f'model {_shown(got[at : at + 20])}'
    )


def describe(tokenizer, item: ModelInput) -> list[str]:
    """The decoded text at both ends (template included) and around the cut."""
    ids = item.ids
    lines = [
        f'    starts {_shown(tokenizer.decode(ids[:24])[:SHOWN])}',
        f'    ends   {_shown(tokenizer.decode(ids[-24:])[-SHOWN:])}',
    ]
    if item.cut_at is not None:
        before = tokenizer.decode(ids[max(0, item.cut_at - 12) : item.cut_at])
        after = tokenizer.decode(ids[item.cut_at : item.cut_at + 12])
        lines.append(f'    cut    {_shown(before[-SHOWN // 2 :])} | {_shown(after[: SHOWN // 2])}')
    return lines


def run(
    *,
    config: str,
    out: Optional[str],
    models: Optional[list[str]] = None,
    datasets: Optional[list[str]] = None,
    limit: Optional[int] = None,
    count_only: bool = False,
) -> int:
    """Write the JSON lines to ``out`` (none with ``count_only``), each model x dataset in turn;
    print the summary."""
    import contextlib
    import io

    from mmengine.config import Config
    from opencompass.utils import build_dataset_from_cfg

    from ..atomic import atomic_open
    from ..models.api import LongContextAPI
    from ..models.base import LongContextModel
    from ..models.template import prompt_parser
    from ..runner.infer_task import model_class

    cfg = Config.fromfile(config, format_python_code=False)
    model_cfgs = _pick(cfg['models'], models, 'models')
    dataset_cfgs = _pick(cfg['datasets'], datasets, 'datasets')
    built = {d['abbr']: build_dataset_from_cfg(d) for d in dataset_cfgs}
    summary, written = [], 0
    sink = contextlib.nullcontext(io.StringIO()) if count_only else atomic_open(out)
    with sink as stream:
        for model_cfg in model_cfgs:
            cls = model_class(model_cfg)
            if isinstance(cls, type) and issubclass(cls, LongContextAPI):
                inputs = ApiInputs(cls.request_builder(model_cfg), model_cfg.get('prices'))
            elif isinstance(cls, type) and issubclass(cls, LongContextModel):
                inputs = ModelInputs(cls.input_builder(cls.input_settings(model_cfg)))
            else:
                summary.append(
                    f'{model_cfg["abbr"]}: not a long-context model wrapper (no '
                    'tokenizer to show); skipped'
                )
                continue
            parser = prompt_parser(model_cfg.get('meta_template'))
            for dataset_cfg in dataset_cfgs:
                items, lines = _write_pair(
                    None if count_only else stream,
                    model_cfg=model_cfg,
                    inputs=inputs,
                    parser=parser,
                    dataset_cfg=dataset_cfg,
                    dataset=built[dataset_cfg['abbr']],
                    limit=limit,
                )
                written += items
                summary += lines
    if not count_only:
        summary.append(f'wrote {written} lines to {out}')
    print('\n'.join(summary))
    return 0


class ModelInputs:
    """The ids an in-process wrapper (vLLM, HF) would receive."""

    def __init__(self, builder) -> None:
        self.builder, self.tokenizer, self.mode = builder, builder.tokenizer, builder.inputs

    def prompt_text(self, parsed) -> str:
        return self.builder.prompt_text(parsed)

    def make(self, parsed, max_out_len: int) -> tuple[dict, int, bool, int, list[str]]:
        """(the line's fields, prompt tokens, cut or not, answer tokens at most, summary)."""
        item = self.builder.build(parsed, max_out_len)
        fields = {'input_ids': item.ids, 'n_ids': len(item.ids), 'budget': item.budget}
        return fields, len(item.ids), item.truncated, max_out_len, describe(self.tokenizer, item)

    def cost(self, prompt_tokens: int, answer_tokens: int) -> Optional[float]:
        return None


class ApiInputs:
    """The request an API model would send: its body (messages, text or ids) and counts."""

    def __init__(self, builder, prices: Optional[dict]) -> None:
        self.builder, self.prices, self.mode = builder, prices, builder.settings.inputs

    def prompt_text(self, parsed) -> str:
        return self.builder.builder.prompt_text(parsed)

    def make(self, parsed, max_out_len: int) -> tuple[dict, int, bool, int, list[str]]:
        request = self.builder.request(parsed, max_out_len)
        fields = {
            'route': request.route,
            'transport': request.transport,
            'body': request.body,
            'local_prompt_tokens': request.local_tokens,
            'budget': request.budget,
            'answered_without_request': request.answer,
        }
        answer = (
            max(0, request.body.get('max_tokens', max_out_len)) if request.answer is None else 0
        )
        tokens = request.local_tokens if request.answer is None else 0
        shown = request.body.get('messages', [{}])[-1].get('content') or request.body.get('prompt')
        text = shown if isinstance(shown, str) else f'{len(shown)} ids'
        lines = [f'    sends  {request.transport} to /v1/{request.route}: {_shown(text[:SHOWN])}']
        return fields, tokens, request.truncated, answer, lines

    def cost(self, prompt_tokens: int, answer_tokens: int) -> Optional[float]:
        from ..models.api_client import cost_usd

        return cost_usd(self.prices, prompt_tokens, answer_tokens)


def _write_pair(
    stream, *, model_cfg, inputs, parser, dataset_cfg, dataset, limit: Optional[int]
) -> tuple[int, list[str]]:
    """Write one model x dataset's lines (none without a stream); return how many, and its part
    of the summary."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES

    from ..runner.infer_task import answer_length

    template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])
    max_out_len = answer_length(model_cfg, dataset_cfg)
    sizes, cut, answers, differing, first = [], 0, 0, [], None
    for index in range(min(len(dataset.test), limit or len(dataset.test))):
        prompt = template.generate_item(
            dataset.test[index], output_field=dataset.reader.output_column
        )
        parsed = parser.parse_template(prompt, mode='gen')
        message, expected = inputs.prompt_text(parsed), dataset_prompt(prompt)
        if message != expected:
            differing.append(first_difference(expected, message))
        fields, tokens, truncated, answer, shown = inputs.make(parsed, max_out_len)
        sizes.append(tokens)
        cut += truncated
        answers += answer
        first = first or (fields, shown)
        if stream is not None:
            line = {
                'model': model_cfg['abbr'],
                'dataset': dataset_cfg['abbr'],
                'index': index,
                **fields,
                'truncated': truncated,
                'mode': inputs.mode,
                'user_message': message,
                'user_message_is_dataset_prompt': message == expected,
            }
            stream.write(json.dumps(line, ensure_ascii=False) + '\n')
    if not sizes:
        return 0, []
    check = (
        f'prompt DIFFERS in {len(differing)}, first {differing[0]}' if differing else 'prompt same'
    )
    cost = inputs.cost(sum(sizes), answers)
    priced = f', at most ${cost:.2f}' if cost is not None else ''
    return len(sizes), [
        f'{model_cfg["abbr"]} x {dataset_cfg["abbr"]}: {len(sizes)} records, '
        f'{min(sizes)}-{max(sizes)} prompt tokens ({sum(sizes)} in all, answers at most '
        f'{answers}{priced}), budget {first[0]["budget"]} ({inputs.mode}), {cut} cut, {check}; '
        'record 0:',
        *first[1],
    ]
