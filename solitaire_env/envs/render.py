"""Pictures of a position: a compact text table (``ansi``, :mod:`solitaire_env.engine.text`) and an RGB image
(``rgb_array``).

Both draw from the state JSON (``docs/state_format.md``) with face-down cards shown as backs, so a
rendering never shows more than a player at the table sees.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from solitaire_env.engine.text import render_text

__all__ = ["render_rgb", "render_text"]

# --- rgb_array ----------------------------------------------------------------------------------
#
# The picture is built from small cached sprites (card faces, card back, shadow, suit symbols), each
# drawn SUPERSAMPLE times larger and scaled down, so edges are smooth; text is drawn at full size by
# FreeType. Every size follows from the card width, which follows from the image width; the height
# follows from the variant and the width only, so one variant and width always give one image shape
# (a long pile is fanned tighter, never drawn taller). Face-down cards and the stock are drawn only as
# backs and counts: nothing a player cannot see is read from the state.



_SUPERSAMPLE = 4
_DEFAULT_WIDTH = {True: 1000, False: 720}  # keyed by "ten or more piles"
_RANK_LABEL = {"T": "10"}
_RED_INK = (200, 24, 36)
_BLACK_INK = (22, 22, 26)
_TEXT = (238, 243, 234)
_TEXT_DIM = (176, 206, 182)
_SLOT = (126, 178, 140)
_BACK = (28, 62, 150)
_BACK_LINE = (82, 122, 206)


def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return _font_cached(max(6, int(px)))


@functools.lru_cache(maxsize=64)
def _font_cached(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=px)  # scalable (Pillow >= 10.1 with FreeType)
    except (TypeError, OSError):  # pragma: no cover - old Pillow or no FreeType: fixed bitmap font
        return ImageFont.load_default()


def _cap_height(px: int) -> tuple[int, int]:
    """(top, bottom) of a capital letter drawn at y=0 with font size ``px``."""
    box = _font(px).getbbox("K")
    return int(box[1]), int(box[3])


def _suit_shape(draw: ImageDraw.ImageDraw, suit: str, x: float, y: float, size: float, fill) -> None:
    """A suit symbol filling the square (x, y, x+size, y+size); drawn with polygons and ellipses."""

    def pt(u: float, v: float) -> tuple[float, float]:
        return x + u * size, y + v * size

    def disc(u: float, v: float, r: float) -> None:
        draw.ellipse([pt(u - r, v - r), pt(u + r, v + r)], fill=fill)

    if suit == "d":
        draw.polygon([pt(0.5, 0.0), pt(0.88, 0.5), pt(0.5, 1.0), pt(0.12, 0.5)], fill=fill)
    elif suit == "h":
        disc(0.285, 0.3, 0.245)
        disc(0.715, 0.3, 0.245)
        draw.polygon([pt(0.05, 0.38), pt(0.5, 0.98), pt(0.95, 0.38), pt(0.5, 0.22)], fill=fill)
    elif suit == "s":
        disc(0.29, 0.6, 0.225)
        disc(0.71, 0.6, 0.225)
        draw.polygon([pt(0.5, 0.0), pt(0.07, 0.56), pt(0.5, 0.72), pt(0.93, 0.56)], fill=fill)
        draw.polygon([pt(0.5, 0.62), pt(0.3, 1.0), pt(0.7, 1.0)], fill=fill)
    else:  # clubs
        disc(0.5, 0.26, 0.215)
        disc(0.265, 0.6, 0.215)
        disc(0.735, 0.6, 0.215)
        disc(0.5, 0.55, 0.14)
        draw.polygon([pt(0.5, 0.5), pt(0.3, 1.0), pt(0.7, 1.0)], fill=fill)


def _downsample(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    return img.convert("RGBa").resize(size, Image.LANCZOS).convert("RGBA")


def _ink(card: str) -> tuple[int, int, int]:
    return _RED_INK if card[1] in "dh" else _BLACK_INK


@dataclass(frozen=True)
class _Layout:
    width: int
    height: int
    cw: int  # card width and height
    ch: int
    radius: int  # card corner radius
    index_px: int  # font size of a card's corner index
    off_up: int  # normal fan step below a face-up card, and below a face-down one
    off_down: int
    waste_fan: int  # horizontal fan step in the waste
    reserve_fan: int  # and in the reserve
    header_y: int
    header_px: int
    label_px: int
    top_y: int  # top row of cards
    stock_x: int
    waste_x: int
    reserve_x: int  # -1 without a reserve
    found_x: tuple[int, ...]
    cell_x: tuple[int, ...]  # free cells (FreeCell); empty without them
    tab_x: tuple[int, ...]
    tab_y: int
    tab_h: int  # room for one pile, top of its first card to bottom of its last


@functools.lru_cache(maxsize=16)
def _layout(variant_name: str, width: int) -> _Layout:
    from solitaire_env.engine.games import get_variant

    v = get_variant(variant_name)
    piles, nf, nc, has_reserve = v.piles, v.foundations, v.cells, v.reserve > 0
    # Top row in card widths: stock, waste (3 cards fanned), [reserve (a back and its top card)],
    # foundations; a margin at each side, gaps between foundations, wider gaps between groups. The fan
    # step in the waste shows a covered card's whole corner index ("10" and a suit sign).
    fan, res_fan, gap, margin, group = 0.62, 0.3, 0.14, 0.22, 0.3
    groups = 3 if has_reserve else 2  # gaps after the stock, after the waste (and the reserve)
    top_units = 2 * margin + (2 + nf + has_reserve) + 2 * fan + has_reserve * res_fan + groups * group
    top_units += gap * (nf - 1)
    if nc:  # FreeCell's top row instead: the free cells, a wider gap, the foundations (no stock or waste)
        top_units = 2 * margin + nc + nf + gap * (nc - 1 + nf - 1) + group
    tab_units = 2 * margin + piles + gap * (piles - 1)

    def needed(cw: int) -> int:  # the width that cards cw wide need, with the fan step their index needs
        m, g, grp, rf = round(margin * cw), round(gap * cw), round(group * cw), round(res_fan * cw)
        f = _waste_fan(cw)
        top = 2 * m + cw + grp + cw + 2 * f + grp + has_reserve * (cw + rf + grp) + nf * cw + (nf - 1) * g
        if nc:
            top = 2 * m + (nc + nf) * cw + (nc - 1 + nf - 1) * g + grp
        return max(top, 2 * m + piles * cw + (piles - 1) * g)

    cw = int(width / max(top_units, tab_units)) + 1
    while cw >= 24 and needed(cw) > width:
        cw -= 1
    if cw < 24:
        raise ValueError(f"width {width} is too small to draw {v.title}; use at least {needed(24)}")
    m, g, grp, rf = round(margin * cw), round(gap * cw), round(group * cw), round(res_fan * cw)
    index_px, f = _index_px(cw), _waste_fan(cw)
    ch = round(cw * 1.4)

    header_px = max(10, round(0.19 * cw))
    label_px = max(9, round(0.18 * cw))
    pad, _, cap_h = _index_geometry(cw, index_px)
    strip = pad + cap_h + pad  # the visible top of a fanned face-up card shows its corner index
    off_up = max(strip + 2, round(0.22 * ch))
    off_down = max(4, round(0.085 * ch))

    header_y = max(4, round(0.16 * cw))
    top_y = header_y + header_px + max(4, round(0.12 * cw))
    stock_x = m
    waste_x = stock_x + cw + grp
    reserve_x = waste_x + cw + 2 * f + grp if has_reserve else -1
    found_right = width - m
    found_x = tuple(found_right - cw - (nf - 1 - k) * (cw + g) for k in range(nf))
    cell_x = tuple(m + k * (cw + g) for k in range(nc))

    if piles >= 6:  # as wide as the top row, the gaps at most a third of a card
        tg = min((width - 2 * m - piles * cw) / (piles - 1), cw / 3)
        left = (width - piles * cw - (piles - 1) * tg) / 2
        tab_x = tuple(round(left + p * (cw + tg)) for p in range(piles))
    else:  # few piles: spread them evenly across the table
        tab_x = tuple(round((p + 0.5) * width / piles - cw / 2) for p in range(piles))
    label_h = label_px + 4
    tab_y = top_y + ch + label_h + max(6, round(0.22 * cw))
    if v.pile_capacity <= 16:
        # The longest pile of play: two face-down cards under fourteen face-up ones (Number Ten), or
        # three under thirteen (Rank and File). Anything longer is fanned tighter.
        tab_h = ch + 2 * off_down + 13 * off_up
    else:
        tab_h = ch + 19 * off_up  # Rainbow and FreeCell: 20 cards at full spacing; more squeezed in
    height = tab_y + tab_h + 3 + label_h + max(4, round(0.1 * cw))
    height += height % 2  # even sides suit video encoders
    return _Layout(width, height, cw, ch, max(3, round(0.075 * cw)), index_px, off_up, off_down, f, rf,
                   header_y, header_px, label_px, top_y, stock_x, waste_x, reserve_x, found_x, cell_x, tab_x, tab_y,
                   tab_h)


@functools.lru_cache(maxsize=8)
def _felt(width: int, height: int) -> Image.Image:
    # Flat felt: textures and gradients cost several times the bytes in PNGs, GIFs and videos.
    return Image.new("RGBA", (width, height), (32, 110, 60, 255))


def _card_mask(cw: int, ch: int, radius: int) -> Image.Image:
    s = _SUPERSAMPLE
    mask = Image.new("L", (cw * s, ch * s), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, cw * s - 1, ch * s - 1], radius=radius * s, fill=255)
    return mask


@functools.lru_cache(maxsize=8)
def _shadow(cw: int, ch: int, radius: int) -> tuple[Image.Image, int]:
    blur = max(1, cw // 40)
    pad = 2 * blur
    mask = Image.new("L", (cw + 2 * pad, ch + 2 * pad), 0)
    ImageDraw.Draw(mask).rounded_rectangle([pad, pad, pad + cw - 1, pad + ch - 1], radius=radius, fill=110)
    mask = mask.filter(ImageFilter.GaussianBlur(blur))
    img = Image.new("RGBA", mask.size, (0, 0, 0, 0))
    img.putalpha(mask)
    return img, pad


@functools.lru_cache(maxsize=8)
def _back(cw: int, ch: int, radius: int) -> Image.Image:
    s = _SUPERSAMPLE
    w, h = cw * s, ch * s
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([0, 0, w - 1, h - 1], radius=radius * s, fill=(250, 250, 246), outline=(120, 120, 120),
                        width=s)
    inset = max(2, round(0.07 * cw)) * s
    pattern = Image.new("RGBA", (w, h), _BACK + (255,))
    pd = ImageDraw.Draw(pattern)
    step = max(4, round(0.11 * cw)) * s
    for k in range(-h, w + h, step):  # a diamond lattice
        pd.line([(k, 0), (k + h, h)], fill=_BACK_LINE, width=max(1, s))
        pd.line([(k, h), (k + h, 0)], fill=_BACK_LINE, width=max(1, s))
    inner = Image.new("L", (w, h), 0)
    ImageDraw.Draw(inner).rounded_rectangle([inset, inset, w - 1 - inset, h - 1 - inset],
                                            radius=max(1, radius - inset // s) * s, fill=255)
    img.paste(pattern, (0, 0), inner)
    return _downsample(img, (cw, ch))


def _index_geometry(cw: int, px: int) -> tuple[int, int, int]:
    """(pad, cap top, cap height) of a corner index in font size px."""
    pad = max(1, round(0.05 * cw)) if px >= 9 else 1
    top, bottom = _cap_height(px)
    return pad, top, bottom - top


def _index_px(cw: int) -> int:
    return max(9, round(0.25 * cw))


def _waste_fan(cw: int) -> int:
    """Horizontal fan step that shows a covered card's whole corner index ("10" and a suit sign)."""
    return max(round(0.3 * cw), _index_width(cw, _index_px(cw), "10") + max(2, round(0.05 * cw)))


def _index_width(cw: int, px: int, rank: str) -> int:
    """Width of a corner index, from the card's left edge to the right of its suit sign."""
    _, _, cap_h = _index_geometry(cw, px)
    stroke = 1 if px >= 12 else 0
    return _index_x(cw) + int(_font(px).getlength(rank)) + stroke + _suit_gap(cw) + cap_h


def _index_x(cw: int) -> int:
    return max(2, round(0.06 * cw))


def _suit_gap(cw: int) -> int:
    return max(1, round(0.03 * cw))


@functools.lru_cache(maxsize=512)
def _face(card: str, cw: int, ch: int, radius: int, index_px: int) -> Image.Image:
    s = _SUPERSAMPLE
    w, h = cw * s, ch * s
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([0, 0, w - 1, h - 1], radius=radius * s, fill=(252, 252, 249), outline=(130, 130, 130),
                        width=s)
    ink = _ink(card)
    rank, suit = _RANK_LABEL.get(card[0], card[0]), card[1]
    # Corner index: rank then suit on one line, the capitals' top `pad` below the card's top.
    pad, cap_top, cap_h = _index_geometry(cw, index_px)
    font = _font(index_px * s)
    x0, y0 = _index_x(cw) * s, pad * s - cap_top * s
    stroke = 1 if index_px >= 12 else 0  # a little weight, as a card index has
    d.text((x0, y0), rank, font=font, fill=ink, stroke_width=stroke * s // 2, stroke_fill=ink)
    text_right = x0 + font.getlength(rank) + stroke * s // 2
    suit_size = cap_h * s
    _suit_shape(d, suit, text_right + _suit_gap(cw) * s, pad * s, suit_size, ink)
    # A large pip in the middle of the card.
    big = 0.46 * w
    _suit_shape(d, suit, (w - big) / 2, h * 0.56 - big / 2, big, ink)
    return _downsample(img, (cw, ch))


@functools.lru_cache(maxsize=16)
def _suit_sprite(suit: str, size: int, ink: tuple[int, int, int]) -> Image.Image:
    s = _SUPERSAMPLE
    img = Image.new("RGBA", (size * s, size * s), (0, 0, 0, 0))
    _suit_shape(ImageDraw.Draw(img), suit, 0, 0, size * s, ink + (255,))
    return _downsample(img, (size, size))


def _compact_index_px(lay: _Layout, step: float) -> int:
    """The largest corner-index font size whose line still shows in a fan step of ``step`` pixels."""
    px = lay.index_px
    while px > 7:
        pad, _, cap_h = _index_geometry(lay.cw, px)
        if pad + cap_h + 1 <= step:
            break
        px -= 1
    return px


class _Painter:
    def __init__(self, lay: _Layout) -> None:
        self.lay = lay
        self.img = _felt(lay.width, lay.height).copy()
        self.draw = ImageDraw.Draw(self.img)

    def card(self, x: int, y: int, card: str | None, index_px: int | None = None) -> None:
        """A card at (x, y): face up (``card`` like 'Qh') or a back (``None``)."""
        lay = self.lay
        shadow, pad = _shadow(lay.cw, lay.ch, lay.radius)
        d = max(1, lay.cw // 60)
        self.img.alpha_composite(shadow, (x - pad + d, y - pad + d))
        if card is None:
            sprite = _back(lay.cw, lay.ch, lay.radius)
        else:
            sprite = _face(card, lay.cw, lay.ch, lay.radius, index_px or lay.index_px)
        self.img.alpha_composite(sprite, (x, y))

    def slot(self, x: int, y: int, hint: str = "", hint_px: int = 0) -> None:
        """An empty place: a rounded outline, with a faint letter in it."""
        lay = self.lay
        self.draw.rounded_rectangle([x, y, x + lay.cw - 1, y + lay.ch - 1], radius=lay.radius, outline=_SLOT,
                                    width=max(1, lay.cw // 45))
        if hint:
            self.text(x + lay.cw // 2, y + lay.ch // 2, hint, hint_px or round(0.4 * lay.cw), _SLOT, anchor="mm")

    def text(self, x: int, y: int, text: str, px: int, fill=_TEXT, anchor: str = "mt") -> None:
        self.draw.text((x, y), text, font=_font(px), fill=fill, anchor=anchor)

    def label(self, x_center: int, y: int, text: str) -> None:
        self.text(x_center, y, text, self.lay.label_px)


def _pile_offsets(lay: _Layout, n: int, down: int) -> list[float]:
    """Top edges (relative to the pile's top) of a pile of n cards, the lowest ``down`` face down."""
    steps = [lay.off_down if k < down else lay.off_up for k in range(n - 1)]
    room = lay.tab_h - lay.ch
    total = sum(steps)
    scale = room / total if total > room else 1.0
    ys, y = [], 0.0
    for k in range(n):
        ys.append(y)
        if k < n - 1:
            y += steps[k] * scale
    return ys


def render_rgb(state: dict, width: int | None = None) -> np.ndarray:
    """The position as a picture: an ``H x W x 3`` ``uint8`` array.

    A green table with the stock (a back and its count), the waste (its top three cards fanned, and
    its count) or, in FreeCell, the four free cells (their cards, or empty slots, and a count of the
    free ones), in Rainbow the reserve (its backs and face-up top card, and its count) and a line with
    the base rank and redeals left, the foundations (top cards, or empty slots), and below them the
    tableau piles fanned downward, each with its card count. Face-down cards are drawn as backs and
    the stock only as a back and a count, so the picture shows what a player at the table sees.

    ``width`` defaults to 1000 pixels for the ten-pile games and 720 for the others; the height follows
    from the variant and the width alone, so every position of a game gives the same image shape.
    """
    from solitaire_env.engine.games import get_variant

    v = get_variant(state["variant"])
    if width is None:
        width = _DEFAULT_WIDTH[v.piles >= 10]
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width <= 0:
        raise ValueError(f"width must be a positive integer, got {width!r}")
    lay = _layout(v.name, int(width))
    paint = _Painter(lay)
    cw, ch = lay.cw, lay.ch

    def face_down(card: str) -> bool:
        return card.startswith("#")

    # Header: the game's name at the left; progress (and Rainbow's base rank and redeals) at the right.
    foundations = state["foundations"]
    on_found = sum(len(f) for f in foundations)
    paint.text(lay.stock_x, lay.header_y, v.title, lay.header_px, anchor="lt")
    info = f"foundations {on_found}/{v.n_cards}"
    base = state.get("base_rank")
    if v.base_from_deal and base:
        info = f"base rank {base}, redeals left {state.get('redeals_left', 0)}    " + info
    paint.text(lay.width - lay.stock_x, lay.header_y, info, lay.header_px, fill=_TEXT_DIM, anchor="rt")

    label_y = lay.top_y + ch + 3
    if lay.cell_x:
        # Free cells (FreeCell, which has no stock or waste): each card held, or an empty slot.
        cells = state["cells"]
        for x, card in zip(lay.cell_x, cells, strict=True):
            if card is None:
                paint.slot(x, lay.top_y)
            else:
                paint.card(x, lay.top_y, card)
        middle = (lay.cell_x[0] + lay.cell_x[-1] + cw) // 2
        paint.label(middle, label_y, f"free cells {sum(1 for c in cells if c is None)}")
    else:
        # Stock: a back and a count; never its cards.
        n_stock = len(state["stock"])
        if n_stock:
            paint.card(lay.stock_x, lay.top_y, None)
        else:  # empty: say so if the waste can still be turned over
            left = state.get("redeals_left", 0)  # None: unlimited (Klondike)
            redeal = (left is None or left > 0) and bool(state["waste"])
            paint.slot(lay.stock_x, lay.top_y, "redeal" if redeal else "", lay.label_px)
        paint.label(lay.stock_x + cw // 2, label_y, f"stock {n_stock}")

        # Waste: the top three cards fanned to the right, the playable one on top.
        waste = state["waste"]
        if waste:
            for k, card in enumerate(waste[-3:]):
                paint.card(lay.waste_x + k * lay.waste_fan, lay.top_y, card)
        else:
            paint.slot(lay.waste_x, lay.top_y)
        shown = min(3, len(waste))
        paint.label(lay.waste_x + (cw + max(0, shown - 1) * lay.waste_fan) // 2, label_y, f"waste {len(waste)}")

    # Reserve (Rainbow): its face-down cards as one back, its face-up top card fanned beside it.
    if lay.reserve_x >= 0:
        reserve = state.get("reserve") or []
        down = sum(1 for c in reserve if face_down(c))
        up = reserve[down:]
        items: list[str | None] = ([None] if down else []) + list(up[-(1 if down else 2):])
        if items:
            for k, card in enumerate(items):
                paint.card(lay.reserve_x + k * lay.reserve_fan, lay.top_y, card)
        else:
            paint.slot(lay.reserve_x, lay.top_y)
        paint.label(lay.reserve_x + (cw + max(0, len(items) - 1) * lay.reserve_fan) // 2, label_y,
                    f"reserve {len(reserve)}")

    # Foundations: the top card of each, or an empty slot showing the rank it starts from.
    start = base if (v.base_from_deal and base) else "A"
    for x, pile in zip(lay.found_x, foundations, strict=True):
        if pile:
            paint.card(x, lay.top_y, pile[-1])
        else:
            paint.slot(x, lay.top_y, _RANK_LABEL.get(start, start))

    # Tableau: piles fanned downward, face-down cards as backs, each pile's count under it.
    for x, pile in zip(lay.tab_x, state["tableau"], strict=True):
        n = len(pile)
        if not n:
            paint.slot(x, lay.tab_y)
            paint.label(x + cw // 2, lay.tab_y + ch + 3, "0")
            continue
        down = sum(1 for c in pile if face_down(c))
        ys = _pile_offsets(lay, n, down)
        up_steps = [ys[k + 1] - ys[k] for k in range(down, n - 1)]
        small_px = _compact_index_px(lay, min(up_steps)) if up_steps else lay.index_px
        for k, card in enumerate(pile):
            y = lay.tab_y + round(ys[k])
            if k < down:
                paint.card(x, y, None)
            else:
                paint.card(x, y, card, lay.index_px if k == n - 1 else small_px)
        paint.label(x + cw // 2, lay.tab_y + round(ys[-1]) + ch + 3, str(n))

    return np.asarray(paint.img.convert("RGB"), dtype=np.uint8).copy()
