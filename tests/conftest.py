"""What every test shares: in CI a skipped test is a failure (see ``optional_extras.py``).

CI installs every optional extra and has a C compiler, so nothing should skip there; a skip
would mean a part of the suite silently stopped running.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from optional_extras import IN_CI


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may be skipped: {report.longrepr}"
