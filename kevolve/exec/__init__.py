"""Running and timing untrusted code: the sandbox every user spec and candidate runs in, the
per-GPU lock and the GPU timer, Triton-interpreter tracing and the simulated accelerator.

Imported by the services that execute user code (controller's spec probe, generator's
tracer, evaluator, profiler) and by the client's benchmark tools; never by the core.
"""
