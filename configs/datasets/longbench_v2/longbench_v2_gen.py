# LongBench v2: pred.py's four settings (0shot, cot, no_context, rag) at the three length classes
# (short, medium, long): 12 datasets, each reading the official data.json from data/longbenchv2
# (`configs('PATH')` for another folder). Chain of thought answers in two calls (the reasoning
# with the document, then the answer without it). `configs(mode='official')` fills the prompts as
# pred.py does and drops records whose reply is empty (result.py's numbers); `rag=N` is pred.py's
# --rag N (default 8; needs records carrying retrieved_context). Each config: LongBenchV2Dataset,
# LongContextPromptTemplate (a middle cut shortens the document only), GenInferencer or
# TwoCallGenInferencer, LongBenchV2Evaluator (the benchmark's `cell_config`,
# longbench_v2/benchmark.py).
longbench_v2_datasets = (
    __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('longbench_v2')
    .configs()
)
