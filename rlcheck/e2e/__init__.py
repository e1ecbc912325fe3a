"""End-to-end cases: the runner, the live job-log watcher, SLIME's log lines, baselines and plots."""
