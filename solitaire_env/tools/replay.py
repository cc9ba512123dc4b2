"""Watch a recorded episode: an animated GIF, a self-contained HTML page, or step by step in the terminal.

Every function takes a recording (a dict from :mod:`solitaire_env.tools.recording`, or the path of its JSON
file), replays it (so a file that does not match its env raises ``ValueError``) and draws each
position with :func:`solitaire_env.envs.render.render_rgb` or :func:`~solitaire_env.envs.render.render_text`.

- :func:`write_gif`: one frame per step (or every ``every``-th), a caption strip under the table,
  one shared 256-colour palette so unchanged pixels stay identical and the GIF stores only what moves.
- :func:`write_html`: one HTML file with no outside references. It holds the first frame as a PNG and,
  for each step, a PNG of only the pixels that changed (transparent elsewhere), which inline
  JavaScript paints onto a canvas; the page shows it in ``<img id="frame">``. Buttons ``prev``,
  ``next``, ``play``, a slider, the step counter ``<span id="step">``, the move in ``<div id="move">``;
  keys: arrows, space, Home, End. Opened as ``page.html#autotest`` it clicks ``next``, ``prev`` and
  ``play`` by itself and writes what it saw into ``<pre id="autotest-result">`` (used by the tests).
  The page, with slots the function fills in, is the package data file ``data/replay.html``.
- :func:`ansi_replay`: Enter = next, ``b`` = back, a number = go to that step, ``q`` = quit.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import sys
from importlib import resources
from typing import TextIO

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from solitaire_env.engine.game import Game
from solitaire_env.envs.render import render_rgb, render_text
from solitaire_env.tools.recording import as_recording, replay

_CAPTION_BG = (18, 44, 28)
_CAPTION_FG = (238, 243, 234)


def _captions(rec: dict) -> tuple[list[dict], list[str]]:
    """The replayed states and one caption per state: 'start', then 'step i/n: t3 t7  9h 8s from ...'."""
    from solitaire_env.engine.notation import describe, notation

    states, moves = replay(rec)
    n = len(moves)
    captions = [f"start ({_title(rec)})"]
    for i, move in enumerate(moves):
        game = Game.from_state(states[i])
        captions.append(f"step {i + 1}/{n}: {notation(move, game, states[i])}   {describe(move, game, states[i])}")
    return states, captions


def _title(rec: dict) -> str:
    title = Game.from_state(rec["start_state"]).variant.title
    deal = f"deal {rec['seed']}" if rec["seed"] is not None else "from a saved position"
    who = f", {rec['agent']}" if rec.get("agent") else ""
    return f"{title}, {deal}{who}"


def _result(rec: dict) -> str:
    total = Game.from_state(rec["start_state"]).variant.n_cards
    final = rec["final_foundation_cards"]
    return f"{final}/{total} on the foundations" + (" - won" if final == total else "")


def _pick(n_states: int, every: int, max_frames: int | None) -> list[int]:
    """Indices of the states to draw: every ``every``-th (at most ``max_frames``), always the first and last."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a positive integer, got {every!r}")
    if max_frames is not None:
        if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 2:
            raise ValueError(f"max_frames must be an integer of at least 2, got {max_frames!r}")
        every = max(every, math.ceil((n_states - 1) / (max_frames - 1)))
    picked = list(range(0, n_states, every))
    if picked[-1] != n_states - 1:
        picked.append(n_states - 1)
    return picked


def _caption_strip(img: Image.Image, text: str) -> Image.Image:
    w, h = img.size
    px = max(14, round(w / 48))
    bar = px + 2 * max(4, px // 2)
    out = Image.new("RGB", (w, h + bar), _CAPTION_BG)
    out.paste(img, (0, 0))
    draw = ImageDraw.Draw(out)
    try:
        font = ImageFont.load_default(size=px)
        ellipsis = "…"
    except TypeError:  # Pillow 10.0 (no size argument): its bitmap font, Latin-1 only
        font = ImageFont.load_default()
        ellipsis = "..."
    while len(text) > 8 and draw.textlength(text, font=font) > w - 2 * px:
        text = text[: -1 - len(ellipsis)] + ellipsis
    draw.text((px, h + bar // 2), text, font=font, fill=_CAPTION_FG, anchor="lm")
    return out


def write_gif(recording: dict | str | os.PathLike, out_path: str | os.PathLike, fps: float = 4,
              width: int | None = None, every: int = 1, max_frames: int | None = None,
              caption: bool = True, hold_last: float = 2.0) -> int:
    """Write the episode as an animated GIF; returns the number of frames.

    ``width``: picture width (default: the renderer's, 1000 px for the ten-pile games, 720 for
    Rainbow); ``every``: draw every n-th step only, ``max_frames``: at most that many frames (both
    keep the first and last position); ``caption``: a strip under the table with the step and move;
    ``hold_last``: seconds the last frame stays before the loop starts again.
    """
    if not (isinstance(fps, (int, float)) and not isinstance(fps, bool) and 0 < fps <= 100):
        raise ValueError(f"fps must be a number in (0, 100], got {fps!r}")
    rec = as_recording(recording)
    states, captions = _captions(rec)
    picked = _pick(len(states), every, max_frames)

    def picture(i: int) -> Image.Image:
        img = Image.fromarray(render_rgb(states[i], width=width))
        if caption:
            last = i == len(states) - 1 and i > 0
            img = _caption_strip(img, captions[i] + (f"   [{_result(rec)}]" if last else ""))
        return img

    # One palette for all frames, made from a few of them side by side: an unchanged pixel maps to the
    # same index in every frame, so the encoder (optimize=True) stores each frame as the box around
    # what changed with every unchanged pixel in it transparent. 255 colours leave an index free for
    # that transparency. Frames are made one at a time (the encoder keeps only palette images).
    sample = [picture(picked[k]) for k in sorted({0, len(picked) // 3, 2 * len(picked) // 3, len(picked) - 1})]
    w, h = sample[0].size
    sheet = Image.new("RGB", (w * len(sample), h))
    for k, img in enumerate(sample):
        sheet.paste(img, (k * w, 0))
    palette = sheet.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    first = sample[0].quantize(palette=palette, dither=Image.Dither.NONE)
    rest = (picture(i).quantize(palette=palette, dither=Image.Dither.NONE) for i in picked[1:])
    step_ms = round(1000 / fps)
    durations = [step_ms] * len(picked)
    durations[-1] = max(step_ms, round(1000 * hold_last))
    first.save(out_path, format="GIF", save_all=True, append_images=rest, duration=durations, loop=0,
               optimize=True, disposal=1)
    return len(picked)


def _png_b64(img: Image.Image) -> str:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _patch(prev: np.ndarray, cur: np.ndarray) -> list | None:
    """[x, y, png data URL] of the pixels that differ from ``prev`` (transparent elsewhere), or None."""
    changed = np.any(prev != cur, axis=2)
    if not changed.any():
        return None
    rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
    y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    mask = changed[y0:y1, x0:x1]
    rgba = np.zeros((y1 - y0, x1 - x0, 4), dtype=np.uint8)
    rgba[..., :3] = np.where(mask[..., None], cur[y0:y1, x0:x1], 0)
    rgba[..., 3] = mask * 255
    # No mode argument: a (h, w, 4) uint8 array is RGBA by its shape, and Pillow 11.3 deprecates mode=.
    return [int(x0), int(y0), _png_b64(Image.fromarray(rgba))]


def _page_template() -> str:
    """The HTML page with its __NAME__ slots (package data, beside the code that fills it)."""
    return (resources.files("solitaire_env.tools") / "data" / "replay.html").read_text(encoding="utf-8")


def _js(value) -> str:
    """JSON safe to put inside a <script> element."""
    return json.dumps(value, ensure_ascii=True).replace("</", "<\\/")


def write_html(recording: dict | str | os.PathLike, out_path: str | os.PathLike, width: int | None = None,
               fps: float = 4) -> int:
    """Write a single self-contained HTML page that steps through the episode; returns its size in bytes.

    ``width``: picture width (default: the renderer's); ``fps``: steps per second when playing.
    """
    if not (isinstance(fps, (int, float)) and not isinstance(fps, bool) and 0 < fps <= 100):
        raise ValueError(f"fps must be a number in (0, 100], got {fps!r}")
    rec = as_recording(recording)
    states, captions = _captions(rec)
    prev = render_rgb(states[0], width=width)
    h, w = prev.shape[:2]
    key = _png_b64(Image.fromarray(prev))
    patches: list = [None]
    for state in states[1:]:
        cur = render_rgb(state, width=width)
        patches.append(_patch(prev, cur))
        prev = cur
    subtitle = f"{len(states) - 1} steps; result: {_result(rec)}; env {rec['env_id']}"
    page = _page_template()
    for name, value in (
        ("__TITLE__", html.escape(_title(rec))),
        ("__SUBTITLE__", html.escape(subtitle)),
        ("__N__", str(len(states) - 1)),
        ("__W__", str(w)),
        ("__H__", str(h)),
        ("__CAPTION0__", html.escape(captions[0])),
        ("__FPS__", repr(float(fps))),
        ("__CAPTIONS__", _js(captions)),
        ("__PATCHES__", _js(patches)),
        ("__KEY__", key),  # last: the data could contain nothing else, but keep the big strings for the end
    ):
        page = page.replace(name, value)
    data = page.encode("utf-8")
    with open(out_path, "wb") as f:
        f.write(data)
    return len(data)


def ansi_replay(recording: dict | str | os.PathLike, stdin: TextIO | None = None, stdout: TextIO | None = None,
                color: bool | None = None) -> int:
    """Step through the episode in the terminal. Enter = next, ``b`` = back, a number = that step,
    ``q`` (or end of input) = quit. Returns an exit code: 0, or 2 if the recording is not valid."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout  # looked up now, so redirection works
    if color is None:
        isatty = getattr(stdout, "isatty", None)
        color = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
    try:
        rec = as_recording(recording)
        states, captions = _captions(rec)
    except (ValueError, OSError) as exc:
        stdout.write(f"error: {exc}\n")
        return 2
    n = len(states) - 1
    stdout.write(f"{_title(rec)}: {n} steps, result {_result(rec)}.\n"
                 "Enter = next step, b = back, a number = go to that step, q = quit.\n")
    i, redraw = 0, True
    while True:
        if redraw:
            stdout.write(f"\n{captions[i]}\n{render_text(states[i], color=bool(color))}\n")
            if i == n:
                stdout.write(f"(end of the recording: {_result(rec)}; b = back, q = quit)\n")
        redraw = True
        stdout.write("> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            stdout.write("\n")
            return 0
        cmd = line.strip().lower()
        if cmd in ("q", "quit", "exit"):
            return 0
        if cmd in ("", "n", "next"):
            if i < n:
                i += 1
        elif cmd in ("b", "back", "p", "prev"):
            if i > 0:
                i -= 1
        elif cmd.isdigit():
            i = min(int(cmd), n)
        else:
            stdout.write(f"unknown command {line.strip()!r}: Enter = next, b = back, a number = step, q = quit\n")
            redraw = False


__all__ = ["ansi_replay", "write_gif", "write_html"]
