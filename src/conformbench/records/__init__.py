"""Records shared by every layer: prompts, generation requests and results,
items and conditions, the run spec, replay records and their file format,
and the scored-report records. This package imports nothing of conformbench
but ``errors`` and ``jsontypes``, so any package may depend on it."""
