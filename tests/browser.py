"""A real headless browser for the console's tests: Debian's chromium driven over the DevTools protocol
(websockets), so a test loads a page as a person would, reads what it shows, collects console errors and failed
requests, and can take a screenshot."""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Browser:
    def __init__(self, port: int) -> None:
        assert CHROMIUM is not None, "chromium is not installed"
        self.profile = tempfile.mkdtemp(prefix="dl-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             f"--remote-debugging-port={port}", f"--user-data-dir={self.profile}", "--window-size=1400,1000",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    pages = [t for t in json.loads(r.read()) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("chromium did not start")
            time.sleep(0.2)
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, legacy=True)
        self._ids = itertools.count(1)
        self.errors: list[str] = []  # console errors, uncaught exceptions, failed requests
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def _event(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(str(params.get("exceptionDetails", {}).get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"{params['entry'].get('text')} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            self.errors.append(f"request failed: {params.get('errorText')}")
        elif method == "Network.responseReceived" and params.get("response", {}).get("status", 200) >= 400 \
                and params.get("type") != "Document":
            self.errors.append(f"{params['response']['status']} {params['response']['url']}")

    def call(self, method: str, **params: Any) -> dict:
        call_id = next(self._ids)
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def wait_load(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv(timeout=timeout))
            self._event(message)
            if message.get("method") == "Page.loadEventFired":
                return
        raise TimeoutError("page did not load")

    def open(self, url: str) -> str:
        """Navigate and wait for the load; the page's visible text."""
        self.call("Page.navigate", url=url)
        self.wait_load()
        return self.text()

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''")

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def submit(self, form_js: str) -> str:
        """Run JS that fills and submits a form; wait for the next page."""
        self.call("Runtime.evaluate", expression=form_js)
        self.wait_load()
        return self.text()

    def screenshot(self, path: Path, max_height: int = 4000) -> None:
        height = int(self.evaluate("document.documentElement.scrollHeight") or 1000)
        self.call("Emulation.setDeviceMetricsOverride", width=1400, height=min(height, max_height), deviceScaleFactor=1,
                  mobile=False)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        self.call("Emulation.clearDeviceMetricsOverride")

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
