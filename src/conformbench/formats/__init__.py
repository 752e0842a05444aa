"""conformbench.formats"""
