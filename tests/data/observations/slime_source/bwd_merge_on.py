# A sparse-MLA backward kernel's pass configs with the aggressive merge on (written for rlcheck's tests).
import tilelang


@tilelang.jit(pass_configs={
    tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
    tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    tilelang.PassConfigKey.TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE: True,
})
def bwd(batch, seq_len):
    return None
