"""Reading a service's Prometheus page in tests.

A service counts a message once it has published it, so a count can trail the message a test
has already received by a moment: tests read the page until the lines they expect are there.
"""
from __future__ import annotations

import asyncio
import urllib.request


async def metrics_with(port: int, wanted: list[str], timeout: float = 10.0) -> str:
    """The metrics page of the service on ``port`` once it holds every line of ``wanted``, or
    the last page read when ``timeout`` seconds pass first (the caller's assert then shows it)."""
    page = ""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            page = response.read().decode()
        if all(line in page for line in wanted) or asyncio.get_running_loop().time() > deadline:
            return page
        await asyncio.sleep(0.1)
