"""A stub libcuda.so.1 built with the C compiler: it stands in for the NVIDIA driver on a machine without one.

torch_memory_saver's hook libraries need libcuda.so.1 before their libcudart is even looked at; with
this stub on the loader path, loading a hook library fails or succeeds on its libcudart alone, which
is the failure under test. Every entry point returns CUDA_ERROR_NO_DEVICE (100); nothing calls them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rlcheck.process import subproc

SYMBOLS = ("cuCtxGetDevice", "cuDeviceGet", "cuDeviceGetAttribute", "cuGetErrorString", "cuMemAddressFree",
           "cuMemAddressReserve", "cuMemCreate", "cuMemGetAllocationGranularity", "cuMemMap", "cuMemRelease",
           "cuMemSetAccess", "cuMemUnmap")


def build(folder: Path) -> Path:
    """Compile folder/libcuda.so.1; returns the folder. Raises RuntimeError naming what failed."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise RuntimeError("no C compiler (gcc or cc) to build the stub libcuda.so.1")
    source = folder / "libcuda_stub.c"
    source.write_text("".join(f"int {name}(void) {{ return 100; }}\n" for name in SYMBOLS))
    done = subproc.run([cc, "-shared", "-fPIC", "-o", str(folder / "libcuda.so.1"), str(source),
                        "-Wl,-soname,libcuda.so.1"], timeout_s=60)
    if done.returncode != 0:
        raise RuntimeError(f"building the stub libcuda.so.1 failed ({done.why()}): {done.tail(5)}")
    return folder
