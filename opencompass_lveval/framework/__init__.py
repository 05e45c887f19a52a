"""The framework a benchmark author reads: the registry of benchmarks (``benchmarks``), the
declaration they fill in (``declared``) and its OpenCompass classes, the grid of levels and its
tables, the data check and level sizes."""
