"""Pictures of a position: a compact text table (``ansi``) and an RGB image (``rgb_array``).

Both draw from the STATE_FORMAT.md JSON with face-down cards shown as backs, so a rendering never
shows more than a player at the table sees.
"""

from __future__ import annotations

_RED = "\x1b[31m"
_RESET = "\x1b[0m"


def _card(text: str, color: bool) -> str:
    if text.startswith("#"):
        return "##"
    if color and text[1] in "dh":
        return f"{_RED}{text}{_RESET}"
    return text


def render_text(state: dict, color: bool = False) -> str:
    """A few lines: foundations, stock/waste (and reserve), then one line per tableau pile."""
    found = " ".join(_card(f[-1], color) if f else "--" for f in state["foundations"])
    waste = state["waste"]
    shown_waste = " ".join(_card(c, color) for c in waste[-3:]) if waste else "--"
    lines = [
        f"{state['variant']}  foundations: {found}",
        f"stock: {len(state['stock'])} cards  waste ({len(waste)}): {shown_waste}",
    ]
    if state.get("base_rank"):
        reserve = state.get("reserve") or []
        top = _card(reserve[-1], color) if reserve else "--"
        lines.append(f"reserve: {len(reserve)} cards, top {top}  base rank: {state['base_rank']}  "
                     f"redeals left: {state['redeals_left']}")
    for p, pile in enumerate(state["tableau"]):
        lines.append(f"t{p}: " + (" ".join(_card(c, color) for c in pile) if pile else "(empty)"))
    return "\n".join(lines)
