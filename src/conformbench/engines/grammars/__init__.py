"""Grammars of our YAML and XML answers, compiled from JSON Schema for llguidance."""
