"""conformbench.backends.openai"""
