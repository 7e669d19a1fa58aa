"""The suite's shared fixtures (the browser) and the names its test files import.

The session's machinery (which snippets run where, the site's build, the order of the
tests, the workers' lifetime) is a pytest plugin of its own, ``tests/harness.py``, whose
docstring tells its flow in a screen.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("harness", "builds")  # its asserts read as the tests' do (it is imported just below)

from harness import DOCS, LIBRARY, REPO, SNIPPETS, included_snippets, page_includes  # noqa: E402, F401 (for tests)
from builds import (FAST_TIER, SITE_FIXTURES, ahead, mkdocs_process, network_can_be_cut,  # noqa: E402, F401
                    run_ahead, when_site_is_built, whole_tier)
from sdpa import env  # noqa: E402

# The session's machinery (tests/harness.py); the claim fixture, with which claims record their
# statistics (tests/claims.py).
pytest_plugins = ["harness", "builds", "claims"]

#: The variable through which sdpa.runtime adds an offset to every seed.
SEED_OFFSET_ENV = env.SEED_OFFSET


@pytest.fixture(scope="session")
def browser_available() -> None:
    """Skip (fail under CI) where Chromium, Playwright or axe-core is missing."""
    from browser_support import chromium_path, unavailable

    if chromium_path() is None:
        unavailable("Chromium not found at /usr/bin/chromium: `apt-get install -y chromium` (Debian)")
    try:
        import axe_playwright_python  # noqa: F401  (axe-core, used by the visits)
        import playwright  # noqa: F401
    except ImportError as missing:
        unavailable(f"{missing.name} is not installed: pip install -r requirements.txt")


@pytest.fixture(scope="session")
def browser(browser_available):
    """The session's headless Chromium (one Playwright per thread: the page visits run their own)."""
    from playwright.sync_api import sync_playwright

    from browser_support import launch

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()
