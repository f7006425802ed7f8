"""The command line: one module per verb."""
