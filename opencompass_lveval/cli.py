"""The ``lveval`` command: check, synthesise and build data, score predictions, dry-run configs
and report per-length results, for LV-Eval and Ada-LEval.

This module only parses arguments and calls library functions; each command imports what it
needs when it runs, so ``lveval --help`` and the commands that need no model (score, report,
data, build) start without OpenCompass or torch.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import __version__

LVEVAL_LEVELS = '16k,32k,64k,128k,256k'


def _sizes(text: str) -> list[str]:
    from .sizes import parse_sizes

    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _configs_dir(args: argparse.Namespace) -> int:
    import opencompass_lveval

    print(Path(opencompass_lveval.__file__).resolve().parent.joinpath('configs').resolve())
    return 0


def _data_check(args: argparse.Namespace) -> int:
    from .datacheck import check_data_folder

    lines, ok = check_data_folder(args.folder, args.benchmark)
    print('\n'.join(lines))
    return 0 if ok else 1


def _data_synth(args: argparse.Namespace) -> int:
    from . import benchmarks

    for benchmark in benchmarks.BENCHMARKS:
        print(benchmark.write_synthetic(
            Path(args.out_dir), count=args.count, scale=args.scale, seed=args.seed
        ))  # fmt: skip
    return 0


def _score(args: argparse.Namespace) -> int:
    from .lveval.score import score_and_write

    print('\n'.join(score_and_write(args.pred_dir)))
    return 0


def _score_adaleval(args: argparse.Namespace) -> int:
    import json

    from .adaleval.score import score_file

    out, summary = score_file(args.file, args.task, args.extraction)
    print(json.dumps(summary))
    print(f'wrote {out}', file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import write_report

    written = write_report(args.work_dir, args.out)
    print(next(p for p in written if p.suffix == '.md').read_text(encoding='utf-8'))
    for path in written:
        print(f'wrote {path}')
    return 0


def _build(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    if args.kind == 'factrecall':
        from .lveval.build import build_factrecall

        paths = build_factrecall(
            args.language,
            args.out,
            args.corpora,
            args.levels,
            args.seed,
            cfi=not args.no_cfi,
            kpr=not args.no_kpr,
            context=not args.no_context,
            count=args.count,
            scale=args.scale,
        )
    elif args.kind == 'mixup':
        from .lveval.build import build_mixup, read_items, read_rules

        paths = build_mixup(
            read_items(args.items),
            args.dataset,
            args.language,
            args.out,
            read_rules(args.rules),
            args.levels,
            args.seed,
            cfi=not args.no_cfi,
            kpr=not args.no_kpr,
            scale=args.scale,
        )
    elif args.kind == 'replica':
        from .lveval.build import build_replica

        paths = build_replica(
            args.corpora,
            args.out,
            args.seed,
            args.scale,
            args.levels,
            progress=lambda name: print(f'building {name}', flush=True),
        )
    elif args.kind == 'tsort':
        from .adaleval.build import build_tsort

        paths = [
            build_tsort(args.books, args.setting, args.out, args.count, args.tokenizer, args.seed)
        ]
    else:
        from .adaleval.build import build_bestanswer

        paths = [build_bestanswer(args.source, args.setting, args.out, args.tokenizer, args.seed)]
    for path in paths:
        print(f'wrote {path}')
    print(f'{len(paths)} files in {time.perf_counter() - start:.1f} s')
    return 0


def _dry_run(args: argparse.Namespace) -> int:
    from .dry_run import check_config, describe

    lines, ok = describe(check_config(args.config))
    print('\n'.join(lines))
    return 0 if ok else 1


def _inputs(args: argparse.Namespace) -> int:
    from .model_inputs import write_inputs

    lines = write_inputs(args.config, args.out, args.models, args.datasets, args.limit)
    print('\n'.join(lines))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from .leaderboard import write_leaderboard

    board, written = write_leaderboard(args.runs, args.out, args.published)
    measured = [row for row in board.rows if row.kind == 'measured']
    print(f'{len(measured)} measured rows, {len(board.rows) - len(measured)} published rows, '
          f'sizes: {board.shown_sizes()}')  # fmt: skip
    for model, dataset, why in board.missing:
        print(f'missing: {model} x {dataset}: {why}')
    for label, note in board.conflicts:
        print(f'conflict: {label}: {note}')
    for path in written:
        print(f'wrote {path}')
    return 1 if args.strict and (board.missing or board.conflicts) else 0


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(',') if name.strip()]


def _add_build_parsers(commands) -> None:
    build = commands.add_parser('build', help='build benchmark data (seeded, official formats)')
    kinds = build.add_subparsers(dest='kind', required=True)

    def common(parser, levels=True):
        parser.add_argument('--out', required=True, help='output folder')
        parser.add_argument('--seed', type=int, default=0)
        if levels:
            parser.add_argument(
                '--levels',
                type=_sizes,
                default=LVEVAL_LEVELS.split(','),
                help=f'comma-separated sizes, e.g. 16k,32k,512k,1000k (default: {LVEVAL_LEVELS})',
            )
            parser.add_argument(
                '--scale', type=int, default=1, help='divide every length by this (small test data)'
            )

    factrecall = kinds.add_parser('factrecall', help="the papers' needle in a haystack of books")
    factrecall.add_argument('--language', choices=['en', 'zh'], required=True)
    factrecall.add_argument('--corpora', required=True, help='folder with en/ and zh/ books')
    factrecall.add_argument('--count', type=int, default=200, help='needle positions per level')
    factrecall.add_argument('--no-cfi', action='store_true', help='without confusing facts')
    factrecall.add_argument('--no-kpr', action='store_true', help='without keyword replacement')
    factrecall.add_argument(
        '--no-context', action='store_true', help='empty contexts: the knowledge-leakage probe'
    )
    common(factrecall)
    mixup = kinds.add_parser('mixup', help='LV-Eval context mixing from your own QA items')
    mixup.add_argument(
        '--items',
        required=True,
        help='JSON lines: input, answers, documents, [answer_keywords, confusing_facts]',
    )
    mixup.add_argument('--dataset', required=True, help='output name: {dataset}_{level}.jsonl')
    mixup.add_argument('--language', choices=['en', 'zh'], required=True)
    mixup.add_argument('--rules', help='JSON {original: substitute} or [[original, substitute]]')
    mixup.add_argument('--no-cfi', action='store_true')
    mixup.add_argument('--no-kpr', action='store_true')
    common(mixup)
    replica = kinds.add_parser(
        'replica', help='all 55 LV-Eval subsets shaped like the release, from public-domain books'
    )
    replica.add_argument('--corpora', required=True)
    common(replica)
    tsort = kinds.add_parser('tsort', help='Ada-LEval TSort cases from any books')
    tsort.add_argument('--books', nargs='+', required=True)
    tsort.add_argument(
        '--setting',
        required=True,
        help='a token budget: 2k, 4k, 8k, 16k, 32k, 64k, 128k or any size from 16k (256k, 1m)',
    )
    tsort.add_argument('--count', type=int, default=1000)
    tsort.add_argument(
        '--tokenizer',
        default='cl100k_base',
        help="cl100k_base (the paper's, default), words (an estimate), or a tokenizer.json / its "
        'folder',
    )
    common(tsort, levels=False)
    bestanswer = kinds.add_parser('bestanswer', help='Ada-LEval BestAnswer at another budget')
    bestanswer.add_argument(
        '--source', required=True, help='an official-format stackselect file: the questions'
    )
    bestanswer.add_argument('--setting', required=True, help='token budget, e.g. 4k or 256k')
    bestanswer.add_argument('--tokenizer', default='cl100k_base', help='as for tsort')
    common(bestanswer, levels=False)
    build.set_defaults(handler=_build)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='lveval', description=__doc__.split('\n\n')[0])
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    commands = parser.add_subparsers(dest='command', required=True)
    commands.add_parser(
        'configs-dir',
        help="print the folder of this package's OpenCompass configs (for "
        'opencompass --config-dir)',
    ).set_defaults(handler=_configs_dir)
    data_parser = commands.add_parser('data', help='check or synthesise data folders')
    data_commands = data_parser.add_subparsers(dest='data_command', required=True)
    check = data_commands.add_parser(
        'check',
        help='read every LV-Eval subset or Ada-LEval file under FOLDER once: record '
        'counts against the official ones, schema and encoding problems',
    )
    check.add_argument('folder')
    from . import benchmarks
    from .datacheck import AUTO

    check.add_argument(
        '--benchmark',
        choices=[AUTO] + [b.name for b in benchmarks.BENCHMARKS],
        default=AUTO,
        help='auto: every benchmark whose files are there (LV-Eval when none is)',
    )
    check.set_defaults(handler=_data_check)
    synth = data_commands.add_parser(
        'synth',
        help='write seeded synthetic data: all 55 LV-Eval subsets and a few Ada-LEval '
        'settings (demos, tests)',
    )
    synth.add_argument('out_dir')
    synth.add_argument('--count', type=int, default=4, help='records per subset (default 4)')
    synth.add_argument(
        '--scale',
        type=int,
        default=100,
        help='divide the level lengths by this (default 100: 16k -> 160 words)',
    )
    synth.add_argument('--seed', type=int, default=0)
    synth.set_defaults(handler=_data_synth)
    scorer = commands.add_parser(
        'score',
        help='score official-format prediction files {dataset}_{level}.jsonl like the '
        'official evaluation.py; writes PRED_DIR/eval_result/',
    )
    scorer.add_argument('pred_dir')
    scorer.set_defaults(handler=_score)
    ada = commands.add_parser(
        'score-adaleval',
        help='extract and judge Ada-LEval responses (JSON lines with '
        '"prediction", "answer", and "num_choice" for BestAnswer); writes '
        'FILE.scored.jsonl and prints the rates as one JSON line',
    )
    from .adaleval.tasks import TASKS_BY_NAME

    ada.add_argument('--task', choices=sorted(TASKS_BY_NAME), required=True)
    ada.add_argument('--extraction', choices=['strict', 'official'], default='strict')
    ada.add_argument('file')
    ada.set_defaults(handler=_score_adaleval)
    report = commands.add_parser(
        'report',
        help='per-length tables (Markdown, CSV) and plots (PNG) from an existing '
        'OpenCompass work folder, without re-running anything',
    )
    report.add_argument('work_dir', help='the -w folder of a run, or one of its run folders')
    report.add_argument('--out', help="where to write (default: the run's summary/ folder)")
    report.set_defaults(handler=_report)
    _add_build_parsers(commands)
    dry_run = commands.add_parser(
        'dry-run',
        help='build every dataset of an OpenCompass config from its files and check '
        'the first prompt against the official one (no model needed)',
    )
    dry_run.add_argument('config')
    dry_run.set_defaults(handler=_dry_run)
    inputs = commands.add_parser(
        'inputs',
        help='write the exact token ids each model of an OpenCompass config would receive, per '
        'dataset and record, loading only the tokenizers (no weights, no GPU)',
    )
    inputs.add_argument('config')
    inputs.add_argument('--out', required=True, help='a JSON-lines file to write')
    inputs.add_argument('--models', type=_names, help='model abbrs, comma-separated')
    inputs.add_argument('--datasets', type=_names, help='dataset abbrs, comma-separated')
    inputs.add_argument('--limit', type=int, help='records per dataset (default: all)')
    inputs.set_defaults(handler=_inputs)
    board = commands.add_parser(
        'leaderboard',
        help='merge OpenCompass runs (work folders or run folders) into one leaderboard: '
        'Markdown, CSV, JSON and a self-contained HTML page, with provenance and missing results',
    )
    board.add_argument('runs', nargs='+', help='work folders (-w) or run folders')
    board.add_argument('--out', required=True, help='folder for leaderboard.{md,csv,json,html}')
    board.add_argument('--published', action='store_true',
                       help="add the papers' published numbers as reference rows")  # fmt: skip
    board.add_argument('--strict', action='store_true',
                       help='exit 1 when any asked-for result is missing or conflicts')  # fmt: skip
    board.set_defaults(handler=_leaderboard)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, OSError) as exc:  # DataError, ReportError, a missing file...
        print(f'error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
