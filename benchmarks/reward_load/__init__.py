"""The reward service under SLIME's load, against the reference design (see run.py)."""
