"""Bring your own job: the launch a user really runs, captured as a Job and judged by the same checks as ours."""
