"""The HTML replay in a real browser: headless Chromium clicks Next, Prev and Play (no Selenium needed).

The page, opened as ``page.html#autotest``, clicks the buttons itself once its frames are loaded and
writes what it saw into ``<pre id="autotest-result">``; ``chromium --dump-dom`` prints the page's DOM
after running it. Skipped when no Chromium is installed (Debian/Ubuntu package ``chromium``).
"""

from __future__ import annotations

import json
import re
import subprocess

from solitaire_env.envs.render import render_rgb
from solitaire_env.tools.recording import record_episode, replay_states
from solitaire_env.tools.replay import write_html


def _fnv1a_rgb(pixels) -> int:
    h = 0x811C9DC5
    for byte in pixels.tobytes():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def test_next_button_changes_the_frame(tmp_path, browser):
    data = record_episode("Rainbow-v0", seed=4, max_steps=12)
    width = 360
    page = tmp_path / "replay.html"
    write_html(data, page, width=width)
    cmd = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
        "--dump-dom", page.as_uri() + "#autotest",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="autotest-result">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no autotest result in the page (exit {proc.returncode}); stderr tail:\n{proc.stderr[-2000:]}"
    result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert "error" not in result, result
    assert result["steps"] == len(data["actions"]) == 12
    assert result["start_step"] == "0"
    assert result["after_next_step"] == "1"
    assert result["frame_changed"] is True  # the picture shown after Next is another one
    assert result["after_prev_step"] == "0"
    assert result["frame_restored"] is True  # and Prev brings the first one back
    assert int(result["after_play_step"]) >= 1  # Play advances by itself
    # The page rebuilds each picture from the first one and the pixels that change at each step; the last
    # one must be exactly what the renderer draws for the final position.
    final = render_rgb(replay_states(data)[-1], width=width)
    assert result["last_fnv"] == _fnv1a_rgb(final)
