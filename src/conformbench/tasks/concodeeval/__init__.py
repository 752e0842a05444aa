"""conformbench.tasks.concodeeval"""
