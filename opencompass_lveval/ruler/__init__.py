"""RULER (NVIDIA/RULER): its data built and scored exactly as the official code does
(docs/ruler.md)."""
