"""conformbench.formats.nl"""
