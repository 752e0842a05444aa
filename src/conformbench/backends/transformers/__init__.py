"""The Hugging Face transformers backend (``--backend transformers``, the ``[hf]`` extra)."""
