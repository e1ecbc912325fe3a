"""Judges of this machine's GPUs: the declared hardware profile verified, the smoke kernels."""
