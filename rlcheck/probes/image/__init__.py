"""Judges of the installed image: packages, preloaded libraries, numpy under Megatron, SLIME's own source."""
