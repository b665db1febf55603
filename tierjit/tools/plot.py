"""`tierjit run --plot FILE.png`: each hot function's tier over time, compiles and deopts.

One panel per function that left plain CPython (at most MAX_FUNCTIONS, in order of their first
event), sharing the time axis (seconds since tierjit's runtime was loaded): the tier as a step
line (python < interp < baseline < opt), each compile as a shaded span at the height of the tier
it built, and markers for tier-ups, OSR entries, deopts and give-ups. matplotlib is an optional
extra (`pip install 'tierjit[plot]'`); the Agg backend draws without a display.
"""

from __future__ import annotations

from . import timeline
from .report import TIER_RANK, rank

MAX_FUNCTIONS = 12
MARKERS = {"tier-up": ("^", "tab:green"), "osr": ("o", "tab:purple"),
           "deopt": ("x", "tab:red"), "give-up": ("v", "black"), "error": ("X", "tab:orange")}


def check_available() -> str:
    """'' when a plot can be drawn, else what is missing."""
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'tierjit[plot]')"
    return ""


def write_plot(path: str, evs=None, end: float | None = None) -> int:
    """Draw the timelines into `path` (PNG); returns the number of functions drawn."""
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    lines = [tl for tl in timeline.build(evs, end).values() if tl.hot][:MAX_FUNCTIONS]
    end = timeline.now() if end is None else end
    tiers = sorted({s.label for tl in lines for s in tl.tiers + tl.compiles} | {"python", "opt"},
                   key=rank)
    level = {t: i for i, t in enumerate(tiers)}
    rows = max(len(lines), 1)
    fig, axes = plt.subplots(rows, 1, figsize=(10, 0.6 + 1.5 * rows), sharex=True,
                             squeeze=False)
    for ax, tl in zip(axes[:, 0], lines):
        xs, ys = [], []
        for span in tl.tiers:
            xs += [span.start, span.end]
            ys += [level[span.label]] * 2
        ax.plot(xs, ys, color="tab:blue", linewidth=2, drawstyle="default", label="tier")
        for c in tl.compiles:
            y = level.get(c.label, 0)
            ax.fill_between([c.start, max(c.end, c.start + 1e-4)], y - 0.35, y + 0.35,
                            color="tab:orange", alpha=0.35, linewidth=0)
        for kind, (marker, color) in MARKERS.items():
            pts = [(m.time, level.get(m.tier, level.get("opt"))) for m in tl.marks
                   if m.kind == kind]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker,
                           color=color, s=36, zorder=3, label=kind)
        ax.set_yticks(range(len(tiers)), tiers)
        ax.set_ylim(-0.6, len(tiers) - 0.4)
        ax.set_title(tl.name, loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    if not lines:
        axes[0, 0].text(0.5, 0.5, "no function left plain CPython", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
    axes[-1, 0].set_xlim(0, end)
    axes[-1, 0].set_xlabel("seconds since tierjit was loaded "
                           "(orange: compiles; ^ tier-up, o OSR, x deopt, v give-up)")
    fig.suptitle("tierjit: tier of each hot function over time", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)
    return len(lines)


__all__ = ["MARKERS", "TIER_RANK", "check_available", "write_plot"]
