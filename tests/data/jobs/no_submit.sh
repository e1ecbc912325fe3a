#!/bin/bash
# A script that prepares the cluster but never submits a job (tests/data/jobs).
ray start --head --num-gpus 8
echo "cluster up"
