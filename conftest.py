pytest_plugins = ["rlcheck.plugin"]
