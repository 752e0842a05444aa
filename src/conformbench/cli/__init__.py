"""conformbench.cli"""
