"""The review page in a real headless Chromium against a real server: open, accept, reject, add a span by
selecting text, preview, export, and the corrections stored in the database; all under the page's
Content-Security-Policy (no violation logged), and a job's audit page in a sandboxed frame that cannot read
the page's token."""

import json
import shutil
import time
from pathlib import Path

import httpx
import pytest

from clinideid.service.local import LocalServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
)

TEXT = "Patient Quentin Harrowgate was seen in Springfield on 11/02/2023 by Dr. Keller for chest pain."
SPANS = [
    {"start": 8, "end": 26, "label": "PATIENT", "source": "rules"},
    {"start": 39, "end": 50, "label": "CITY", "source": "crf"},
    {"start": 54, "end": 64, "label": "DATE", "source": "rules"},
]


def _driver(download_dir: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.add_experimental_option(
        "prefs", {"download.default_directory": str(download_dir), "download.prompt_for_download": False}
    )
    options.set_capability(
        "goog:loggingPrefs", {"browser": "ALL"}
    )  # console messages, CSP violations included
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def _wait(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the page")


SELECT_JS = """
const box = document.getElementById('text');
const [start, end] = [arguments[0], arguments[1]];
const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
let offset = 0, range = document.createRange(), node;
while ((node = walker.nextNode())) {
  const n = node.textContent.length;
  if (offset <= start && start < offset + n) range.setStart(node, start - offset);
  if (offset < end && end <= offset + n) { range.setEnd(node, end - offset); break; }
  offset += n;
}
const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
return sel.toString();
"""


# from the page: the frame's document and its sessionStorage (an opaque origin: neither is reachable)
FRAME_REACH_JS = """
const frame = arguments[0];
let storage = "read";
try { frame.contentWindow.sessionStorage.length; } catch (e) { storage = e.name; }
return {document: frame.contentDocument === null ? null : "reachable", storage: storage};
"""


def _job_done(url: str, job_id: str) -> bool:
    status = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10).json()["status"]
    assert status not in ("failed", "interrupted"), status
    return status == "done"


def test_review_page_accept_reject_add_export(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with LocalServer(tmp_path / "state") as server:
        created = httpx.post(
            server.url + "/v1/review/documents",
            json={"documents": [{"id": "note-1", "text": TEXT, "language": "en", "spans": SPANS}]},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        doc_id = created.json()["documents"][0]["id"]
        job = httpx.post(
            server.url + "/v1/jobs",
            files={"file": ("notes.jsonl", json.dumps({"id": "j1", "text": TEXT}).encode() + b"\n")},
            data={"language": "en"},
            timeout=30,
        ).json()["id"]
        driver = _driver(downloads)
        try:
            driver.get(server.url + "/review")
            reviewer = driver.find_element(By.ID, "reviewer")
            reviewer.send_keys("ann")
            driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", reviewer)
            _wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#doc-list li"))[0].click()
            phi = _wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#text .phi"))
            assert [p.get_attribute("data-source") for p in phi] == ["rules", "crf", "rules"]
            assert phi[0].text.startswith("Quentin Harrowgate")

            phi[0].click()
            driver.find_element(By.ID, "btn-accept").click()
            _wait(lambda: "accept saved" in driver.find_element(By.ID, "status").text)
            driver.find_elements(By.CSS_SELECTOR, "#text .phi")[1].click()
            driver.find_element(By.ID, "btn-reject").click()
            _wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#text .phi.rejected"))

            start = TEXT.index("Keller")
            assert driver.execute_script(SELECT_JS, start, start + len("Keller")) == "Keller"
            Select(driver.find_element(By.ID, "label-select")).select_by_visible_text("DOCTOR")
            driver.find_element(By.ID, "btn-add").click()
            added = _wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#text .phi.added"))
            assert added[0].get_attribute("data-label") == "DOCTOR"

            driver.find_element(By.TAG_NAME, "body").send_keys("p")  # keyboard shortcut: surrogate preview
            preview = _wait(lambda: driver.find_element(By.ID, "preview").text)
            assert (
                "Quentin Harrowgate" not in preview and "Keller" not in preview and "Springfield" in preview
            )

            driver.find_element(By.ID, "btn-export-jsonl").click()
            export = _wait(lambda: [p for p in downloads.glob("*.jsonl")])[0]
            shot = tmp_path / "review-page.png"
            driver.save_screenshot(str(shot))
            print(f"review page screenshot: {shot}")

            # a token in sessionStorage (the server has none configured and ignores it), then the job's audit
            token = driver.find_element(By.ID, "token")
            token.send_keys("browser-test-token-0123456789")
            driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", token)
            _wait(lambda: _job_done(server.url, job), timeout=120)
            driver.find_element(By.ID, "btn-jobs").click()
            _wait(
                lambda: [
                    b for b in driver.find_elements(By.CSS_SELECTOR, "#side li button") if b.text == "audit"
                ]
            )[0].click()
            frame = _wait(lambda: driver.find_elements(By.ID, "audit-frame"))[0]
            assert frame.get_attribute("sandbox") == ""  # no allow-scripts, no allow-same-origin
            assert driver.execute_script("return sessionStorage.getItem('clinideid-token')")
            reach = driver.execute_script(FRAME_REACH_JS, frame)
            assert reach == {"document": None, "storage": "SecurityError"}, reach
            driver.switch_to.frame(frame)
            assert "residual-risk audit" in _wait(lambda: driver.find_element(By.TAG_NAME, "h1").text)
            assert driver.find_elements(By.TAG_NAME, "table")
            driver.switch_to.default_content()
            console = driver.get_log("browser")
            violations = [e["message"] for e in console if "Content Security Policy" in e["message"]]
            assert violations == [], violations
        finally:
            driver.quit()
        record = json.loads(_wait(lambda: export.read_text("utf-8")).splitlines()[0])
        assert record["reviewer"] == "ann"
        assert [(s["start"], s["end"], s["label"]) for s in record["spans"]] == [
            (8, 26, "PATIENT"), (54, 64, "DATE"), (start, start + 6, "DOCTOR"),
        ]  # fmt: skip
        stored = httpx.get(f"{server.url}/v1/review/documents/{doc_id}/corrections", timeout=10).json()
        actions = [
            (c["reviewer"], c["action"], c["start"], c["end"], c["label"]) for c in stored["corrections"]
        ]
        assert actions == [
            ("ann", "accept", 8, 26, "PATIENT"),
            ("ann", "reject", 39, 50, "CITY"),
            ("ann", "add", start, start + 6, "DOCTOR"),
        ]
        assert all(c["time"] for c in stored["corrections"])
        assert shot.stat().st_size > 10_000
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal (exit status -15)
    assert server.returncode in (0, -15) and "Application shutdown complete" in server.log_text()
    assert "Quentin Harrowgate" not in server.log_text()
