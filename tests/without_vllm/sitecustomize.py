"""Put on PYTHONPATH by a test that needs an environment without vLLM, on a machine that has it:
in every process of the run, ``import vllm`` fails as where it is not installed, and
``importlib.util.find_spec('vllm')`` says None (a None in ``sys.modules`` stops both)."""

import sys

sys.modules['vllm'] = None
