"""Open a rendered page in headless Chromium with the network blocked, and read it back.

The page is copied with two probe scripts: one at the top of ``<head>`` collecting
uncaught errors, rejected promises and ``console.error``/``warn`` calls, one at the end
of ``<body>`` writing them (and the ``window.__pwned`` tripwire) into a ``<pre>`` once
the page has settled. Chromium's own console log (``--enable-logging=stderr``) is read
too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")

_HEAD_PROBE = """<script>
window.__ekErrors = [];
window.addEventListener('error', function (e) { window.__ekErrors.push('error: ' + e.message); });
window.addEventListener('unhandledrejection', function (e) {
  window.__ekErrors.push('rejection: ' + (e.reason && e.reason.message || e.reason)); });
['error', 'warn'].forEach(function (level) {
  var original = console[level];
  console[level] = function () {
    window.__ekErrors.push(level + ': ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
});
</script>"""

_BODY_PROBE = """<script>
setTimeout(function () {
  var out = document.createElement('pre');
  out.id = 'ek-probe';
  out.textContent = JSON.stringify({
    errors: window.__ekErrors,
    pwned: typeof window.__pwned === 'undefined' ? null : String(window.__pwned),
    charts: document.querySelectorAll('.ek-chart-area').length,
    drawn: document.querySelectorAll('.ek-chart-area svg.marks').length,
    marks: document.querySelectorAll('.ek-chart-area .role-mark').length,
    scripts: document.querySelectorAll('script').length,
    iframes: document.querySelectorAll('iframe').length,
    injected: document.querySelectorAll(
      '#pwn-link, details[ontoggle], img[onerror], svg[onload]').length
  });
  document.body.appendChild(out);
}, 4000);
</script>"""


def chromium() -> str | None:
    """Path of a Chromium binary, or None."""
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Page:
    """What the browser saw: the DOM after scripts ran, console lines, the probe's report."""

    dom: str
    console: list[str]
    probe: dict[str, Any]


def probe_copy(page: Path, dest: Path) -> Path:
    """A copy of ``page`` with the probes injected (the original is not touched)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"<head>", "<head>" + _HEAD_PROBE, text, count=1)
    idx = text.rfind("</body>")
    text = text[:idx] + _BODY_PROBE + text[idx:]
    dest.write_text(text, encoding="utf-8")
    return dest


def open_page(page: Path, workdir: Path, binary: str, *, timeout: int = 90) -> Page:
    """Load ``page`` offline in headless Chromium and return what it rendered."""
    workdir.mkdir(parents=True, exist_ok=True)
    # Beside the page (so relative links resolve), named per process: xdist workers
    # share the rendered pages, and one worker must not delete another's copy.
    copy = probe_copy(page, page.with_name(f".probe-{os.getpid()}-{page.name}"))
    profile = workdir / f"profile-{page.stem}"
    cmd = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
        "--virtual-time-budget=8000", "--enable-logging=stderr", "--v=0", "--dump-dom",
        copy.resolve().as_uri(),
    ]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        copy.unlink(missing_ok=True)
    console = [
        line for line in done.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line
    ]
    match = re.search(r'<pre id="ek-probe">(.*?)</pre>', done.stdout, re.DOTALL)
    if match is None:
        raise AssertionError(f"the probe did not report; chromium said: {done.stderr[-2000:]}")
    raw = match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    probe = json.loads(raw.replace("&amp;", "&"))
    return Page(done.stdout, console, probe)
