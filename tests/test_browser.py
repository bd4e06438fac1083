"""The "your deployment" notebook in a real browser: JupyterLab on a loopback port, Debian's Chromium driven by
Playwright (never a downloaded browser), Run All, a widget moved, the displayed table and plot redrawn."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = "15_your_deployment.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
# Flags that keep Chromium off the closed network here (no background fetches, sync, component updates, QUIC)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
REQUIRE = "PQLAB_REQUIRE_BROWSER"  # set by .ci/run when chromium and playwright are installed: never skip then


def _browser_or_skip() -> None:
    """Skip, saying why, where there is no browser stack; fail instead when CI said it is installed."""
    problems = []
    if not CHROMIUM.is_file():
        problems.append(f"no {CHROMIUM} (as root: apt-get install -y chromium, or make setup)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed in this venv (make setup)")
    if problems:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{REQUIRE}=1 but " + "; ".join(problems))
        pytest.skip("real-browser test: " + "; ".join(problems))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _project(root: Path) -> Path:
    """A scratch project: the params files and the notebook (JupyterLab saves into it, never into the repo)."""
    (root / "params").mkdir(parents=True)
    for source in (REPO / "params").glob("*.yaml"):
        shutil.copy(source, root / "params" / source.name)
    (root / "notebooks").mkdir()
    shutil.copy(REPO / "notebooks" / NOTEBOOK, root / "notebooks" / NOTEBOOK)
    settings = root / "lab-settings"
    for plugin, values in {"notebook-extension/tracker": {"windowingMode": "none"},  # render every cell
                           "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}}.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return root


def _start_lab(root: Path, port: int, token: str) -> subprocess.Popen:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "JUPYTER_CONFIG_DIR": str(root / "config"),
           "IPYTHONDIR": str(root / "ipython"), "MPLCONFIGDIR": str(root / "mpl"), "PYTHONUNBUFFERED": "1",
           "JUPYTERLAB_SETTINGS_DIR": str(root / "lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces")}
    for name in ("PQLAB_HEADLESS", "PQLAB_WIDGETS", "TQDM_DISABLE"):  # the kernel must see a live front end
        env.pop(name, None)
    # No path on the server's command line: pqlab.notebook.interactive() reads the kernel's parent command line for
    # batch runners ("pytest", "papermill", ...), and pytest's temporary folders are named pytest-of-<user>/...
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.token={token}", "--ServerApp.root_dir=.", "--allow-root", "--ServerApp.port_retries=0"]
    log = (root / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited: {(root / 'jupyterlab.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2):
                return server
        except OSError:
            time.sleep(0.5)
    _stop(server)
    pytest.fail(f"JupyterLab did not answer within 60 s: {(root / 'jupyterlab.log').read_text()[-2000:]}")


def _stop(server: subprocess.Popen) -> None:
    """Stop the server we started (its kernels are its children: the whole session of that pid)."""
    if server.poll() is None:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait(timeout=10)


def _shown(page) -> tuple[str, str]:
    """The explorer's CASE panel as displayed: its table's text and its plot's image data."""
    panel = page.locator(".pqlab-whatif-case").first
    panel.scroll_into_view_if_needed()
    return panel.locator("table").first.inner_text(), panel.locator("img").first.get_attribute("src") or ""


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_the_deployment_notebook_runs_in_jupyterlab_and_redraws_when_a_widget_moves(tmp_path):
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    root = _project(tmp_path / "project")
    port, token = _free_port(), os.urandom(16).hex()
    server = _start_lab(root, port, token)
    shot = tmp_path / "deployment-notebook.png"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            try:
                before, plot_before, after, plot_after = _drive(page, port, token)
            finally:  # the screen as it was, also when a step failed
                page.screenshot(path=str(shot), full_page=False)
                browser.close()
    finally:
        _stop(server)
    assert "1 hop," in before, before
    assert "2 hops," in after, after
    frames = {text.split("frames per hop")[1].split("\n")[0] for text in (before, after)}
    assert len(frames) == 2, f"the frames per hop did not change with the hop count: {frames}"
    assert plot_after.startswith("data:image/png") and plot_after != plot_before, "the plot was not redrawn"
    assert shot.is_file() and shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def _drive(page, port: int, token: str) -> tuple[str, str, str, str]:
    """Open the notebook, Run All, move the hops slider; the CASE panel's text and plot before and after."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(f"http://127.0.0.1:{port}/lab/tree/notebooks/{NOTEBOOK}?token={token}")
    page.locator(".jp-Notebook").wait_for(timeout=60_000)
    page.get_by_text(re.compile(r"Python \(pqlab\) \| Idle")).wait_for(timeout=60_000)  # the kernel is connected
    for _attempt in range(2):  # a Run All sent while the kernel connection settles can be lost: then once more
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
        try:
            page.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]")).first.wait_for(timeout=15_000)
            break
        except PlaywrightTimeout:
            continue
    page.locator(".pqlab-whatif-case table").first.wait_for(state="attached", timeout=90_000)
    # Run All done: no cell still waiting or running, so the slider moved next is the one the kernel observes
    busy = page.locator(".jp-InputPrompt", has_text="[*]")
    for _ in range(300):
        if busy.count() == 0:
            break
        page.wait_for_timeout(300)
    before, plot_before = _shown(page)
    slider = page.locator(".widget-slider", has=page.locator("label", has_text="hops"))
    hops = slider.locator(".noUi-handle")
    for _attempt in range(3):  # a key press that reaches the handle before it takes focus is lost: press again
        hops.scroll_into_view_if_needed()
        hops.focus()
        page.keyboard.press("ArrowRight")  # hops 1 -> 2: the panel recomputes through pqlab.whatif.case
        try:
            slider.locator(".widget-readout", has_text=re.compile("^2$")).wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            continue
    deadline = time.monotonic() + 60
    after, plot_after = before, plot_before
    while "2 hops," not in after and time.monotonic() < deadline:
        page.wait_for_timeout(300)
        after, plot_after = _shown(page)
    return before, plot_before, after, plot_after
