"""Batch jobs: a JSONL file de-identified by ``clinideid deid`` in its own process, resumable.

Each job lives in ``<state>/jobs/<id>/``: ``input.jsonl`` (the upload, or a link-free copy of a file from
the server's input root), ``job.json`` (settings and state, no text), ``out/`` (the batch runner's output
folder: the de-identified JSONL, ``report.jsonl``, ``summary.json``, ``audit.html`` and the journal that
makes ``--resume`` exactly-once). A separate process gives every document the runner's time limit and
keeps a crash away from the server. Progress is read from the runner's journal.

Every job belongs to the caller that created it (``owner`` in ``job.json``: a tenant name or a keyed hash of
the token, never the token; see ``tenancy``). Every public method takes the caller, and a job the caller may
not see answers exactly as a job that does not exist. A job folder from before owners were recorded has none
and is visible to admins only.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from clinideid.errors import ConfigError, InputError
from clinideid.files import write_atomic
from clinideid.service.settings import ServiceSettings
from clinideid.service.tenancy import Caller

log = logging.getLogger(__name__)

INPUT_NAME = "input.jsonl"
META_NAME = "job.json"
#: job processes running at once (more wait, status ``queued``)
MAX_RUNNING = 1
_EXIT_STATES = {0: "done", 3: "done_with_failures", 130: "interrupted"}


class JobManager:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.root = settings.jobs_dir
        self.root.mkdir(parents=True, exist_ok=True)
        self._running = threading.BoundedSemaphore(MAX_RUNNING)
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._lock = threading.Lock()
        for meta_path in self.root.glob(f"*/{META_NAME}"):  # a server restart ends the processes it ran
            meta = json.loads(meta_path.read_text("utf-8"))
            if meta["status"] in ("queued", "running"):
                self._save(meta_path.parent.name, {**meta, "status": "interrupted"})

    # -- paths and metadata ----------------------------------------------------------------------------
    def folder(self, job_id: str, caller: Caller) -> Path:
        """The job's folder, if it exists and ``caller`` may see it (``InputError`` otherwise, the same)."""
        folder = self.root / job_id
        known = job_id.isalnum() and (folder / META_NAME).is_file()
        if not known or not caller.sees(self._meta(job_id).get("owner")):
            raise InputError("no such job (GET /v1/jobs lists yours)")
        return folder

    def _save(self, job_id: str, meta: dict[str, Any]) -> None:
        folder = self.root / job_id
        tmp = folder / ".tmp"
        tmp.mkdir(exist_ok=True)
        write_atomic(folder / META_NAME, (json.dumps(meta, indent=2) + "\n").encode(), tmp)

    def _meta(self, job_id: str) -> dict[str, Any]:
        return json.loads((self.root / job_id / META_NAME).read_text("utf-8"))

    # -- creating ----------------------------------------------------------------------------------------
    def resolve_input(self, path: str) -> Path:
        """A server-side file inside the configured input root (no escape through ``..`` or links)."""
        root = self.settings.input_root
        if root is None:
            raise ConfigError("this server has no input root: upload the file instead")
        candidate = (root / path).resolve()
        if not candidate.is_relative_to(root.resolve()) or not candidate.is_file():
            raise InputError("the path is not a file inside the server's input root")
        return candidate

    def create(self, source: Path | bytes, options: dict[str, Any], caller: Caller) -> dict[str, Any]:
        job_id = secrets.token_hex(8)
        folder = self.root / job_id
        folder.mkdir(parents=True)
        if isinstance(source, bytes):
            (folder / INPUT_NAME).write_bytes(source)
        else:
            shutil.copyfile(source, folder / INPUT_NAME, follow_symlinks=True)
        total = sum(1 for line in (folder / INPUT_NAME).open("rb") if line.strip())
        meta = {"id": job_id, "owner": caller.owner, "status": "queued", "created": time.time(), "total": total,
                "options": options}  # fmt: skip
        self._save(job_id, meta)
        self.start(job_id, False, caller)
        return self.status(job_id, caller)

    # -- running -----------------------------------------------------------------------------------------
    def _key_file(self) -> Path:
        if self.settings.key_file is not None:
            return self.settings.key_file
        if self.settings.key is None:
            raise ConfigError("the server has no key; start it with --key-file")
        from clinideid.transform.keys import save_key

        path = self.settings.state_dir / "service.key"
        if not path.exists():
            save_key(path, self.settings.key)
        return path

    def command(self, job_id: str, resume: bool) -> list[str]:
        folder = self.root / job_id
        options = self._meta(job_id)["options"]
        cmd = [
            sys.executable,
            "-c",
            "from clinideid.cli import main; main()",
            "deid",
            str(folder / INPUT_NAME),
        ]
        cmd += ["-o", str(folder / "out"), "--key-file", str(self._key_file()), "--no-progress"]
        cmd += ["--language", options.get("language") or self.settings.language]
        if options.get("scope"):
            cmd += ["--scope", options["scope"]]
        for label, spec in (options.get("operators") or {}).items():
            opts = ",".join(f"{k}={v}" for k, v in spec.get("options", {}).items())
            cmd += ["--operator", f"{label}={spec['operator']}" + (f":{opts}" if opts else "")]
        cmd += ["--resume"] if resume else []
        return cmd

    def start(self, job_id: str, resume: bool, caller: Caller) -> None:
        self.folder(job_id, caller)
        with self._lock:
            proc = self._procs.get(job_id)
            if proc is not None and proc.poll() is None:
                raise ConfigError("the job is running")
        meta = self._meta(job_id)
        self._save(job_id, {**meta, "status": "queued"})
        threading.Thread(target=self._run, args=(job_id, resume), daemon=True, name=f"job-{job_id}").start()

    def _run(self, job_id: str, resume: bool) -> None:
        with self._running:
            try:
                cmd = self.command(job_id, resume)
            except ConfigError as exc:
                self._save(job_id, {**self._meta(job_id), "status": "failed", "error": str(exc)})
                return
            self._save(job_id, {**self._meta(job_id), "status": "running", "started": time.time()})
            # the child's messages name documents by id only; they go to a log file, never to a client
            with (self.root / job_id / "process.log").open("ab") as logfile:
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.DEVNULL, stderr=logfile, env={**os.environ}, start_new_session=True
                )
                with self._lock:
                    self._procs[job_id] = proc
                rc = proc.wait()
            status = _EXIT_STATES.get(rc, "failed")
            meta = {**self._meta(job_id), "status": status, "exit_code": rc, "finished": time.time()}
            if status == "failed":
                meta["error"] = f"the batch process ended with exit code {rc}; resume the job to retry"
            self._save(job_id, meta)
            log.info("job %s ended: %s", job_id, status)

    def cancel(self, job_id: str, caller: Caller) -> None:
        """Stop a running job after its current document (SIGTERM); resume it later."""
        self.folder(job_id, caller)
        with self._lock:
            proc = self._procs.get(job_id)
        if proc is not None and proc.poll() is None:
            proc.terminate()

    # -- reading -----------------------------------------------------------------------------------------
    def progress(self, job_id: str) -> int:
        journal = self.root / job_id / "out" / ".clinideid" / "journal.jsonl"
        if not journal.is_file():
            return 0
        ids = set()
        with journal.open("rb") as fh:
            for raw in fh:
                entry = json.loads(raw)
                if entry.get("status") in ("done", "failed", "ignored"):
                    ids.add(entry["id"])
        return len(ids)

    def status(self, job_id: str, caller: Caller) -> dict[str, Any]:
        self.folder(job_id, caller)
        meta = self._meta(job_id)
        processed = self.progress(job_id)
        out = {k: meta.get(k) for k in ("id", "status", "created", "started", "finished", "total", "error")}
        out["processed"] = processed
        if caller.admin:
            out["owner"] = meta.get("owner")
        out["progress"] = round(processed / meta["total"], 4) if meta["total"] else 1.0
        summary = self.root / job_id / "out" / "summary.json"
        if summary.is_file() and meta["status"] not in ("queued", "running"):
            data = json.loads(summary.read_text("utf-8"))
            out["summary"] = {k: data.get(k) for k in ("documents", "succeeded", "failed", "spans_per_label")}
        return out

    def list(self, caller: Caller) -> list[dict[str, Any]]:
        """The jobs ``caller`` may see (an admin: every job)."""
        ids = sorted(p.parent.name for p in self.root.glob(f"*/{META_NAME}"))
        return [self.status(i, caller) for i in ids if caller.sees(self._meta(i).get("owner"))]

    def owner(self, job_id: str, caller: Caller) -> str | None:
        """Who owns the job (``None``: a job from before owners were recorded)."""
        self.folder(job_id, caller)
        return self._meta(job_id).get("owner")

    def result_file(self, job_id: str, name: str, caller: Caller) -> Path:
        folder = self.folder(job_id, caller) / "out"
        files = {"result": folder / INPUT_NAME, "report": folder / "report.jsonl", "summary": folder / "summary.json",
                 "audit": folder / "audit.html"}  # fmt: skip
        path = files.get(name)
        if path is None or not path.is_file():
            raise InputError(f"the job has no {name} yet")
        return path

    def close(self) -> None:
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
