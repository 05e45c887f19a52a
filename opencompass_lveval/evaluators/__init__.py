"""Benchmark-independent evaluators: the LLM judge (``judge.py``)."""
