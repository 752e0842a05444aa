"""The instance oracle's solver: values built to be valid against a schema.
This package owns the constructive search (``core``: ``Solver``, the
flattened conjunctions, unsatisfiability) and the handlers it is given,
one per JSON type (``type_handlers``), with objects' own (``object_handler``).
The oracle (``schemas/oracle.py``), mutation and pairs call it."""
