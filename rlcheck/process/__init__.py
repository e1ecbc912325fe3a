"""Child processes and bounded waits: every wait has a timeout."""
