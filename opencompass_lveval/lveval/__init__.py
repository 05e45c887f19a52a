"""LV-Eval: 11 bilingual QA datasets at five length levels (tasks.py is the table)."""
