"""The ``lveval`` command: check, synthesise and build data, score predictions, dry-run configs
and report per-length results, for LV-Eval and Ada-LEval."""
from __future__ import annotations

import argparse
import json
import sys

from .lveval import data, score
from .lveval.data import LVEvalDataError


def _data_check(args: argparse.Namespace) -> int:
    reports = list(data.check_folder(args.folder))
    width = max(len(r.subset) for r in reports)
    print(f'{"subset":<{width}}  records/expected  status')
    for report in reports:
        status = 'ok' if report.ok else report.problem
        print(f'{report.subset:<{width}}  {report.records:>7}/{report.expected:<8}  {status}')
    bad = [r for r in reports if not r.ok]
    missing = sum(r.source is None for r in reports)
    print(f'{len(reports) - len(bad)} of {len(reports)} subsets ok, {missing} missing, '
          f'{len(bad) - missing} with problems')
    if missing:
        print(data.GET_DATA_HINT)
    return 1 if bad else 0


def _data_synth(args: argparse.Namespace) -> int:
    from .adaleval.synthetic import write_synthetic_adaleval
    from .lveval.synthetic import write_synthetic_data
    paths = write_synthetic_data(args.out_dir, count=args.count, scale=args.scale, seed=args.seed)
    print(f'wrote {len(paths)} LV-Eval subsets ({args.count} records each, lengths / '
          f'{args.scale}) to {args.out_dir}')
    ada = write_synthetic_adaleval(f'{args.out_dir}/adaleval', seed=args.seed)
    print(f'wrote {len(ada)} Ada-LEval files (BestAnswer 1k, 2k; TSort 2k, 4k; 10 records each) '
          f'to {args.out_dir}/adaleval')
    return 0


def _score(args: argparse.Namespace) -> int:
    scored = score.score_folder(args.pred_dir)
    out_dir = f'{str(args.pred_dir).rstrip("/")}/eval_result'
    table = score.write_official_results(scored, out_dir)
    print(table.to_string(index=False))
    unusable = {s.subset: n for s in scored
                if (n := sum(j.keywords_unusable for j in s.judgements))}
    if unusable:
        print('keyword strings that normalise to nothing (gate skipped; the official code crashes '
              f'on these): {json.dumps(unusable)}')
    print(f'wrote {out_dir}/result.json and result.csv')
    return 0


def _score_adaleval(args: argparse.Namespace) -> int:
    from .adaleval.score import score_file
    out, summary = score_file(args.file, args.task, args.extraction)
    print(json.dumps(summary))
    print(f'wrote {out}', file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from .summarize import ReportError, write_report
    try:
        written = write_report(args.work_dir, args.out)
    except ReportError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    print(written[-1 - sum(p.suffix == '.csv' for p in written)].read_text(encoding='utf-8'))
    for path in written:
        print(f'wrote {path}')
    return 0


def _levels(text: str) -> list[str]:
    from .lveval.tasks import LEVELS
    levels = [level.strip() for level in text.split(',') if level.strip()]
    bad = [level for level in levels if not (level.endswith('k') and level[:-1].isdigit())]
    if bad:
        raise argparse.ArgumentTypeError(f'levels look like {",".join(LEVELS)}; not {bad}')
    return levels


def _build(args: argparse.Namespace) -> int:
    import time
    start = time.perf_counter()
    if args.kind == 'factrecall':
        from .lveval.build import build_factrecall
        paths = build_factrecall(args.language, args.out, args.corpora, args.levels, args.seed,
                                 cfi=not args.no_cfi, kpr=not args.no_kpr,
                                 context=not args.no_context, count=args.count,
                                 scale=args.scale)
    elif args.kind == 'mixup':
        from .lveval.build import build_mixup, read_items, read_rules
        paths = build_mixup(read_items(args.items), args.dataset, args.language, args.out,
                            read_rules(args.rules), args.levels, args.seed,
                            cfi=not args.no_cfi, kpr=not args.no_kpr, scale=args.scale)
    elif args.kind == 'replica':
        from .lveval.build import build_replica
        paths = build_replica(args.corpora, args.out, args.seed, args.scale, args.levels,
                              progress=lambda name: print(f'building {name}', flush=True))
    elif args.kind == 'tsort':
        from .adaleval.build import build_tsort
        paths = [build_tsort(args.books, args.setting, args.out, args.count, args.tokenizer,
                             args.seed)]
    else:
        from .adaleval.build import build_bestanswer
        paths = [build_bestanswer(args.source, args.setting, args.out, args.tokenizer,
                                  args.seed)]
    for path in paths:
        print(f'wrote {path}')
    print(f'{len(paths)} files in {time.perf_counter() - start:.1f} s')
    return 0


def _add_build_parsers(commands) -> None:
    from .lveval.tasks import LEVELS
    build = commands.add_parser('build', help='build benchmark data (seeded, official formats)')
    kinds = build.add_subparsers(dest='kind', required=True)

    def common(parser, levels=True):
        parser.add_argument('--out', required=True, help='output folder')
        parser.add_argument('--seed', type=int, default=0)
        if levels:
            parser.add_argument('--levels', type=_levels, default=list(LEVELS),
                                help='comma-separated, e.g. 16k,32k,512k (default: the five)')
            parser.add_argument('--scale', type=int, default=1,
                                help='divide every length by this (small test data)')

    factrecall = kinds.add_parser('factrecall', help="the papers' needle in a haystack of books")
    factrecall.add_argument('--language', choices=['en', 'zh'], required=True)
    factrecall.add_argument('--corpora', required=True, help='folder with en/ and zh/ books')
    factrecall.add_argument('--count', type=int, default=200, help='needle positions per level')
    factrecall.add_argument('--no-cfi', action='store_true', help='without confusing facts')
    factrecall.add_argument('--no-kpr', action='store_true', help='without keyword replacement')
    factrecall.add_argument('--no-context', action='store_true',
                            help='empty contexts: the knowledge-leakage probe')
    common(factrecall)
    mixup = kinds.add_parser('mixup', help='LV-Eval context mixing from your own QA items')
    mixup.add_argument('--items', required=True,
                       help='JSON lines: input, answers, documents, [answer_keywords, '
                            'confusing_facts]')
    mixup.add_argument('--dataset', required=True, help='output name: {dataset}_{level}.jsonl')
    mixup.add_argument('--language', choices=['en', 'zh'], required=True)
    mixup.add_argument('--rules', help='JSON {original: substitute} or [[original, substitute]]')
    mixup.add_argument('--no-cfi', action='store_true')
    mixup.add_argument('--no-kpr', action='store_true')
    common(mixup)
    replica = kinds.add_parser('replica', help='all 55 LV-Eval subsets shaped like the release, '
                                               'from public-domain books')
    replica.add_argument('--corpora', required=True)
    common(replica)
    tsort = kinds.add_parser('tsort', help='Ada-LEval TSort cases from any books')
    tsort.add_argument('--books', nargs='+', required=True)
    tsort.add_argument('--setting', required=True, help='2k, 4k, 8k, 16k, 32k, 64k or 128k')
    tsort.add_argument('--count', type=int, default=1000)
    tsort.add_argument('--tokenizer', default='auto',
                       help='auto, cl100k_base, words, or a tokenizer.json / its folder')
    common(tsort, levels=False)
    bestanswer = kinds.add_parser('bestanswer', help='Ada-LEval BestAnswer at another budget')
    bestanswer.add_argument('--source', required=True,
                            help='an official-format stackselect file: the questions')
    bestanswer.add_argument('--setting', required=True, help='token budget, e.g. 4k or 256k')
    bestanswer.add_argument('--tokenizer', default='auto')
    common(bestanswer, levels=False)
    build.set_defaults(handler=_build)


def _dry_run(args: argparse.Namespace) -> int:
    from .dry_run import check_config
    checks = check_config(args.config)
    width = max(len(c.abbr) for c in checks)
    print(f'{"dataset":<{width}}  records  max_out_len  prompt_chars  official_prompt')
    for c in checks:
        verdict = '-' if c.official_prompt is None else ('yes' if c.official_prompt else 'NO')
        print(f'{c.abbr:<{width}}  {c.records:>7}  {str(c.max_out_len):>11}  {c.prompt_chars:>12}'
              f'  {verdict}')
    wrong = [c.abbr for c in checks if c.official_prompt is False]
    print(f'{len(checks)} datasets built; {len(wrong)} differ from the official prompt or '
          f'max_out_len' + (f': {wrong}' if wrong else ''))
    return 1 if wrong else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='lveval', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    data_parser = commands.add_parser('data', help='inspect LV-Eval data folders')
    data_commands = data_parser.add_subparsers(dest='data_command', required=True)
    check = data_commands.add_parser(
        'check', help='list the 55 subsets found under FOLDER with record counts and problems')
    check.add_argument('folder')
    check.set_defaults(handler=_data_check)
    synth = data_commands.add_parser(
        'synth', help='write seeded synthetic data: all 55 LV-Eval subsets and a few Ada-LEval '
                      'settings (demos, tests)')
    synth.add_argument('out_dir')
    synth.add_argument('--count', type=int, default=4, help='records per subset (default 4)')
    synth.add_argument('--scale', type=int, default=100,
                       help='divide the level lengths by this (default 100: 16k -> 160 words)')
    synth.add_argument('--seed', type=int, default=0)
    synth.set_defaults(handler=_data_synth)
    scorer = commands.add_parser(
        'score', help='score official-format prediction files; writes PRED_DIR/eval_result/')
    scorer.add_argument('pred_dir')
    scorer.set_defaults(handler=_score)
    ada = commands.add_parser(
        'score-adaleval', help='extract and judge Ada-LEval responses (JSON lines with '
                               '"prediction", "answer", and "num_choice" for BestAnswer); writes '
                               'FILE.scored.jsonl and prints the rates as one JSON line')
    ada.add_argument('--task', choices=['bestanswer', 'tsort'], required=True)
    ada.add_argument('--extraction', choices=['strict', 'official'], default='strict')
    ada.add_argument('file')
    ada.set_defaults(handler=_score_adaleval)
    report = commands.add_parser(
        'report', help='per-length tables (Markdown, CSV) and plots (PNG) from an existing '
                       'OpenCompass work folder, without re-running anything')
    report.add_argument('work_dir', help='the -w folder of a run, or one of its run folders')
    report.add_argument('--out', help='where to write (default: the run\'s summary/ folder)')
    report.set_defaults(handler=_report)
    _add_build_parsers(commands)
    dry_run = commands.add_parser(
        'dry-run', help='build every dataset of an OpenCompass config from its files and check '
                        'the first prompt against the official one (no model needed)')
    dry_run.add_argument('config')
    dry_run.set_defaults(handler=_dry_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (LVEvalDataError, FileNotFoundError, ValueError) as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
