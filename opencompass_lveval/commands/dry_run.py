"""``lveval dry-run``: build every dataset of an OpenCompass config and render its first prompt,
without a model.

OpenCompass's own ``--dry-run`` stops at partitioning; this goes as far as a model would see:
each dataset is loaded from its files and its first prompt is formatted by OpenCompass's prompt
template, then compared with the official LV-Eval prompt filled from the same record.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'dry-run',
        help='build every dataset of an OpenCompass config from its files and check '
        'the first prompt against the official one (no model needed)',
    )
    parser.add_argument('config')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(config=args.config)


def run(*, config: str) -> int:
    lines, ok = describe(check_config(config))
    print('\n'.join(lines))
    return 0 if ok else 1


@dataclass
class DatasetCheck:
    abbr: str
    records: int
    max_out_len: Optional[int]
    prompt_chars: int
    official_prompt: Optional[bool]  # None: no benchmark knows its official prompt


def check_config(config_path: str) -> list[DatasetCheck]:
    from mmengine.config import Config
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg

    from ..framework import benchmarks

    checks = []
    dataset_cfgs = Config.fromfile(config_path, format_python_code=False)['datasets']
    benchmarks.prepare_data(dataset_cfgs)  # data a run builds itself, as the run would
    for dataset_cfg in dataset_cfgs:
        dataset = build_dataset_from_cfg(dataset_cfg)
        first = dataset.test[0]
        infer_cfg = dataset_cfg['infer_cfg']
        template = ICL_PROMPT_TEMPLATES.build(infer_cfg['prompt_template'])
        rendered = template.generate_item(first, output_field=dataset.reader.output_column)
        prompt = ''.join(
            item.get('prompt', '') if isinstance(item, dict) else item for item in rendered
        )
        max_out_len = infer_cfg['inferencer'].get('max_out_len')
        official = next(
            (
                o
                for b in benchmarks.BENCHMARKS
                if (o := b.official_prompt(dataset_cfg['abbr'], first))
            ),
            None,
        )
        matches = None if official is None else (prompt, max_out_len) == official
        checks.append(
            DatasetCheck(dataset_cfg['abbr'], len(dataset.test), max_out_len, len(prompt), matches)
        )
    return checks


def describe(checks: list[DatasetCheck]) -> tuple[list[str], bool]:
    """The table ``lveval dry-run`` prints, and whether every LV-Eval prompt is the official one."""
    width = max(len(c.abbr) for c in checks)
    lines = [f'{"dataset":<{width}}  records  max_out_len  prompt_chars  official_prompt']
    for c in checks:
        verdict = '-' if c.official_prompt is None else ('yes' if c.official_prompt else 'NO')
        lines.append(
            f'{c.abbr:<{width}}  {c.records:>7}  {str(c.max_out_len):>11}  '
            f'{c.prompt_chars:>12}  {verdict}'
        )
    wrong = [c.abbr for c in checks if c.official_prompt is False]
    lines.append(
        f'{len(checks)} datasets built; {len(wrong)} differ from the official prompt or '
        f'max_out_len' + (f': {wrong}' if wrong else '')
    )
    return lines, not wrong
