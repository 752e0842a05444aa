"""conformbench.tasks.bfcl.task"""
