"""The package version (kept apart so submodules can import it without cycles)."""

__version__ = "0.1.0"
