"""SLIME's remote_rm reward service: FastAPI + uvicorn in front, scorer processes with deadlines behind.

Run it with `rlcheck reward-service` (or `python -m rlcheck.reward`); see cli.py for the options and
app.py for the HTTP contract and the error policy.
"""
