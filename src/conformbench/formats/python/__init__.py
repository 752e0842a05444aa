"""conformbench.formats.python"""
