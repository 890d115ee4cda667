"""Drive lesson 00 in a real JupyterLab with headless Chromium: run all cells, answer the quiz.

The test starts its own JupyterLab on a free loopback port with a random token, fresh settings and
workspaces directories (news notification off) and a temporary copy of ``notebooks/`` as its root,
so running cells never touches the committed notebook. It uses Debian's ``chromium`` through the
``playwright`` package (``executable_path``); Playwright's own browser download is never used.
Without ``/usr/bin/chromium`` the test is skipped, or fails when the ``CI`` variable is set.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_setup import CHROMIUM_ARGS

from course.presentation import quizzes

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NOTEBOOK = "00_setup.ipynb"

SERVER_START_S = 90  # JupyterLab answers in a few seconds; allow for a loaded 2-core machine
KERNEL_IDLE_MS = 60_000  # kernel start (first open)
RUN_ALL_MS = 90_000  # the lesson runs in ~6 s (torch import, checks); wide margin for load
FEEDBACK_MS = 15_000  # a click's round trip to the kernel


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _strip_outputs(path: Path) -> None:
    """Clear stored outputs and widget state, so every widget on the page comes from this run."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["metadata"].pop("widgets", None)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@dataclass
class Lab:
    url: str
    token: str
    log: Path

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else None


def _stop(proc: subprocess.Popen, lab: Lab) -> None:
    """Shut the kernels down, then end the server's whole process group (TERM, then KILL)."""
    if proc.poll() is None:
        # Kernels run in sessions of their own: ask the server to stop them first.
        with contextlib.suppress(OSError, ValueError):
            for kernel in lab.api("GET", "/api/kernels"):
                lab.api("DELETE", f"/api/kernels/{kernel['id']}")
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    # KILL whatever is left of the group (the leader, or children that outlived it).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@pytest.fixture
def lab(chromium: str, tmp_path: Path) -> Iterator[Lab]:
    """A JupyterLab server of our own, rooted in a copy of notebooks/, stopped afterwards."""
    root = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    _strip_outputs(root / NOTEBOOK)

    settings = tmp_path / "lab-settings"
    notification = (
        settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # Keep every cell in the DOM (no virtual scrolling), so "the last cell" is the last cell.
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    (tmp_path / "lab-workspaces").mkdir()
    (tmp_path / "runtime").mkdir()

    env = dict(os.environ)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "lab-workspaces"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        PYTHONUNBUFFERED="1",
    )
    token = secrets.token_hex(16)
    port = _free_port()
    log = tmp_path / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Lab(url=f"http://127.0.0.1:{port}", token=token, log=log)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()}")
            try:
                server.api("GET", "/api/status")
                break
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"JupyterLab did not answer in {SERVER_START_S} s:\n{log.read_text()}"
                    )
                time.sleep(0.2)
        yield server
    finally:
        _stop(proc, server)


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_lesson_00_quiz_in_jupyterlab(chromium: str, lab: Lab, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    committed = (NOTEBOOKS / NOTEBOOK).read_bytes()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}")

            # The status bar reads "Python 3 (ipykernel) | Idle" once the kernel is up.
            notebook = page.locator(".jp-NotebookPanel")
            idle = page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle\b"))
            expect(idle).to_be_visible(timeout=KERNEL_IDLE_MS)

            # Run > Run All Cells.
            page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            # Started when the last cell is queued ([*]) or done ([n]); finished when no cell is
            # queued and the kernel is idle. A failing cell stops the run early (the kernel drops
            # the queue), so a broken lesson fails here quickly with its error, not by timeout.
            prompts = notebook.locator(".jp-Cell .jp-InputPrompt")
            last_cell = notebook.locator(".jp-CodeCell").last
            last_prompt = last_cell.locator(".jp-InputPrompt")
            expect(last_prompt).to_have_text(re.compile(r"\[(\*|\d+)\]"), timeout=RUN_ALL_MS)
            expect(prompts.filter(has_text="[*]")).to_have_count(0, timeout=RUN_ALL_MS)
            expect(idle).to_be_visible(timeout=KERNEL_IDLE_MS)
            if not re.search(r"\[\d+\]", last_prompt.inner_text()):
                errors = notebook.locator('[data-mime-type="application/vnd.jupyter.stderr"]')
                pytest.fail("Run All stopped early:\n" + "\n".join(errors.all_inner_texts()))

            # The quiz (drawn by the last cell) shows each question with a Check button.
            quiz = quizzes.questions("00")
            questions = last_cell.locator(".jp-OutputArea-output .widget-vbox > .widget-vbox")
            expect(questions).to_have_count(len(quiz), timeout=RUN_ALL_MS)
            checks = last_cell.get_by_role("button", name="Check")
            expect(checks).to_have_count(len(quiz))

            # 1. Multiple choice: the right option gives "Correct."
            first = questions.nth(0)
            expect(first).to_contain_text("1. nvidia-smi prints")
            first.get_by_label(quiz[0].options[quiz[0].answer], exact=True).check()
            first.get_by_role("button", name="Check").click()
            expect(first.locator(".widget-html").last).to_contain_text(
                "Correct.", timeout=FEEDBACK_MS
            )

            # 3. Numeric: 13.5 (GB, not GiB) gives "Not quite."
            third = questions.nth(2)
            expect(third).to_contain_text("3. How many GiB do Llama-2-7B")
            third.locator("input[type=text]").fill("13.5")
            third.get_by_role("button", name="Check").click()
            expect(third.locator(".widget-html").last).to_contain_text(
                "Not quite.", timeout=FEEDBACK_MS
            )
            page.screenshot(path=str(tmp_path / "quiz.png"), full_page=False)
        except Exception:
            shot = tmp_path / "failure.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}\nserver log: {lab.log}")
            raise
        finally:
            browser.close()
    assert (NOTEBOOKS / NOTEBOOK).read_bytes() == committed, "the committed notebook was modified"


#: Every calculator widget, each in a cell of its own (the builders' defaults).
CALCULATORS = "calculators.ipynb"
#: Waits for the calculators' notebook (a kernel start and 15 widgets on a loaded 2-core machine).
LOADED_MS = 180_000
#: Lesson 10's calculators of issue 45.
NEW_CALCULATORS = {
    "pod_power_calculator",
    "tensor_vs_cuda_cores",
    "a100_or_h100",
    "grace_hopper_calculator",
}


def _calculator_notebook(path: Path, builders: list[str]) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": "from course.presentation import widgets"}
    ]
    cells += [{"cell_type": "code", "metadata": {}, "source": f"widgets.{b}()"} for b in builders]
    for i, cell in enumerate(cells):
        cell.update(id=f"calc{i}", outputs=[], execution_count=None)
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_every_calculator_shows_a_typed_mistake_in_red_in_jupyterlab(
    chromium: str, lab: Lab, tmp_path: Path
) -> None:
    """Issue 45: each calculator (the new ones of lesson 10 among them) drawn by JupyterLab's
    widget manager: a word typed into its first box gives the red message naming that box's label
    (never a traceback), and the default typed back gives a result again."""
    from playwright.sync_api import expect, sync_playwright

    from course.presentation import widgets
    from course.presentation.widgets.base import Calculator

    builders = [
        name
        for name in widgets.__all__
        if callable(getattr(widgets, name))
        and getattr(getattr(widgets, name), "__annotations__", {}).get("return")
        in (Calculator, "Calculator")
    ]
    assert set(builders) >= NEW_CALCULATORS
    _calculator_notebook(tmp_path / "notebooks" / CALCULATORS, builders)  # the lab's root
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(LOADED_MS)  # a loaded 2-core machine: navigation is slow
        try:
            page.goto(f"{lab.url}/lab/tree/{CALCULATORS}?token={lab.token}", wait_until="commit")
            notebook = page.locator(".jp-NotebookPanel")
            idle = page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle\b"))
            expect(idle).to_be_visible(timeout=LOADED_MS)
            page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            cells = notebook.locator(".jp-CodeCell")
            expect(cells.last.locator(".jp-InputPrompt")).to_have_text(
                re.compile(r"\[\d+\]"), timeout=LOADED_MS
            )
            expect(idle).to_be_visible(timeout=LOADED_MS)
            typed = 0
            for i, name in enumerate(builders, start=1):
                cell = cells.nth(i)
                expect(cell.locator(".widget-html").first).to_be_visible(timeout=FEEDBACK_MS)
                boxes = cell.locator(".widget-text").filter(has=page.locator("input:enabled"))
                if boxes.count() == 0:
                    continue  # a calculator of menus only
                label = boxes.first.locator("label").inner_text().strip()
                field = boxes.first.locator("input")
                default = field.input_value()
                field.fill("not a number")
                error = cell.locator(".calc-error")
                expect(error).to_be_visible(timeout=FEEDBACK_MS)
                if name in NEW_CALCULATORS:  # their first box is parsed under its own label
                    expect(error).to_contain_text(label)
                assert "Traceback" not in cell.inner_text(), name
                field.fill(default)
                expect(error).to_have_count(0, timeout=FEEDBACK_MS)
                typed += 1
            assert typed >= len(NEW_CALCULATORS), typed
            page.screenshot(path=str(tmp_path / "calculators.png"), full_page=False)
        except Exception:
            shot = tmp_path / "failure.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}\nserver log: {lab.log}")
            raise
        finally:
            browser.close()
