"""Build every dataset of an OpenCompass config and render its first prompt, without a model.

OpenCompass's own ``--dry-run`` stops at partitioning; this goes as far as a model would see:
each dataset is loaded from its files and its first prompt is formatted by OpenCompass's prompt
template, then compared with the official LV-Eval prompt filled from the same record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .lveval.tasks import TASKS


@dataclass
class DatasetCheck:
    abbr: str
    records: int
    max_out_len: Optional[int]
    prompt_chars: int
    official_prompt: Optional[bool]  # None: not an LV-Eval dataset


def _official_prompts() -> dict[str, tuple[str, int]]:
    return {task.abbr(level): (task.prompt, task.max_out_len)
            for task in TASKS for level in ('16k', '32k', '64k', '128k', '256k')}


def check_config(config_path: str) -> list[DatasetCheck]:
    from mmengine.config import Config
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg

    official = _official_prompts()
    checks = []
    for dataset_cfg in Config.fromfile(config_path, format_python_code=False)['datasets']:
        dataset = build_dataset_from_cfg(dataset_cfg)
        first = dataset.test[0]
        infer_cfg = dataset_cfg['infer_cfg']
        template = ICL_PROMPT_TEMPLATES.build(infer_cfg['prompt_template'])
        rendered = template.generate_item(first, output_field=dataset.reader.output_column)
        prompt = ''.join(item.get('prompt', '') if isinstance(item, dict) else item
                         for item in rendered)
        max_out_len = infer_cfg['inferencer'].get('max_out_len')
        expected = official.get(dataset_cfg['abbr'])
        matches = None if expected is None else (
            prompt == expected[0].format(context=first['context'], input=first['input'])
            and max_out_len == expected[1])
        checks.append(DatasetCheck(dataset_cfg['abbr'], len(dataset.test), max_out_len,
                                   len(prompt), matches))
    return checks
