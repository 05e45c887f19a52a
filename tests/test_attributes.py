"""docs/benchmark-attributes.md is the framework classes' own reference: generated from them, it
fails here when a class gains, loses or changes an attribute and the page is not regenerated."""

from __future__ import annotations

from pathlib import Path

from opencompass_lveval.framework import attributes
from opencompass_lveval.framework.declared import DeclaredBenchmark

PAGE = Path(__file__).resolve().parent.parent / 'docs' / 'benchmark-attributes.md'


def test_the_page_is_what_the_classes_say():
    assert PAGE.read_text(encoding='utf-8') == attributes.reference(), (
        'docs/benchmark-attributes.md differs from the classes: regenerate it with '
        '`python -m opencompass_lveval.framework.attributes > docs/benchmark-attributes.md`'
    )


def test_every_entry_says_what_it_is():
    import importlib

    for spec in (*attributes.CLASSES, *attributes.PARTS):
        module, _, name = spec.partition(':')
        for entry in attributes.entries(getattr(importlib.import_module(module), name)):
            assert entry.doc, f'{name}.{entry.name} has no docstring or comment'


def test_each_entry_has_a_description_of_its_own():
    """No two entries of a class share one text (a comment over a block of assignments)."""
    import importlib
    from collections import Counter

    for spec in (*attributes.CLASSES, *attributes.PARTS):
        module, _, name = spec.partition(':')
        found = attributes.entries(getattr(importlib.import_module(module), name))
        shared = [e.name for e in found if Counter(x.doc for x in found)[e.doc] > 1]
        assert shared == [], f'{name}: {shared} share one description'


def test_the_attributes_a_declaration_needs_are_on_the_page():
    page = PAGE.read_text(encoding='utf-8')
    for name in (
        'result_metrics', 'board_metrics', 'length_unit', 'level_unit', 'level_tokens', 'metrics',
        'headline_metric', 'depth_bins', 'sizes', 'score_reply', 'score_record', 'data_file',
    ):  # fmt: skip
        assert f'| `{name}`' in page, name


def test_an_entry_is_read_from_its_docstring_comment_or_base():
    class Declared(DeclaredBenchmark):
        colour: str = 'red'
        """What it is painted."""
        shade = 3  # how dark
        # two neighbours
        one = two = 1

        def has_data(self, root):  # its text comes from Benchmark.has_data
            return True

    found = {e.name: (e.kind, e.form, e.doc, e.required) for e in attributes.entries(Declared)}
    assert found == {
        'colour': ('attribute', "`str` = `'red'`", 'What it is painted.', False),
        'shade': ('attribute', '`3`', 'how dark', False),
        'one': ('attribute', '`1`', 'two neighbours', False),
        'two': ('attribute', '`1`', 'two neighbours', False),
        'has_data': (
            'method',
            '`(root)`',
            'Whether the folder holds any of its data files.',
            False,
        ),
    }
