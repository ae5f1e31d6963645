"""kevolve's shared package: bus, stores, configuration, generated messages, and the CLI.

Services import only from here, never from each other; everything between them travels
as the protobuf messages in ``proto/`` (generated into ``kevolve.v1``).
"""

__version__ = "0.1.0"
