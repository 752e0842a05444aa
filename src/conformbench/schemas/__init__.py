"""The schema dataset: generator (``generator``, ``leaves``, ``config``,
``words``), external suites (``external``), the instance oracle (``oracle``
over ``solver``/``mutate``), records (``case``), building and statistics
(``build``, ``stats``). See docs/dataset.md."""

from conformbench.schemas.case import (
    ExcludedSchema,
    InvalidInstance,
    SchemaCase,
    load_dataset,
)

__all__ = ["ExcludedSchema", "InvalidInstance", "SchemaCase", "load_dataset"]
