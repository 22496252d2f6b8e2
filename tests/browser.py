"""Debian's Chromium driven by Playwright, headless and offline-minded: the browser of the replay
page's and the play page's tests (``python3 bootstrap.py setup`` installs Chromium where it may).
Outside CI a machine without Chromium skips these tests, naming the command that installs it; in
CI (``CI=true``) a missing browser fails them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from optional_extras import IN_CI
from setup_script import bootstrap

CHROMIUM: Path = bootstrap.CHROMIUM
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
    """A launched browser for the tests of ``page``; without Chromium a skip naming the command
    that installs it (a failure in CI)."""
    if not CHROMIUM.exists():
        reason = f"the {page}'s browser test needs Chromium at {CHROMIUM}; install it with: "
        reason += bootstrap.CHROMIUM_INSTALL
        if IN_CI:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"the {page}'s browser test needs playwright: pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
