"""Per-node fan-out: `pytest checks/` wall time against local Ray clusters of 1, 3 and 6 nodes."""
