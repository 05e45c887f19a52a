"""``lveval configs-dir``: print the folder of this package's OpenCompass configs.

OpenCompass finds configs by folder (``opencompass --config-dir``); the configs ship inside the
package, so their folder depends on where it is installed.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'configs-dir',
        help="print the folder of this package's OpenCompass configs (for "
        'opencompass --config-dir)',
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run()


def run() -> int:
    import opencompass_lveval

    print(Path(opencompass_lveval.__file__).resolve().parent.joinpath('configs').resolve())
    return 0
