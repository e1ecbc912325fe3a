# Pass configs keyed by the option's string name (written for rlcheck's tests).
PASS_CONFIGS = {"tl.disable_warp_specialized": True, "TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": True}
