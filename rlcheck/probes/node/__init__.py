"""What one node reads about itself. It runs on every node: the standard library, rlcheck.process,
rlcheck.hardware and rlcheck.data_types only."""
