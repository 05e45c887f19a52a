"""Prompts as a run makes them: a record rendered by a shipped dataset config's own template and
parsed by the wrappers' role parser, so they carry the config's cuttable mark."""

from __future__ import annotations

import functools

from runs import load_config

from opencompass_lveval.framework import benchmarks


@functools.cache
def dataset_configs() -> dict:
    """Every registered benchmark's shipped dataset configs (``Benchmark.dataset_configs``), by
    abbreviation."""
    return {
        config['abbr']: config
        for path, name in benchmarks.dataset_configs()
        for config in load_config(path)[name]
    }


def prompt_template(abbr: str, template=None):
    """The template of the shipped config ``abbr`` (``template`` replaces its text)."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES

    config = dict(dataset_configs()[abbr]['infer_cfg']['prompt_template'])
    if template is not None:
        config['template'] = template
    return ICL_PROMPT_TEMPLATES.build(config)


def shipped_prompt(abbr: str, record: dict, template=None, label=None, mode: str = 'gen'):
    """``record`` through the config ``abbr``'s template (the prompt of ``label`` for perplexity
    configs) and the wrappers' role parser: what a long-context wrapper is handed."""
    from opencompass_lveval.models.template import prompt_parser

    filled = prompt_template(abbr, template)
    if label is None:
        prompt = filled.generate_item(record)
    else:
        prompt = filled.generate_label_prompt_item(record, '', label)
    return prompt_parser().parse_template(prompt, mode)
