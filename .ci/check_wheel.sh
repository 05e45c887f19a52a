#!/usr/bin/env bash
# Build the sdist and the wheel, install the wheel (not editable) into a fresh virtual environment
# and use it from a folder outside the checkout; the sdist must build the same wheel.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/build-env"
"$work/build-env/bin/pip" install -q build
"$work/build-env/bin/python" -m build -q --sdist --wheel --outdir "$work/dist" "$repo"
wheel=("$work"/dist/*.whl)
"$work/build-env/bin/pip" wheel -q --no-deps "$work"/dist/*.tar.gz -w "$work/from-sdist"
diff <(python3 -m zipfile -l "${wheel[0]}" | awk 'NR>1 {print $1}' | sort) \
     <(python3 -m zipfile -l "$work"/from-sdist/*.whl | awk 'NR>1 {print $1}' | sort)
echo "sdist and wheel hold the same $(python3 -m zipfile -l "${wheel[0]}" | tail -n +2 | wc -l) files"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "${wheel[0]}"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
"$work/venv/bin/python" "$repo/.ci/check_install.py"
