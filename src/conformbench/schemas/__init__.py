"""conformbench.schemas"""
