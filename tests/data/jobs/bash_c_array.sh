#!/bin/bash
# The ray-argv-loss launch (tests/data/jobs): the model array is expanded by Ray's /bin/sh, not the inner bash.
ray job submit --address="http://127.0.0.1:8265" -- \
  bash -c 'source models/qwen3-30B-A3B.sh && python3 train.py ${MODEL_ARGS[@]} --rollout-batch-size 12'
