"""kevolve's shared service core: settings, bus, subjects, object store, spec format, platforms.

Every service imports this package and nothing of another service; everything between
services travels as the protobuf messages in ``proto/`` (generated into ``kevolve.v1``).
Two sub-packages sit beside the core and are imported only by those who need them:

* ``kevolve.exec``: running and timing untrusted code (the sandbox, the GPU lock and timer,
  the interpreter trace and the simulated accelerator), for the services that execute
  specs or candidates;
* ``kevolve.client``: the ``kevolve`` command and the benchmark runner, which no service
  imports.

The core imports neither (``pyproject.toml``'s import contracts hold this).
"""

__version__ = "0.1.0"
