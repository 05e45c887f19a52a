"""LongBench v2 (THUDM/LongBench): its settings, prompts, requests and table (tasks.py is the table)."""
