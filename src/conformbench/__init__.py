"""conformbench: how well language models honour constraints written as code,
and what a grammar costs or buys."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
