"""The controller's NATS inputs: consumers of candidates, evaluation and profile results, and
the backstop that turns work every delivery failed into the failure result its hop owes."""
