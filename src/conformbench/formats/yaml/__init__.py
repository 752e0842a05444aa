"""conformbench.formats.yaml"""
