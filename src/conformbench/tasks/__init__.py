"""conformbench.tasks"""
