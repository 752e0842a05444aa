"""What ``conformbench list`` prints without importing a plugin: the rows
made from each registry's declared facts (``static``) and the generated
table of the built-ins (``catalogue``, written by ``catalogue_make``:
``python -m conformbench.cli._list.catalogue_make``). Private (``_``): no
command of its own; ``cli/list.py`` is the command."""
