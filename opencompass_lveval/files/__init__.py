"""Reading and writing files safely: atomic writes, JSON lines, the reply cache, columnar rows,
the package's errors, and prediction values read as text."""
