"""The ``lveval`` command: check data folders and score official-format prediction files."""
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
    unusable = {s.subset: n for s in scored if (n := sum(j.keywords_unusable for j in s.judgements))}
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
    except LVEvalDataError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
