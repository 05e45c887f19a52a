"""``lveval inputs``: the exact inputs each model of a config would receive, without weights.

For every model x dataset x record of an OpenCompass config, the record is loaded, its prompt
rendered by the dataset's own template and role parser as the inferencer would, and turned into
ids by the model's input builder (its tokenizer alone is loaded), into the request an API model
would send, or into the text a CPU baseline answers from. One JSON line each; a short summary per
model x dataset with the decoded text around the template and the cut answers the usual questions
(chat template on or off, one BOS or two, where the middle went) before any GPU time is spent.
Each line also holds the user message, and the summary says whether it equals the dataset's
prompt (the template's HUMAN text filled from the record) for every record: a parser that adds a
separator shows here as ``prompt DIFFERS``.

Tokenizers come from this machine alone unless ``LVEVAL_ALLOW_HUB=1`` (``load_tokenizer``), and
each model's settings are checked against its config.json first (``limits.py``).

``--count-only`` writes nothing: the counts per model x dataset, per model and
for the run (baselines in the benchmark's length unit), and one line for each model, dataset or
pair that cannot be counted, saying why."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Optional

from .arguments import COUNT
from .input_kinds import shown

if TYPE_CHECKING:
    from .input_kinds import PairCount


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


def dataset_prompt(prompt) -> str:
    """The dataset's own prompt text, before any role parser: the template output itself, or
    the text of its last HUMAN round (of a prompt of chat messages: its last user message)."""
    from ..prompts.messages import is_messages

    if isinstance(prompt, str):
        return prompt
    if is_messages(prompt):
        return prompt[-1]['content']
    texts = [p['prompt'] for p in prompt if isinstance(p, dict) and p.get('role') == 'HUMAN']
    return texts[-1] if texts else ''


def first_difference(expected: str, got: str) -> str:
    """Where ``got`` leaves ``expected``, shown in a few characters of each."""
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    if at is None:
        at = min(len(expected), len(got))
    return (
        f'at character {at} of {len(expected)}: dataset {shown(expected[at : at + 20])}, '
        f'model {shown(got[at : at + 20])}'
    )


def model_inputs(model_cfg, offline: Optional[bool] = None):
    """What the model makes of a prompt (``input_kinds``), or why it cannot be shown: a sentence.
    Tokenizers come from this machine alone unless the user allows the hub
    (``load_tokenizer``); a problem's message starts with the model's abbr."""
    from opencompass.registry import MODELS

    from ..models.api import LongContextAPI
    from ..models.base import LongContextModel, named_after
    from ..models.baselines import CPUBaseline
    from ..models.template import prompt_parser
    from .input_kinds import ApiInputs, BaselineInputs, ModelInputs

    kind = model_cfg['type']
    cls = MODELS.get(kind) if isinstance(kind, str) else kind
    meta = model_cfg.get('meta_template')
    if isinstance(cls, type) and issubclass(cls, LongContextAPI):
        with named_after(model_cfg):
            builder = cls.request_builder(model_cfg, offline)
        return ApiInputs(builder, prompt_parser(meta), model_cfg.get('prices'))
    if isinstance(cls, type) and issubclass(cls, LongContextModel):
        return ModelInputs(cls.config_builder(model_cfg, offline), prompt_parser(meta))
    if isinstance(cls, type) and issubclass(cls, CPUBaseline):
        return BaselineInputs(cls, meta)
    return (
        f'{getattr(cls, "__name__", cls)} is neither a long-context wrapper of this package nor '
        'one of its CPU baselines: no tokenizer to count with; skipped'
    )


def _counted_inputs(model_cfg) -> object:
    """``model_inputs``, a configuration problem given as the sentence saying why."""
    from ..files.errors import ModelConfigError

    try:
        return model_inputs(model_cfg)
    except ModelConfigError as exc:
        prefix = f'{model_cfg["abbr"]}: '
        return str(exc)[len(prefix) :] if str(exc).startswith(prefix) else str(exc)


def dataset_key(dataset_cfg) -> str:
    """One dataset config's identity: configs sharing an abbreviation may read other data (RULER's
    cells, each model's own copy)."""
    return json.dumps(dataset_cfg, sort_keys=True, default=str)


def _load_datasets(dataset_cfgs: list, tolerant: bool) -> tuple[dict, dict]:
    """(key -> built dataset, abbr -> why not) each distinct dataset read once
    (``dataset_key``); a data problem raises unless ``tolerant``."""
    from opencompass.utils import build_dataset_from_cfg

    from ..files.errors import DataError

    built, failed = {}, {}
    for dataset_cfg in dataset_cfgs:
        key = dataset_key(dataset_cfg)
        if key in built:
            continue
        try:
            built[key] = build_dataset_from_cfg(dataset_cfg)
        except DataError as exc:
            if not tolerant:
                raise
            failed[dataset_cfg['abbr']] = str(exc)
    return built, failed


def _pairs(cfg, models: Optional[list[str]], datasets: Optional[list[str]]) -> list:
    """(model config, its dataset configs) as OpenCompass pairs them (``runner.pairs``), narrowed
    to the abbreviations asked (each checked against the config)."""
    from ..runner.pairs import model_datasets

    wanted_models = {m['abbr'] for m in _pick(cfg['models'], models, 'models')}
    wanted = {d['abbr'] for d in _pick(cfg['datasets'], datasets, 'datasets')}
    return [
        (model_cfg, [d for d in dataset_cfgs if d['abbr'] in wanted])
        for model_cfg, dataset_cfgs in model_datasets(cfg)
        if model_cfg['abbr'] in wanted_models
    ]


def run(
    *,
    config: str,
    out: Optional[str],
    models: Optional[list[str]] = None,
    datasets: Optional[list[str]] = None,
    limit: Optional[int] = None,
    count_only: bool = False,
) -> int:
    """Write the JSON lines to ``out``, each model x dataset in turn, and print the summary; with
    ``count_only``, print the counts alone: 1 where something could not be counted. The data a
    run builds itself (RULER's, per model) is built first where missing, as the run would."""
    from mmengine.config import Config

    from ..framework.benchmarks import prepare_data

    cfg = Config.fromfile(config, format_python_code=False)
    pairs = _pairs(cfg, models, datasets)
    dataset_cfgs = [d for _, found in pairs for d in found]
    if count_only:
        kinds = {m['abbr']: _counted_inputs(m) for m, _ in pairs}
        counted = any(not isinstance(kind, str) for kind in kinds.values())
        if counted:
            prepare_data(dataset_cfgs)
        built, failed = _load_datasets(dataset_cfgs, tolerant=True) if counted else ({}, {})
        lines, complete = count_lines(pairs, kinds, built, failed, limit)
        print('\n'.join(lines))
        return 0 if complete else 1
    kinds = {m['abbr']: model_inputs(m) for m, _ in pairs}
    prepare_data(dataset_cfgs)
    built, _ = _load_datasets(dataset_cfgs, tolerant=False)
    print('\n'.join(_write_all(out, pairs, kinds, built, limit)))
    return 0


def _write_all(out: str, pairs, kinds, built, limit) -> list[str]:
    """Write every model x dataset's lines to ``out``; the summary, with record 0 shown."""
    from ..files.atomic import atomic_open
    from ..files.errors import ModelConfigError
    from ..prompts.truncation import TruncationError

    summary, written = [], 0
    with atomic_open(out) as stream:
        for model_cfg, dataset_cfgs in pairs:
            inputs = kinds[model_cfg['abbr']]
            if isinstance(inputs, str):
                summary.append(f'{model_cfg["abbr"]}: {inputs}')
                continue
            for dataset_cfg in dataset_cfgs:
                name = f'{model_cfg["abbr"]} x {dataset_cfg["abbr"]}'
                dataset = built[dataset_key(dataset_cfg)]
                try:
                    pair = count_pair(stream, model_cfg, inputs, dataset_cfg, dataset, limit)
                except (ModelConfigError, TruncationError) as exc:
                    raise type(exc)(f'{name}: {exc}') from exc
                if pair is None:
                    summary.append(f'{name}: no length unit for this dataset; not written')
                elif pair.sizes:
                    written += len(pair.sizes)
                    summary += [f'{pair.line(name)}; record 0:', *pair.preview]
    summary.append(f'wrote {written} lines to {out}')
    return summary


def count_lines(pairs, kinds, built, failed, limit) -> tuple[list[str], bool]:
    """The ``--count-only`` report: per model its line per dataset and its total, then the run's
    total; and whether every model x dataset was counted."""
    from collections import Counter

    from ..files.errors import ModelConfigError
    from ..prompts.truncation import TruncationError

    lines = not_read_lines(failed)
    run_total: Counter = Counter()
    missing = [m['abbr'] for m, _ in pairs if isinstance(kinds[m['abbr']], str)]
    for model_cfg, dataset_cfgs in pairs:
        abbr, inputs = model_cfg['abbr'], kinds[model_cfg['abbr']]
        if isinstance(inputs, str):
            lines.append(f'{abbr}: not counted: {inputs}')
            continue
        lines.append(f'{abbr} ({inputs.mode}; {inputs.counted_in}):')
        total: Counter = Counter()
        for dataset_cfg in dataset_cfgs:
            dataset = built.get(dataset_key(dataset_cfg))
            if dataset is None:
                continue
            try:
                pair = count_pair(None, model_cfg, inputs, dataset_cfg, dataset, limit)
            except (ModelConfigError, TruncationError) as exc:  # no answer length, no room
                lines.append(f'  {dataset_cfg["abbr"]}: not counted: {exc}')
                missing.append(f'{abbr} x {dataset_cfg["abbr"]}')
                continue
            if pair is None:
                lines.append(
                    f'  {dataset_cfg["abbr"]}: not counted: no benchmark gives its length unit'
                )
                missing.append(f'{abbr} x {dataset_cfg["abbr"]}')
            elif pair.sizes:
                lines.append(f'  {pair.line(dataset_cfg["abbr"])}')
                total.update(pair.totals())
        lines.append(f'  {abbr} total: {describe_total(total)}')
        run_total.update(total)
    counted = len(pairs) - sum(isinstance(kinds[m['abbr']], str) for m, _ in pairs)
    read = {dataset_key(d) for _, found in pairs for d in found}
    if not counted:
        lines.append(
            f'run total: nothing counted: none of the {len(pairs)} models can be counted '
            f'here (above); the {len(read)} datasets were not read'
        )
        return lines, False
    lines.append(
        f'run total: {counted} of {len(pairs)} models can be counted, on {len(built)} of '
        f'{len(read)} datasets read: {describe_total(run_total, pairs=True)}'
        + (f'; not counted: {", ".join(missing)}' if missing else '')
    )
    return lines, not missing and not failed


def not_read_lines(failed: dict[str, str]) -> list[str]:
    """A line per dataset whose data could not be read; the advice ending every one of them
    (how to get the data) once, after them."""
    import os.path

    reasons = list(failed.values())
    shared = os.path.commonprefix([why[::-1] for why in reasons])[::-1] if len(reasons) > 1 else ''
    shared = shared[shared.index('. ') + 2 :] if '. ' in shared else ''
    lines = [
        f'{abbr}: not read: {why[: len(why) - len(shared)].rstrip()}'
        for abbr, why in failed.items()
    ]
    if shared:
        lines.append(f'  (for each dataset above: {shared})')
    return lines


def describe_total(total, pairs: bool = False) -> str:
    """``2 datasets, 8 records: 123 words, 456 characters, answers at most 32 tokens, $0.01``
    (``pairs``: a run's total, whose datasets are counted once per model)."""
    from .input_kinds import TOTAL_KEYS

    if not total['records']:
        return 'nothing counted'
    sizes = [f'{total[unit]} {unit}' for unit in sorted(total) if unit not in TOTAL_KEYS]
    if 'answer tokens' in total:
        sizes.append(f'answers at most {total["answer tokens"]} tokens')
    if 'cost' in total:
        sizes.append(f'at most ${total["cost"]:.2f}')
    datasets = 'model x dataset pairs' if pairs else 'datasets'
    return f'{total["datasets"]} {datasets}, {total["records"]} records: {", ".join(sizes)}'


def count_pair(
    stream, model_cfg, inputs, dataset_cfg, dataset, limit: Optional[int]
) -> Optional[PairCount]:
    """One model x dataset's counts, its lines written to ``stream`` where one is given; None
    where the model cannot measure this dataset's prompts (a baseline on a dataset of no known
    benchmark)."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES

    from ..models.settings import answer_length
    from .input_kinds import PairCount

    unit = inputs.unit(dataset_cfg['abbr'])
    if unit is None:
        return None
    template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])
    max_out_len = answer_length(model_cfg, dataset_cfg)
    pair = PairCount(unit, inputs.mode)
    for index in range(min(len(dataset.test), limit or len(dataset.test))):
        prompt = template.generate_item(
            dataset.test[index], output_field=dataset.reader.output_column
        )
        parsed = inputs.parser.parse_template(prompt, mode='gen')
        message, expected = inputs.prompt_text(parsed), dataset_prompt(prompt)
        made = inputs.make(parsed, max_out_len, dataset_cfg['abbr'])
        pair.add(made, None if message == expected else first_difference(expected, message))
        if stream is not None:
            line = {
                'model': model_cfg['abbr'],
                'dataset': dataset_cfg['abbr'],
                'index': index,
                **made.fields,
                'truncated': made.truncated,
                'mode': inputs.mode,
                'user_message': message,
                'user_message_is_dataset_prompt': message == expected,
            }
            stream.write(json.dumps(line, ensure_ascii=False) + '\n')
    pair.cost = inputs.cost(sum(pair.sizes), pair.answers or 0) if pair.sizes else None
    return pair
