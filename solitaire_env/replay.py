"""Watch a recorded episode: an animated GIF, a self-contained HTML page, or step by step in the terminal.

Every function takes a recording (a dict from :mod:`solitaire_env.recording`, or the path of its JSON
file), replays it (so a file that does not match its env raises ``ValueError``) and draws each
position with :func:`solitaire_env.render.render_rgb` or :func:`~solitaire_env.render.render_text`.

- :func:`write_gif`: one frame per step (or every ``every``-th), a caption strip under the table,
  one shared 256-colour palette so unchanged pixels stay identical and the GIF stores only what moves.
- :func:`write_html`: one HTML file with no outside references. It holds the first frame as a PNG and,
  for each step, a PNG of only the pixels that changed (transparent elsewhere), which inline
  JavaScript paints onto a canvas; the page shows it in ``<img id="frame">``. Buttons ``prev``,
  ``next``, ``play``, a slider, the step counter ``<span id="step">``, the move in ``<div id="move">``;
  keys: arrows, space, Home, End. Opened as ``page.html#autotest`` it clicks ``next``, ``prev`` and
  ``play`` by itself and writes what it saw into ``<pre id="autotest-result">`` (used by the tests).
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
from typing import TextIO

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from solitaire_env.game import Game
from solitaire_env.recording import as_recording, replay
from solitaire_env.render import render_rgb, render_text

_CAPTION_BG = (18, 44, 28)
_CAPTION_FG = (238, 243, 234)


def _captions(rec: dict) -> tuple[list[dict], list[str]]:
    """The replayed states and one caption per state: 'start', then 'step i/n: t3 t7  9h 8s from ...'."""
    from solitaire_env.play import describe, notation

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


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__TITLE__</title>
<style>
body { background: #173a24; color: #eef3ea; font: 15px/1.4 system-ui, sans-serif; margin: 16px; }
h1 { font-size: 18px; margin: 0 0 8px; font-weight: 600; }
.bar { max-width: __W__px; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
button { font: inherit; padding: 4px 14px; border-radius: 6px; border: 1px solid #6a9; background: #2d6a44;
         color: #fff; cursor: pointer; min-width: 5em; }
button:disabled { opacity: 0.5; cursor: default; }
#slider { flex: 1; min-width: 200px; max-width: __W__px; }
#frame { display: block; max-width: 100%; height: auto; border-radius: 6px; }
#move { font-family: ui-monospace, monospace; min-height: 1.4em; }
.dim { color: #b0ceb6; }
</style>
</head>
<body>
<h1>__TITLE__</h1>
<div class="dim">__SUBTITLE__</div>
<div class="bar">
  <button id="prev" type="button" title="previous step (left arrow)">&#9664; Prev</button>
  <button id="play" type="button" title="play / pause (space)">Play</button>
  <button id="next" type="button" title="next step (right arrow)">Next &#9654;</button>
  <span>step <span id="step">0</span> / <span id="steps">__N__</span></span>
  <input id="slider" type="range" min="0" max="__N__" value="0" aria-label="step">
</div>
<div id="move">__CAPTION0__</div>
<img id="frame" width="__W__" height="__H__" alt="the table at the shown step" src="__KEY__">
<script>
"use strict";
const PATCHES = __PATCHES__;
const CAPTIONS = __CAPTIONS__;
const FPS = __FPS__;
(function () {
  const N = PATCHES.length - 1;
  const frame = document.getElementById("frame"), stepEl = document.getElementById("step");
  const moveEl = document.getElementById("move"), slider = document.getElementById("slider");
  const prevB = document.getElementById("prev"), nextB = document.getElementById("next");
  const playB = document.getElementById("play");
  const canvas = document.createElement("canvas");
  canvas.width = __W__; canvas.height = __H__;
  const ctx = canvas.getContext("2d");
  let key = null, images = [], drawn = -1, shown = 0, timer = null, ready = false;

  function load(src) {
    return new Promise(function (ok, fail) {
      const img = new Image();
      img.onload = function () { ok(img); };
      img.onerror = function () { fail(new Error("a frame did not load")); };
      img.src = src;
    });
  }
  function paint(i) {  // bring the canvas to step i: from the first frame, add each step's changed pixels
    if (i < drawn || drawn < 0) {
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(key, 0, 0);
      drawn = 0;
    }
    while (drawn < i) {
      drawn += 1;
      const p = PATCHES[drawn];
      if (p) { ctx.drawImage(images[drawn], p[0], p[1]); }
    }
  }
  function show(i) {
    i = Math.max(0, Math.min(N, i));
    if (ready) { paint(i); frame.src = canvas.toDataURL("image/png"); }
    shown = i;
    stepEl.textContent = String(i);
    slider.value = String(i);
    moveEl.textContent = CAPTIONS[i];
    prevB.disabled = i === 0;
    nextB.disabled = i === N;
    if (i === N) { stop(); }
  }
  function stop() { if (timer !== null) { clearInterval(timer); timer = null; } playB.textContent = "Play"; }
  function play() {
    if (timer !== null) { stop(); return; }
    if (shown === N) { show(0); }
    playB.textContent = "Pause";
    timer = setInterval(function () { show(shown + 1); }, 1000 / FPS);
  }
  prevB.addEventListener("click", function () { stop(); show(shown - 1); });
  nextB.addEventListener("click", function () { stop(); show(shown + 1); });
  playB.addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); show(parseInt(slider.value, 10)); });
  document.addEventListener("keydown", function (e) {
    if (e.target === slider) { return; }
    if (e.key === "ArrowLeft") { prevB.click(); } else if (e.key === "ArrowRight") { nextB.click(); }
    else if (e.key === " ") { e.preventDefault(); playB.click(); }
    else if (e.key === "Home") { stop(); show(0); } else if (e.key === "End") { stop(); show(N); }
    else { return; }
  });
  [prevB, nextB, playB, slider].forEach(function (el) { el.disabled = true; });

  function fnv(px) {  // FNV-1a (32 bit) over the R, G, B bytes of RGBA pixels
    let h = 0x811c9dc5;
    for (let k = 0; k < px.length; k += 1) {
      if ((k & 3) === 3) { continue; }
      h = Math.imul(h ^ px[k], 0x01000193) >>> 0;
    }
    return h;
  }
  function autotest() {
    const out = document.createElement("pre");
    out.id = "autotest-result";
    document.body.appendChild(out);
    const r = { steps: N, start_step: stepEl.textContent };
    const src0 = frame.src;
    nextB.click();
    r.after_next_step = stepEl.textContent;
    r.frame_changed = frame.src !== src0;
    const src1 = frame.src;
    prevB.click();
    r.after_prev_step = stepEl.textContent;
    r.frame_restored = frame.src === src0;
    r.next_prev_differ = src1 !== src0;
    show(N);  // the last picture, built from the first and every step's changes: its pixels' checksum
    r.last_fnv = fnv(ctx.getImageData(0, 0, canvas.width, canvas.height).data);
    show(0);
    out.textContent = JSON.stringify(r);
    playB.click();
    setTimeout(function () {
      r.after_play_step = stepEl.textContent;
      stop();
      out.textContent = JSON.stringify(r);
    }, Math.ceil(2500 / FPS));
  }
  Promise.all([load(frame.src)].concat(PATCHES.slice(1).map(function (p) {
    return p ? load(p[2]) : Promise.resolve(null);
  })))
    .then(function (loaded) {
      key = loaded[0];
      images = [null].concat(loaded.slice(1));
    })
    .then(function () {
      ready = true;
      [prevB, nextB, playB, slider].forEach(function (el) { el.disabled = false; });
      show(0);
      if (location.hash === "#autotest") { autotest(); }
    })
    .catch(function (err) {
      moveEl.textContent = "could not load the frames: " + err;
      if (location.hash === "#autotest") {
        const out = document.createElement("pre"); out.id = "autotest-result";
        out.textContent = JSON.stringify({ error: String(err) }); document.body.appendChild(out);
      }
    });
})();
</script>
</body>
</html>
"""


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
    page = _HTML
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
