# Merge on and warp specialization off, with a pipelined loop (written for rlcheck's tests).
import tilelang


@tilelang.jit(pass_configs={
    tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    tilelang.PassConfigKey.TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE: True,
})
def bwd(batch, seq_len, block_size=32, num_stages=1):
    return None
