"""The frameworks' own argument truth: committed argument schemas of SLIME and Miles, and a judge of a job's argv
against them (rlcheck/data/frameworks/*.json, built by `python -m rlcheck.framework.schema`)."""
