"""Helpers shipped for testing conformbench and its backends (fault proxy)."""
