"""conformbench.formats.json"""
