"""conformbench.runner"""
