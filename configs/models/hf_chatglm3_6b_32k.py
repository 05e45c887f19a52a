# ChatGLM3-6B-32K, one of the LV-Eval paper's models, through OpenCompass's HF chat wrapper.
# Point `path` at a local copy on offline clusters (or set HF_HUB_OFFLINE=1 with a filled cache).
from opencompass.models import HuggingFacewithChatTemplate

models = [
    dict(
        type=HuggingFacewithChatTemplate,
        abbr='chatglm3-6b-32k-hf',
        path='THUDM/chatglm3-6b-32k',
        model_kwargs=dict(trust_remote_code=True),
        tokenizer_kwargs=dict(trust_remote_code=True),
        max_seq_len=32768,
        max_out_len=64,
        batch_size=1,
        run_cfg=dict(num_gpus=1),
    )
]
