"""A PNG of per-phase time per GRPO loop, for the e2e report (matplotlib when installed)."""

from __future__ import annotations

from pathlib import Path


def plot_phase_times(phase_times: list[dict[str, float]], path: Path, *, title: str) -> Path | None:
    """Grouped bars: one group per loop, one bar per phase. None when there is nothing to plot or no matplotlib."""
    if not phase_times:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    phases = list(dict.fromkeys(p for loop in phase_times for p in loop))
    width = 0.8 / max(len(phases), 1)
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, phase in enumerate(phases):
        xs = [loop_index + i * width for loop_index in range(len(phase_times))]
        ax.bar(xs, [loop.get(phase, 0.0) for loop in phase_times], width=width, label=phase)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(phase_times))])
    ax.set_xticklabels([f"loop {i}" for i in range(len(phase_times))])
    ax.set_ylabel("seconds since the previous milestone")
    ax.set_title(title)
    ax.legend(fontsize="small")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
