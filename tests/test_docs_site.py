"""The documentation site: ``mkdocs build --strict`` is clean, and the leaderboard renders in a real browser.

The site is built once per session (``mkdocs.yml`` at the repository root, the ``docs`` extra). The
browser test copies the built Baselines page beside itself with a short script appended, which lays
the page out in headless Chromium and writes what it measured of the leaderboard table into
``<pre id="probe">``; ``chromium --dump-dom`` prints the DOM after running it. Skipped where mkdocs
(the ``docs`` extra) or Chromium is missing; CI has both.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GAMES = ["Rank and File", "Number Ten", "Rainbow", "FreeCell", "Klondike"]

# Runs in the page once it has loaded: the leaderboard is the first table after the "Leaderboard" heading.
PROBE = """
<pre id="probe"></pre>
<script>
window.addEventListener("load", () => {
  const out = {};
  try {
    const heading = document.getElementById("leaderboard");
    let node = heading;
    while (node && !(node.querySelector && (node.tagName === "TABLE" || node.querySelector("table")))) {
      node = node.nextElementSibling;
    }
    const table = node && (node.tagName === "TABLE" ? node : node.querySelector("table"));
    out.heading = heading ? heading.textContent.trim() : null;
    if (table) {
      const box = table.getBoundingClientRect();
      out.width = box.width;
      out.height = box.height;
      out.display = getComputedStyle(table).display;
      out.visibility = getComputedStyle(table).visibility;
      out.header = [...table.querySelectorAll("thead th")].map(c => c.textContent.trim());
      out.rows = [...table.querySelectorAll("tbody tr")].map(r => ({
        cells: [...r.querySelectorAll("td")].map(c => c.textContent.trim()),
        height: r.getBoundingClientRect().height,
      }));
    }
  } catch (e) {
    out.error = String(e);
  }
  document.getElementById("probe").textContent = JSON.stringify(out);
});
</script>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return out


def _markdown_leaderboard() -> list[list[str]]:
    """The leaderboard's rows in docs/baselines.md, as the cells' text (no backticks, no bold)."""
    text = (ROOT / "docs/baselines.md").read_text(encoding="utf-8").split("## Leaderboard", 1)[1]
    lines = [line for line in text.split("\n\n", 2)[1].splitlines() if line.startswith("|")]
    return [[re.sub(r"[`*]", "", c).strip() for c in line.strip("|").split("|")] for line in lines]


def test_the_site_builds_strict_with_every_page(site):
    for page in ("index.html", "getting-started/index.html", "environments/index.html", "baselines/index.html",
                 "benchmarks/index.html", "winnability/index.html", "changelog/index.html",
                 "api/envs/index.html", "api/agents/index.html"):
        assert (site / page).is_file(), f"{page} is missing from the built site"
    # The API reference comes from the docstrings: the env base class and an agent are documented there.
    assert "SolitaireEnv" in (site / "api/envs/index.html").read_text(encoding="utf-8")
    assert "HeuristicAgent" in (site / "api/agents/index.html").read_text(encoding="utf-8")
    # docs/sphinx_roles.py writes the docstrings' Sphinx roles as code, so none shows as ":class:`...`".
    for page in sorted(site.glob("api/*/index.html")):
        assert ":class:" not in page.read_text(encoding="utf-8"), f"a Sphinx role left as text in {page}"
    # The changelog page includes CHANGELOG.md.
    assert "Unreleased" in (site / "changelog/index.html").read_text(encoding="utf-8")


def test_the_leaderboard_table_renders_in_a_browser(site, tmp_path, browser):
    built = site / "baselines/index.html"
    probe = built.with_name("probe.html")
    probe.write_text(built.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    cmd = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2000",
        "--virtual-time-budget=10000", "--dump-dom", probe.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found and found.group(1), f"no probe result in the page (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
    result = json.loads(html.unescape(found.group(1)))
    assert "error" not in result, result
    assert result["heading"].startswith("Leaderboard")
    assert result["display"] != "none" and result["visibility"] == "visible", result
    assert result["width"] > 300 and result["height"] > 100, result  # laid out, not collapsed
    assert result["header"] == ["agent", *GAMES]
    expected = _markdown_leaderboard()
    assert [row["cells"] for row in result["rows"]] == expected[2:]  # after the header and the rule
    # random, heuristic, search, plan, plan-sliced, pretrained, MaskablePPO, JAX PPO, ceiling
    assert len(result["rows"]) == 9
    assert all(row["height"] > 0 for row in result["rows"])
