"""conformbench.backends.vllm"""
