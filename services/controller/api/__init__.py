"""The public gRPC API: JobService, bearer-token auth, per-tenant limits, request checks and
the submit-time spec probe (which runs the spec in the sandbox, never in this process)."""
