"""Prompt text and its cut: the prompt template, middle truncation on token ids, the cuttable span,
and text helpers."""
