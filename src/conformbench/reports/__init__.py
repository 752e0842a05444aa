"""conformbench.reports"""
