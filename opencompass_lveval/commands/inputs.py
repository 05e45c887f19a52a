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
    parser.add_argument('--out', required=True, help='a JSON-lines file to write')
    parser.add_argument('--models', type=_names, help='model abbrs, comma-separated')
    parser.add_argument('--datasets', type=_names, help='dataset abbrs, comma-separated')
    parser.add_argument('--limit', type=COUNT, help='records per dataset (default: all)')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        config=args.config,
        out=args.out,
        models=args.models,
        datasets=args.datasets,
        limit=args.limit,
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
    out: str,
    models: Optional[list[str]] = None,
    datasets: Optional[list[str]] = None,
    limit: Optional[int] = None,
) -> int:
    """Write the JSON lines to ``out``, each model x dataset in turn; print the summary."""
    from mmengine.config import Config
    from opencompass.utils import build_dataset_from_cfg

    from ..atomic import atomic_open
    from ..models.base import LongContextModel
    from ..models.template import prompt_parser
    from ..runner.infer_task import model_class

    cfg = Config.fromfile(config, format_python_code=False)
    model_cfgs = _pick(cfg['models'], models, 'models')
    dataset_cfgs = _pick(cfg['datasets'], datasets, 'datasets')
    built = {d['abbr']: build_dataset_from_cfg(d) for d in dataset_cfgs}
    summary, written = [], 0
    with atomic_open(out) as stream:
        for model_cfg in model_cfgs:
            cls = model_class(model_cfg)
            if not (isinstance(cls, type) and issubclass(cls, LongContextModel)):
                summary.append(
                    f'{model_cfg["abbr"]}: not a long-context model wrapper (no '
                    'tokenizer to show); skipped'
                )
                continue
            builder = cls.input_builder(cls.input_settings(model_cfg))
            parser = prompt_parser(model_cfg.get('meta_template'))
            for dataset_cfg in dataset_cfgs:
                items, lines = _write_pair(
                    stream,
                    model_cfg=model_cfg,
                    builder=builder,
                    parser=parser,
                    dataset_cfg=dataset_cfg,
                    dataset=built[dataset_cfg['abbr']],
                    limit=limit,
                )
                written += items
                summary += lines
    summary.append(f'wrote {written} lines to {out}')
    print('\n'.join(summary))
    return 0


def _write_pair(
    stream, *, model_cfg, builder, parser, dataset_cfg, dataset, limit: Optional[int]
) -> tuple[int, list[str]]:
    """Write one model x dataset's lines; return how many, and its part of the summary."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES

    from ..runner.infer_task import answer_length

    template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])
    max_out_len = answer_length(model_cfg, dataset_cfg)
    items, differing = [], []
    for index in range(min(len(dataset.test), limit or len(dataset.test))):
        prompt = template.generate_item(
            dataset.test[index], output_field=dataset.reader.output_column
        )
        parsed = parser.parse_template(prompt, mode='gen')
        message, expected = builder.prompt_text(parsed), dataset_prompt(prompt)
        if message != expected:
            differing.append(first_difference(expected, message))
        item = builder.build(parsed, max_out_len)
        items.append(item)
        stream.write(
            json.dumps(
                {
                    'model': model_cfg['abbr'],
                    'dataset': dataset_cfg['abbr'],
                    'index': index,
                    'input_ids': item.ids,
                    'n_ids': len(item.ids),
                    'budget': item.budget,
                    'truncated': item.truncated,
                    'mode': builder.inputs,
                    'user_message': message,
                    'user_message_is_dataset_prompt': message == expected,
                },
                ensure_ascii=False,
            )
            + '\n'
        )
    if not items:
        return 0, []
    sizes = [len(i.ids) for i in items]
    check = (
        f'prompt DIFFERS in {len(differing)}, first {differing[0]}' if differing else 'prompt same'
    )
    return len(items), [
        f'{model_cfg["abbr"]} x {dataset_cfg["abbr"]}: {len(items)} records, '
        f'{min(sizes)}-{max(sizes)} ids, budget {items[0].budget} ({builder.inputs}), '
        f'{sum(i.truncated for i in items)} cut, {check}; record 0:',
        *describe(builder.tokenizer, items[0]),
    ]
