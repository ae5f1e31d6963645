"""What a job produces for its user: one self-contained module dispatching per shape to the
best verified kernel (``export``) and the HTML report (``report``), built by ``job``."""
