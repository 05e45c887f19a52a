# OpenAI MRCR as its dataset card runs it: gpt-4.1 through the chat completions API, each row's
# messages sent whole in a body of `model` and `messages` alone (no max_tokens, no temperature).
# `inputs='official', official='mrcr'` sends exactly that (docs/mrcr.md). The card also skips rows
# whose contents pass 1,000,000 o200k_base tokens (its MAX_CONTEXT_WINDOW); here such a row of the
# `1m` bin is sent: leave `1m` out or drop those rows for the card's selection. OPENAI_API_KEY in
# the environment; o200k_base must be in tiktoken's cache offline. GDM's MRCR v2 script calls
# Gemini through google-genai (temperature 1.0), not an OpenAI-compatible endpoint: no row here.
from opencompass_lveval.models import LongContextAPI

mrcr_api_models = [
    dict(
        type=LongContextAPI,
        abbr='gpt-4.1-mrcr',
        path='gpt-4.1',
        url='https://api.openai.com/v1',
        key_env='OPENAI_API_KEY',
        tokenizer_path='o200k_base',
        inputs='official',
        official='mrcr',
        max_seq_len=1_000_000,
        batch_size=16,
        concurrency=16,
        run_cfg=dict(num_gpus=0),
    )
]
