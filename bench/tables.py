"""The benches' tables: one row a line, columns padded to their widest cell, floats to four
decimals (the scripts format their own figures; a raw float is a time in ms)."""

from __future__ import annotations


def print_table(header, rows) -> None:
    text = [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [list(header), *text]) for i in range(len(header))]
    print(" | ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in text:
        print(" | ".join(v.ljust(w) for v, w in zip(row, widths)))
