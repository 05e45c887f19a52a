"""Error types both benchmarks share, kept free of heavy imports so light commands can raise them.

Every message names the file (and line or item where there is one) and says how to fix it; the
``lveval`` command prints it in one line instead of a traceback.
"""


class DataError(ValueError):
    """A problem with an input file: data, predictions or responses."""


class LVEvalDataError(DataError):
    """A problem with LV-Eval data or prediction files."""


class AdaLEvalDataError(DataError):
    """A problem with Ada-LEval data or response files."""


class RulerDataError(DataError):
    """A problem with RULER prediction files."""


class ReportError(ValueError):
    """A folder holds no results to report on, or unreadable ones; the message says what to do."""


class ModelConfigError(ValueError):
    """A model config that cannot work (a missing model folder, an unknown format, a tokenizer
    without a chat template and no format given); raised before any weights load."""


class ApiError(RuntimeError):
    """A request to a model's API failed for good (refused key, rejected request, retries spent);
    the message says which request, what the server said and what to do."""


class BenchmarkError(ValueError):
    """A benchmark that cannot join the registry: its entry point fails to load, it is no
    ``Benchmark``, or its name is taken; the message names the distribution to fix or uninstall."""


class ClusterSetupError(RuntimeError):
    """A cluster that cannot run the tasks as this machine would: no cluster address, or a node
    without the run's folder, Python or package versions; the message names the node and the fix."""


class LongBenchV2DataError(DataError):
    """A problem with LongBench v2 data (``data.json``) or result files."""


class MRCRDataError(DataError):
    """A problem with MRCR data (OpenAI's parquet files, MRCR v2's CSV files, text sources) or
    with a file of replies to score."""
