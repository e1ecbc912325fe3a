# rlcheck's plugin for a checkout. An installed rlcheck (pip install -e .) also registers it through its pytest11
# entry point, named "rlcheck.plugin" so that this line finds it registered and is a no-op then.
pytest_plugins = ["rlcheck.plugin"]
