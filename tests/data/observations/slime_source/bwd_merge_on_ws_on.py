# Merge on, but warp specialization left on (written for rlcheck's tests).
import tilelang


@tilelang.jit(pass_configs={
    tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: False,
    tilelang.PassConfigKey.TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE: True,
})
def bwd(batch, seq_len, num_stages=0):
    return None
