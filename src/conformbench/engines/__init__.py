"""conformbench.engines"""
