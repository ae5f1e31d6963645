"""Code that runs inside the sandbox, in processes that load user code (the spec, the candidate).

Nothing here is trusted: the reference and candidate children (``child``), the warm zygote
that forks candidate children (``zygote``), the runtime guards (``guards``), the trial
inputs (``inputs``) and the platforms' timing (``platforms/``). The trusted worker starts these
modules as processes (``python -m services.evaluator.sandboxed.child``) and reads back only
the files they write; it imports none of them, and they import only ``..protocol`` of the
worker's side.
"""
