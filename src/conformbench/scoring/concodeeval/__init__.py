"""conformbench.scoring.concodeeval.metrics"""
