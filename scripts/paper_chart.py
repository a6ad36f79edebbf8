#!/usr/bin/python3
"""Draws the chart of `tagflow bench paper --json FILE`: one panel per workload, one group of bars
per case, one bar per placement, log scale, the paper's Lingua Franca and Ray figures marked.

    scripts/paper_chart.py paper.json paper.svg      # .svg or .png, by the file name

Run by Debian's /usr/bin/python3, where python3-matplotlib installs.

Needs python3-matplotlib (scripts/setup installs it).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLACEMENTS = [
    "plain_loop",
    "reactor_inprocess_1w",
    "reactor_inprocess_2w",
    "reactor_processes",
    "raw_processes",
    "actor_inprocess",
    "actor_processes",
]
WORKLOADS = [
    ("gym", "1. Gym sample generation", "obs/s, higher is better"),
    ("atari", "2. Atari-sized frames", "obs/s, higher is better"),
    ("qlearning", "3. Q-learning to round 500", "s, lower is better"),
    ("marl", "4. MARL inference", "s, lower is better"),
    ("broadcast", "5. Broadcast + gather 10 MB", "ms/round, lower is better"),
    ("object", "6. Object size, 16 workers", "ms/round, lower is better"),
]


def rows_of(values, prefix):
    """Cases of one workload, in the order they were measured: {row: {placement: value}}."""
    rows = {}
    for name, value in values.items():
        if not name.startswith(prefix + "_"):
            continue
        for placement in PLACEMENTS + ["paper_lf", "paper_ray"]:
            if name.endswith("_" + placement):
                row = name[: -len(placement) - 1]
                rows.setdefault(row, {})[placement] = value
    return {row: cells for row, cells in rows.items() if any(p in cells for p in PLACEMENTS)}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    values = {r["name"]: r["value"] for r in doc["results"]}
    panels = [(key, title, unit, rows_of(values, key)) for key, title, unit in WORKLOADS]
    panels = [p for p in panels if p[3]]
    if not panels:
        sys.stderr.write("paper_chart: no workload figures in %s\n" % argv[1])
        return 1
    columns = 2
    lines = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(lines, columns, figsize=(14, 4.2 * lines), squeeze=False)
    colors = plt.get_cmap("tab10")
    for index, (key, title, unit, rows) in enumerate(panels):
        ax = axes[index // columns][index % columns]
        width = 0.8 / len(PLACEMENTS)
        for r, (row, cells) in enumerate(rows.items()):
            for p, placement in enumerate(PLACEMENTS):
                if placement in cells and cells[placement] > 0:
                    ax.bar(r - 0.4 + (p + 0.5) * width, cells[placement], width,
                           color=colors(p), label=placement if r == 0 else None)
            for ref, style in (("paper_lf", "k-"), ("paper_ray", "r--")):
                if ref in cells:
                    ax.plot([r - 0.45, r + 0.45], [cells[ref]] * 2, style, linewidth=2,
                            label=("paper: Lingua Franca" if ref == "paper_lf" else "paper: Ray")
                            if r == 0 else None)
        ax.set_yscale("log")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([row[len(key) + 1:] for row in rows], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit, fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    for index in range(len(panels), lines * columns):
        axes[index // columns][index % columns].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("tagflow bench paper: the Lingua Franca paper's workloads, every placement")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fig.savefig(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
