"""Probes: collect_*() reads the machine; evaluate_*() judges an observation into a Verdict (pure)."""
