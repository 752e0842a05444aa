"""conformbench.models"""
