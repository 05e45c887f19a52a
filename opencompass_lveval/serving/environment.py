"""The environment replicas get, and secrets kept out of the run folder.

OpenCompass writes the whole config to ``{work_dir}/configs`` (with ``--dry-run`` too), so a
value given in ``replica_env`` is on disk in every run folder. Secrets (a Hugging Face token for
gated weights on a node, say) are therefore given by name: ``replica_env_from=['HF_TOKEN']``
reads each variable from the driver's environment when the replicas launch, and the value goes
to the replicas' processes only, never to a file, a log, the journal or a request key. A value in
``replica_env`` that looks like a secret, by its variable's name or its own form, is refused
when the runner is built, naming the variable and the fix.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..files.errors import ModelConfigError

_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_SECRET_NAME = re.compile(
    r'TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH', re.I
)
_SECRET_VALUE = re.compile(
    r'hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}'
    r'|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}'
)


def literal_secret(name: str, value: str) -> Optional[str]:
    """Why ``name=value`` looks like a secret, or None."""
    if _SECRET_NAME.search(name):
        return f'its name says {_SECRET_NAME.search(name)[0].lower()}'
    if _SECRET_VALUE.search(value):
        return 'its value has the form of an access token'
    return None


def check_replica_env(env: dict, names: list) -> None:
    """A refusal of literal secrets in ``replica_env`` and of names that are no variable's."""
    for name, value in env.items():
        why = literal_secret(str(name), str(value))
        if why:
            raise ModelConfigError(
                f"ServeOnceRunner: replica_env['{name}'] looks like a secret given literally "
                f'({why}), and OpenCompass writes the config, values included, to the run '
                f"folder (configs/): give it by name, replica_env_from=['{name}'], with {name} "
                'exported in the shell that runs OpenCompass (and replace the token if a run '
                'already wrote it)'
            )
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ModelConfigError(
                f'ServeOnceRunner: replica_env_from must be a list of environment variable '
                f'names, and {name!r} is not one'
            )
        if name in env:
            raise ModelConfigError(
                f'ServeOnceRunner: {name} is in both replica_env and replica_env_from: keep it '
                'in replica_env_from only'
            )


def from_driver(names: list[str]) -> dict[str, str]:
    """The variables ``names`` from this process's environment, or an error naming the one
    that is not set."""
    missing = [name for name in names if name not in os.environ]
    if missing:
        raise ModelConfigError(
            f'ServeOnceRunner: replica_env_from names {", ".join(missing)}, not set in the '
            f'environment of this run: export {missing[0]}=... in the shell that runs OpenCompass'
        )
    return {name: os.environ[name] for name in names}
