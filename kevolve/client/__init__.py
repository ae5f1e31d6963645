"""The user's side: the ``kevolve`` command (``main``), its gRPC job client, the single-machine
launcher (``kevolve up``), and the benchmark runner and report (``kevolve bench``).

No service imports this package, so service images need not carry it.
"""
