"""A math-verify that finds every answer wrong: the silent all-zero reward, for /health to catch.

Put first on PYTHONPATH by tests/test_reward_service.py; it is never installed.
"""


def parse(text, **_kwargs):
    return [text]


def verify(gold, answer, **_kwargs):
    return False
