"""Our TileLang kernels under test (DSA sparse MLA forward and backward), their fp32 PyTorch
reference, correctness checks, and the pass-config bisect.

Every module imports on a CPU-only machine without TileLang; TileLang is imported inside the
kernel factories. `pytest kernels/` runs the GPU tests on a CUDA machine with TileLang.
"""
