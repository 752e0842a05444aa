"""conformbench.formats.xml"""
