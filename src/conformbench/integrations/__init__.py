"""conformbench inside other tools' runners (Inspect AI's tasks). Their
libraries are imported only by the modules that plug into them, which those
tools load through their own entry points."""
