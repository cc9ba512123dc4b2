"""Replay output without Pillow deprecation warnings, its HTML page as package data, and the ``video``
extra (issue #15 point 14, issue #16 point 10)."""

from __future__ import annotations

import re
import warnings
from importlib import resources
from pathlib import Path

import pytest
from PIL import Image, ImageFont

from solitaire_env.tools import replay
from solitaire_env.tools.recording import record_episode
from solitaire_env.tools.replay import write_gif, write_html

ROOT = Path(__file__).resolve().parent.parent


def test_gif_and_html_replays_raise_no_deprecation_warning(tmp_path):
    rec = record_episode("Rainbow-v0", seed=2, max_steps=12)
    with warnings.catch_warnings():
        # Pillow 11.3 deprecated Image.fromarray(..., mode): any such call must fail here, not warn.
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", PendingDeprecationWarning)
        frames = write_gif(rec, tmp_path / "ep.gif")
        size = write_html(rec, tmp_path / "ep.html")
    with Image.open(tmp_path / "ep.gif") as gif:
        assert gif.n_frames == frames == 13
    assert size == (tmp_path / "ep.html").stat().st_size


def test_the_html_page_is_package_data_with_every_slot_filled(tmp_path):
    page = resources.files("solitaire_env.tools") / "data" / "replay.html"
    template = page.read_text(encoding="utf-8")
    slots = set(re.findall(r"__[A-Z0-9]+__", template))
    assert slots == {"__TITLE__", "__SUBTITLE__", "__N__", "__W__", "__H__", "__CAPTION0__", "__FPS__",
                     "__CAPTIONS__", "__PATCHES__", "__KEY__"}
    assert "<!DOCTYPE" not in Path(replay.__file__).read_text(encoding="utf-8")  # not a second copy in the code
    write_html(record_episode("Rainbow-v0", seed=2, max_steps=5), tmp_path / "ep.html")
    html = (tmp_path / "ep.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="next"' in html
    assert not re.findall(r"__[A-Z0-9]+__", html)


def test_pyproject_ships_the_page_and_offers_the_video_extra():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["solitaire_env.tools"]
    assert any(Path("data/replay.html").match(p) for p in patterns)
    assert any(req.startswith("moviepy") for req in project["project"]["optional-dependencies"]["video"])


def test_captions_cut_short_in_pillow_10_0s_bitmap_font(monkeypatch, tmp_path):
    if not hasattr(ImageFont, "load_default_imagefont"):
        pytest.skip("this Pillow's load_default() is the bitmap font already")

    def load_default(size: float | None = None) -> ImageFont.ImageFont:  # as in Pillow 10.0
        if size is not None:
            raise TypeError("load_default() got an unexpected keyword argument 'size'")
        return ImageFont.load_default_imagefont()

    monkeypatch.setattr(ImageFont, "load_default", load_default)
    # Narrow frames: the captions are cut, and "…" is not Latin-1, which the bitmap font needs.
    assert write_gif(record_episode("Rainbow-v0", seed=2, max_steps=6), tmp_path / "ep.gif", width=300) == 7
