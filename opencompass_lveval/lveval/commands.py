"""LV-Eval's own commands: its official scorer (``lveval score PRED_DIR``: official-format
prediction files scored like the official evaluation.py, written to ``PRED_DIR/eval_result/``),
``lveval judge`` (the same files rated by the paper's LLM judge, written beside them) and its
``lveval build`` kinds (the papers' needle in books, context mixing from your own QA items, a
replica of the release from public-domain books). Heavy imports happen when a command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..commands.arguments import COUNT, NAME_PART, SCALE, SIZES
from ..framework.benchmarks import BUILD_OUTPUT, BuildKind, OfficialScorer, argument

LEVELS = '16k,32k,64k,128k,256k'

LEVELS_AND_SCALE = (
    argument(
        '--levels',
        type=SIZES,
        default=LEVELS.split(','),
        help=f'comma-separated sizes, e.g. 16k,32k,512k,1000k (default: {LEVELS})',
    ),
    argument(
        '--scale', type=SCALE, default=1, help='divide every length by this (small test data)'
    ),
)


# Each kind's function takes the kind's arguments by their argparse names and passes them to the
# library by keyword, converting only what differs: --out is out_dir, --no-cfi is cfi=False...


def _factrecall(*, out: str, no_cfi: bool, no_kpr: bool, no_context: bool, **options) -> list[Path]:
    from .build import build_factrecall

    return build_factrecall(
        out_dir=out, cfi=not no_cfi, kpr=not no_kpr, context=not no_context, **options
    )


def _mixup(
    *, items: str, rules: Optional[str], out: str, no_cfi: bool, no_kpr: bool, **options
) -> list[Path]:
    from .build import build_mixup, read_items, read_rules

    return build_mixup(
        items=read_items(items),
        rules=read_rules(rules),
        out_dir=out,
        cfi=not no_cfi,
        kpr=not no_kpr,
        **options,
    )


def _replica(*, out: str, **options) -> list[Path]:
    from .build import build_replica

    def progress(name: str) -> None:
        print(f'building {name}', flush=True)

    return build_replica(out_dir=out, progress=progress, **options)


SCORER = OfficialScorer(
    help='official-format prediction files {dataset}_{level}.jsonl scored like the official '
    'evaluation.py; writes PRED_DIR/eval_result/',
    arguments=(argument('pred_dir', metavar='PRED_DIR', help='the folder of prediction files'),),
    score='opencompass_lveval.lveval.score:score_and_write',
)

BUILD_KINDS = {
    'factrecall': BuildKind(
        help="the papers' needle in a haystack of books",
        arguments=(
            argument('--language', choices=['en', 'zh'], required=True),
            argument('--corpora', required=True, help='folder with en/ and zh/ books'),
            argument('--count', type=COUNT, default=200, help='needle positions per level'),
            argument('--no-cfi', action='store_true', help='without confusing facts'),
            argument('--no-kpr', action='store_true', help='without keyword replacement'),
            argument(
                '--no-context',
                action='store_true',
                help='empty contexts: the knowledge-leakage probe',
            ),
            *BUILD_OUTPUT,
            *LEVELS_AND_SCALE,
        ),
        build=_factrecall,
    ),
    'mixup': BuildKind(
        help='LV-Eval context mixing from your own QA items',
        arguments=(
            argument(
                '--items',
                required=True,
                help='JSON lines: input, answers, documents, [answer_keywords, confusing_facts]',
            ),
            argument(
                '--dataset',
                type=NAME_PART,
                required=True,
                help='output name: {dataset}_{level}.jsonl',
            ),
            argument('--language', choices=['en', 'zh'], required=True),
            argument('--rules', help='JSON {original: substitute} or [[original, substitute]]'),
            argument('--no-cfi', action='store_true'),
            argument('--no-kpr', action='store_true'),
            *BUILD_OUTPUT,
            *LEVELS_AND_SCALE,
        ),
        build=_mixup,
    ),
    'replica': BuildKind(
        help='all 55 LV-Eval subsets shaped like the release, from public-domain books',
        arguments=(argument('--corpora', required=True), *BUILD_OUTPUT, *LEVELS_AND_SCALE),
        build=_replica,
    ),
}


def add_judge_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'judge',
        help='rate official-format prediction files {dataset}_{level}.jsonl with the LV-Eval '
        "paper's LLM judge; writes PRED_DIR/eval_result/judge_result.{json,csv}",
    )
    parser.add_argument('pred_dir')
    parser.add_argument(
        '--config',
        required=True,
        help='a config file defining `judge`, the judge model (e.g. configs/eval_lveval_judge.py)',
    )
    parser.add_argument(
        '--cache-dir', help="the judge's cache (default: PRED_DIR/eval_result/judge_cache/JUDGE)"
    )
    parser.add_argument('--concurrency', type=COUNT, default=4, help='requests in flight')
    parser.set_defaults(
        handler=lambda args: judge(
            pred_dir=args.pred_dir,
            config=args.config,
            cache_dir=args.cache_dir,
            concurrency=args.concurrency,
        )
    )


def judge(
    *, pred_dir: str, config: str, cache_dir: Optional[str] = None, concurrency: int = 4
) -> int:
    from mmengine.config import Config

    from ..evaluators.judge import Judge, judge_name
    from ..report.tables import file_part
    from .score import RESULT_FOLDER, judge_and_write

    if not Path(config).is_file():
        raise ValueError(f'judge config {config} does not exist')
    found = Config.fromfile(config).get('judge')
    if not isinstance(found, dict):
        raise ValueError(f'{config} defines no `judge` (a dict: the judge model config)')
    found = dict(found)
    cache = cache_dir or Path(pred_dir) / RESULT_FOLDER / 'judge_cache' / file_part(
        judge_name(found)
    )
    print('\n'.join(judge_and_write(pred_dir, Judge(found, cache, concurrency=concurrency))))
    return 0
