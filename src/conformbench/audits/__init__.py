"""Checks that drive a backend under a constraint engine: the canary (proof a
constraint is applied), the keyword probe (which keywords an engine enforces
by generating with the model) and the model-free engine check. They sit above
both ``engines`` and ``models``."""
