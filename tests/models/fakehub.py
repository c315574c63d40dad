"""A real HTTP server on 127.0.0.1 that answers the Hub endpoints huggingface_hub calls.

Served (enough for hf_hub_download, get_hf_file_metadata, http_get and HfApi.model_info):
    GET  /api/models/{org}/{name}[/revision/{rev}]      model info, siblings with size + lfs.sha256
    HEAD /{org}/{name}/resolve/{rev}/{file}             ETag, X-Repo-Commit, X-Linked-Etag/-Size, Content-Length
    GET  /{org}/{name}/resolve/{rev}/{file}             body, `Range: bytes=N-` answered with 206
Errors carry the Hub's X-Error-Code header (RepoNotFound, EntryNotFound, RevisionNotFound, GatedRepo).
Fault injection per file: drop the connection once after N bytes, fail Range retries with 500,
throttle, or serve corrupt bytes.
Every request is logged (method, path, Range) so tests can prove what went over the wire.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass
class HubFile:
    size: int
    sha256: str
    data: bytes | None = None  # small files live in memory
    path: Path | None = None  # big ones (benchmark) are sent from disk with sendfile
    corrupt: bool = False
    drop_after: int | None = None  # cut the connection once, after this many body bytes
    throttle: tuple[int, float] | None = None  # (bytes per write, seconds between writes)
    fail_resumes: int = 0  # answer this many Range GETs with HTTP 500 (a Hub hiccup)
    etag: str | None = None  # a hostile server's ETag instead of the sha256
    redirect_to: str | None = None  # answer HEAD/GET with a 302 to this URL (never followed by the fake)

    def read(self, start: int, end: int) -> bytes:
        if self.data is not None:
            chunk = self.data[start:end]
        else:
            assert self.path is not None
            with open(self.path, "rb") as fh:
                fh.seek(start)
                chunk = fh.read(end - start)
        if self.corrupt:
            chunk = bytes(b ^ 0xFF for b in chunk[:16]) + chunk[16:]
        return chunk


@dataclass
class Repo:
    commit: str
    gated: bool = False
    files: dict[str, HubFile] = field(default_factory=dict)
    downloads: int = 0
    likes: int = 0
    license: str = ""


@dataclass(frozen=True)
class Logged:
    method: str
    path: str
    range: str | None
    auth: bool


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.log: list[Logged] = []
        self.token = "hf_test_token"  # the one token this Hub accepts
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ content

    def repo(self, repo_id: str, *, gated: bool = False) -> Repo:
        if repo_id not in self.repos:
            commit = hashlib.sha1(repo_id.encode()).hexdigest()
            self.repos[repo_id] = Repo(commit=commit, gated=gated)
        self.repos[repo_id].gated = self.repos[repo_id].gated or gated
        return self.repos[repo_id]

    def add_bytes(self, repo_id: str, filename: str, data: bytes) -> HubFile:
        f = HubFile(size=len(data), sha256=hashlib.sha256(data).hexdigest(), data=data)
        self.repo(repo_id).files[filename] = f
        return f

    def add_path(self, repo_id: str, filename: str, path: Path) -> HubFile:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 22):
                h.update(block)
        f = HubFile(size=path.stat().st_size, sha256=h.hexdigest(), path=path)
        self.repo(repo_id).files[filename] = f
        return f

    def file(self, repo_id: str, filename: str) -> HubFile:
        return self.repos[repo_id].files[filename]

    def gets(self, filename: str) -> list[Logged]:
        return [r for r in self.log if r.method == "GET" and r.path.endswith("/" + filename)]

    # ------------------------------------------------------------ server

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fakehub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeHub

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return

    def do_HEAD(self) -> None:
        self._handle(head=True)

    def do_GET(self) -> None:
        self._handle(head=False)

    # ------------------------------------------------------------ routing

    def _handle(self, head: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        self.fake.log.append(
            Logged(self.command, path, self.headers.get("Range"), "authorization" in {k.lower() for k in self.headers})
        )
        parts = path.strip("/").split("/")
        if parts == ["api", "models"]:
            return self._search(parse_qs(urlsplit(self.path).query), head)
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            rev = parts[5] if len(parts) >= 6 and parts[4] == "revision" else "main"
            return self._model_info("/".join(parts[2:4]), rev, head)
        if len(parts) >= 5 and parts[2] == "resolve":
            return self._resolve("/".join(parts[:2]), parts[3], "/".join(parts[4:]), head)
        self._error(404, "RepoNotFound", "Not found", head)

    def _error(self, status: int, code: str, message: str, head: bool, extra: dict[str, str] | None = None) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _repo_or_error(self, repo_id: str, rev: str, head: bool) -> Repo | None:
        repo = self.fake.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found", head)
            return None
        auth = self.headers.get("Authorization")
        if auth and auth != f"Bearer {self.fake.token}":
            self._error(401, "", "Invalid credentials in Authorization header", head)
            return None
        if repo.gated and not auth:
            msg = f"Access to model {repo_id} is restricted. You must have access to it and be authenticated to access it."
            self._error(401, "GatedRepo", msg, head)
            return None
        if rev not in ("main", repo.commit):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
            return None
        return repo

    def _search(self, query: dict[str, list[str]], head: bool) -> None:
        """GET /api/models?search=&filter=gguf&sort=downloads&limit=: repos with a .gguf file."""
        text = (query.get("search") or [""])[0].lower()
        limit = int((query.get("limit") or ["20"])[0])
        hits = [
            (rid, r) for rid, r in self.fake.repos.items()
            if text in rid.lower() and any(n.endswith(".gguf") for n in r.files)
        ]
        hits.sort(key=lambda x: -x[1].downloads)
        rows = [
            {"_id": r.commit[:24], "id": rid, "modelId": rid, "downloads": r.downloads, "likes": r.likes,
             "gated": r.gated, "private": False,
             "tags": ["gguf"] + ([f"license:{r.license}"] if r.license else []),
             "cardData": {"license": r.license} if r.license else {}}
            for rid, r in hits[:limit]
        ]
        self._json(rows, head)

    def _json(self, obj: object, head: bool) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _model_info(self, repo_id: str, rev: str, head: bool) -> None:
        repo = self._repo_or_error(repo_id, rev, head)
        if repo is None:
            return
        siblings = [
            {
                "rfilename": name,
                "size": f.size,
                "blobId": hashlib.sha1(f.sha256.encode()).hexdigest(),
                "lfs": {"size": f.size, "sha256": f.sha256, "pointerSize": 134},
            }
            for name, f in repo.files.items()
        ]
        self._json({"id": repo_id, "sha": repo.commit, "private": False, "gated": repo.gated, "siblings": siblings},
                   head)

    def _resolve(self, repo_id: str, rev: str, filename: str, head: bool) -> None:
        repo = self._repo_or_error(repo_id, rev, head)
        if repo is None:
            return
        f = repo.files.get(filename)
        if f is None:
            self._error(404, "EntryNotFound", f"{filename} does not exist", head, {"X-Repo-Commit": repo.commit})
            return
        start, stop = 0, f.size
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and not head:
            first, _, last = rng[len("bytes=") :].partition("-")
            start = int(first or 0)
            stop = min(f.size, int(last) + 1) if last else f.size
        if f.redirect_to:
            self.send_response(302)
            self.send_header("Location", f.redirect_to)
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("ETag", f'"{f.etag or f.sha256}"')
            self.send_header("X-Linked-Etag", f'"{f.etag or f.sha256}"')
            self.send_header("X-Linked-Size", str(f.size))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if start and f.fail_resumes:
            f.fail_resumes -= 1
            self._error(500, "InternalError", "Internal Error", head)
            return
        if start >= f.size and f.size:
            self._error(416, "RangeNotSatisfiable", "Range not satisfiable", head)
            return
        ranged = bool(start or stop < f.size)
        self.send_response(206 if ranged else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{f.etag or f.sha256}"')
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("X-Linked-Etag", f'"{f.etag or f.sha256}"')
        self.send_header("X-Linked-Size", str(f.size))
        self.send_header("Content-Length", str(stop - start))
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{f.size}")
        self.end_headers()
        if not head:
            self._body(f, start, stop)

    def _body(self, f: HubFile, start: int, stop: int | None = None) -> None:
        end = f.size if stop is None else stop
        if f.drop_after is not None and start < f.drop_after:
            end, f.drop_after = f.drop_after, None  # once
            self.close_connection = True
        if f.path is not None and not (f.corrupt or f.throttle) and end == f.size:
            self.wfile.flush()
            with open(f.path, "rb") as fh:
                os.sendfile(self.connection.fileno(), fh.fileno(), start, end - start)
            return
        step, delay = f.throttle or (1 << 20, 0.0)
        pos = start
        try:
            while pos < end:
                chunk = f.read(pos, min(pos + step, end))
                self.wfile.write(chunk)
                self.wfile.flush()
                pos += len(chunk)
                if delay:
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
