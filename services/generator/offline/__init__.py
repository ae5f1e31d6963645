"""The offline (template) generator: trace -> lower to a small IR -> match templates -> render."""
