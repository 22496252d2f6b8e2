"""Debian's Chromium driven by Playwright, headless and offline-minded: the browser of the replay
page's and the play page's tests (``.ci/run`` installs Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: A fresh, quiet, offline-minded headless browser.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
#: Every card name in the rendered page: its text and every attribute (tooltips, labels).
RENDERED_TEXT = """() => {
    const app = document.getElementById("app");
    let text = app.innerText;
    for (const node of app.querySelectorAll("*")) {
        for (const attribute of node.attributes) text += "\\n" + attribute.value;
    }
    return text;
}"""


@contextmanager
def chromium(page: str) -> Iterator[Any]:
    """A launched browser for the tests of ``page`` (a failure naming what is missing, never a skip)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"the {page}'s browser test needs Chromium at {CHROMIUM}: install Debian's package "
            "(apt-get update && apt-get install -y chromium; .ci/run does this)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"the {page}'s browser test needs playwright: pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
