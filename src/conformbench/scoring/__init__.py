"""conformbench.scoring"""
