"""Turn fates as people read them: one line per run of turns that share a fate and a reason.

Used by `flask show --context`; the viewer lays the same fates out as a table.
"""


def fate_lines(plan) -> list[str]:
    """One line per run of turns that share a fate and a reason, oldest first."""
    history = plan.history
    first = history.fates[0].seq if history.fates else 0
    rows = [(seq, *plan.fate_of(seq), None) for seq in range(first)]
    read = sorted([*history.fates, *(m for m in history.marks.values() if m.seq >= first)],
                  key=lambda f: f.seq)
    rows += [(f.seq, f.fate, f.reason, f.tokens if f.messages else None) for f in read]
    lines, start = [], 0
    for i, (seq, fate, reason, tokens) in enumerate(rows):
        if i + 1 < len(rows) and rows[i + 1][1:3] == (fate, reason) and tokens is None:
            continue
        first = rows[start][0]
        span = f"turn {seq + 1}" if first == seq else f"turns {first + 1}–{seq + 1}"
        size = f" ({tokens} tokens)" if tokens is not None else ""
        lines.append(f"  {span:<14} {fate:<10} {reason}{size}")
        start = i + 1
    return lines
