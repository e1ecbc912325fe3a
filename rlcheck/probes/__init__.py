"""Probes, one wing per area: collect_*() reads the machine; evaluate_*() judges an observation into a Verdict (pure).

- `node/`: what one node reads about itself (GPUs, driver health, kernel log, installed stack). It runs inside the
  per-node fan-out task on every node, so it imports only the standard library, `rlcheck.process`, `rlcheck.hardware`,
  `rlcheck.data_types` and itself.
- `gpu/`: judges of this machine's GPUs (the declared profile's inventory, the smoke kernels).
- `image/`: judges of the installed image (packages, preloads, numpy under Megatron, SLIME's source).
- `recipe/`: judges of the job's recipe and launch (model, batch, memory, SGLang flags, secrets in argv).
- `cluster/`: judges across nodes (reachability, versions, health gathered from every node, NCCL pairs).

A wing imports `node/` and the floors below `rlcheck.probes`, never another wing (tests/test_architecture.py).
"""
