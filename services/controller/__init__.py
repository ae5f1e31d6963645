"""The controller: jobs, the search graph (the metadata store's only writer), the public API.

Layers, from the entry points down (``pyproject.toml``'s import contracts hold them):

* ``api/``: the gRPC JobService, authentication, per-tenant limits, request validation and
  the submit-time spec probe;  ``bus/``: the NATS consumers of results and the dead-letter
  backstop. Both hand work to the engine; neither imports the other.
* ``engine/``: the search loop (issuing expansions, folding results in, ending jobs), the
  work messages it publishes and the job events it emits;  ``outputs/``: what a job
  produces for its user (the export module and the HTML report).
* ``search/`` (selection policies and termination rules, pure) and ``store/`` (tables,
  migrations, queries, rows as protobuf messages).

``app.py`` wires them together; ``config.py`` and ``metrics.py`` are shared by all layers.
"""
