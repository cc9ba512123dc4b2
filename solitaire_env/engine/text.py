"""The position as a compact text table: what ``Game.__str__``, ``render_mode="ansi"`` and ``play`` print.

It reads the state JSON (``docs/state_format.md``) and shows face-down cards as ``##``, so it never
shows more than a player at the table sees.
"""

from __future__ import annotations

from solitaire_env.engine.games import get_variant

_RED = "\x1b[31m"
_RESET = "\x1b[0m"


def _card(text: str, color: bool) -> str:
    if text.startswith("#"):
        return "##"
    if color and text[1] in "dh":
        return f"{_RED}{text}{_RESET}"
    return text


def render_text(state: dict, color: bool = False) -> str:
    """A few lines: foundations, stock/waste (and reserve, or free cells), then one line per tableau pile."""
    found = " ".join(_card(f[-1], color) if f else "--" for f in state["foundations"])
    lines = [f"{state['variant']}  foundations: {found}"]
    # What the game has, as its variant declares it (not guessed from the state's fields).
    v = get_variant(state["variant"])
    if v.stock_capacity:
        waste = state["waste"]
        shown_waste = " ".join(_card(c, color) for c in waste[-3:]) if waste else "--"
        lines.append(f"stock: {len(state['stock'])} cards  waste ({len(waste)}): {shown_waste}")
    if v.cells:
        lines.append("cells: " + " ".join(_card(c, color) if c else "--" for c in state["cells"]))
    extras = []
    if v.reserve:
        reserve = state.get("reserve") or []
        top = _card(reserve[-1], color) if reserve else "--"
        extras.append(f"reserve: {len(reserve)} cards, top {top}")
    if v.base_from_deal:
        extras.append(f"base rank: {state['base_rank']}")
    if v.redeals:
        extras.append(f"redeals left: {state['redeals_left']}")
    if extras:
        lines.append("  ".join(extras))
    for p, pile in enumerate(state["tableau"]):
        lines.append(f"t{p}: " + (" ".join(_card(c, color) for c in pile) if pile else "(empty)"))
    return "\n".join(lines)
