"""Serve once, query many (issue 36): engine replicas started once per model for a whole
inference stage, fed longest first from one queue whose replies are written exactly once."""
