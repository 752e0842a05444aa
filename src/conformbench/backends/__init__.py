"""conformbench.backends"""
