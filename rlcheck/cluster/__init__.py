"""Ray mechanics: the embedded loopback Ray, argv-safe job submission, the per-node fan-out."""
