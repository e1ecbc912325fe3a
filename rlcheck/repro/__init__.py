"""What reproducers share: the reproduction judge, side directories, the CUDA stub, argv probes."""
