"""Readers of other tools' replays into conformbench's replay format."""
