"""Judges across nodes: reachability, versions and health gathered from every node, NCCL pairs."""
