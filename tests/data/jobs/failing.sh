#!/bin/bash
# A launch that fails before it submits (tests/data/jobs).
set -e
echo "MODEL_SCRIPT not set" >&2
false
ray job submit -- python3 train.py
