"""Replay output without Pillow deprecation warnings, on every Pillow from 10.0 (issue #15 point 14)."""

from __future__ import annotations

import warnings

import pytest
from PIL import Image, ImageFont

from solitaire_env.recording import record_episode
from solitaire_env.replay import write_gif, write_html


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
