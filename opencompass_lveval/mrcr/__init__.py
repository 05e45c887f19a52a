"""MRCR, both versions: OpenAI MRCR (openai/mrcr) and Google DeepMind MRCR v2 (eval_hub/mrcr_v2)."""
