"""Ada-LEval: BestAnswer and TSort (tasks.py is the table)."""
