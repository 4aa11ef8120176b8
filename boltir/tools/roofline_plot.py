"""A profiled run's launches as a picture, beside the tables `format_profile` prints.

Left, the roofline: every launch that computes (FLOPs > 0) at its arithmetic intensity
(FLOPs per byte moved) against its achieved TFLOP/s, under the target's roofs (peak tensor
FLOP/s, and DRAM bandwidth × intensity). Right, every launch, data movement included: its
time against the fraction of its roofline bound it reaches. The launches worth working on
are the large markers low on both panels. Marker area follows the launch's share of the
run's time; colour, its kernel family.

    from boltir.tools.roofline_plot import plot_launches
    plot_launches(compiled.profile(**inputs), get_target("sm90"), "f16", "resnet50 b32", "roofline.png")

`bolt-profile DIR --plot FILE.png` draws one; bench/models.py writes one per model and
batch into $OUT (`<model>_b<batch>_roofline.png`). matplotlib is optional (`boltir[plot]`).
"""

from __future__ import annotations

from pathlib import Path


def plot_launches(launches, target, element: str, title: str, path: str | Path) -> Path | None:
    """Writes the two panels to `path` (PNG) and returns it; None, with one line said,
    where matplotlib is missing, no launch has roofline counts or the drawing fails (a
    picture never costs the measurement it shows)."""
    try:
        import matplotlib
    except ImportError:
        print(f"no roofline plot for {title}: matplotlib is not installed", flush=True)
        return None
    counted = [launch for launch in launches if launch.bytes and launch.ms > 0 and launch.bound_ms is not None]
    if not counted:
        print(f"no roofline plot for {title}: the launches have no roofline counts", flush=True)
        return None
    try:
        return _draw(counted, target, element, title, Path(path))
    except Exception as error:  # noqa: BLE001 - one line, and the run goes on
        print(f"no roofline plot for {title}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}",
              flush=True)
        return None


def _draw(counted, target, element: str, title: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    total_ms = sum(launch.ms for launch in counted)
    families = sorted({launch.family for launch in counted}, key=lambda f: -sum(la.ms for la in counted if la.family == f))
    colours = {family: plt.get_cmap("tab10")(i % 10) for i, family in enumerate(families)}

    def area(launch) -> float:
        return 12 + 900 * launch.ms / total_ms

    figure, (roof, gap) = plt.subplots(1, 2, figsize=(13, 5.2))
    peak = target.peak_tensor_flops[element] / 1e12
    bandwidth = target.dram_bytes_per_second / 1e12  # TB/s: TFLOP/s per FLOP/byte
    computing = [launch for launch in counted if launch.flops]
    intensities = [launch.flops / launch.bytes for launch in computing] or [1.0]
    low, high = min(min(intensities) / 2, 0.5), max(max(intensities) * 2, 4 * peak / bandwidth)
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    roof.plot(xs, [min(peak, bandwidth * x) for x in xs], color="black", linewidth=1.2)
    roof.annotate(f"{peak:.0f} TFLOP/s ({element})", (high, peak), ha="right", va="bottom", fontsize=8)
    roof.annotate(f"{bandwidth:.2f} TB/s", (peak / bandwidth / 3, peak / 3), ha="right", va="bottom", fontsize=8,
                  rotation=38)
    for family in families:
        own = [launch for launch in computing if launch.family == family]
        if own:
            roof.scatter([la.flops / la.bytes for la in own], [la.tflops_per_second for la in own],
                         s=[area(la) for la in own], color=colours[family], alpha=0.6, edgecolors="none")
    roof.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP per byte moved)",
             ylabel="achieved TFLOP/s", title="launches that compute, under the roofline")
    roof.set_ylim(bottom=max(1e-3, min((la.tflops_per_second for la in computing), default=1.0) / 3), top=peak * 2)
    roof.grid(True, which="both", linewidth=0.3)

    for family in families:
        own = [launch for launch in counted if launch.family == family]
        gap.scatter([la.ms * 1e3 for la in own], [100 * la.bound_fraction for la in own], s=[area(la) for la in own],
                    color=colours[family], alpha=0.6, edgecolors="none", label=f"{family} ({len(own)})")
    bounds = sum(launch.bound_ms for launch in counted)
    gap.axhline(100 * bounds / total_ms, color="grey", linestyle="--", linewidth=0.8)
    gap.annotate(f"all launches: {100 * bounds / total_ms:.0f}% of bound", (min(la.ms for la in counted) * 1e3,
                 100 * bounds / total_ms), va="bottom", fontsize=8, color="grey")
    gap.set(xscale="log", xlabel="launch time (µs)", ylabel="% of its roofline bound", ylim=(0, 105),
            title=f"every launch ({len(counted)}, {total_ms:.3f} ms in all)")
    gap.grid(True, which="both", linewidth=0.3)
    gap.legend(fontsize=7, loc="upper left", markerscale=0.5, ncols=2 if len(families) > 6 else 1)
    figure.suptitle(f"{title} on {target.description}: marker area = share of the time")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
