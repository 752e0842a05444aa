"""conformbench.backends.llamacpp"""
