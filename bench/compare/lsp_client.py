"""A minimal LSP client over stdio (Python stdlib only) for the side-by-side benchmarks.

A reader thread parses `Content-Length` frames and stamps each message with the
`time.perf_counter()` of its arrival, so queueing in the driver does not count towards a
server's latency. Requests from the server (`workspace/configuration`,
`client/registerCapability`, `window/workDoneProgress/create`) are answered at once from
the reader thread.
"""

import json
import os
import queue
import subprocess
import threading
import time


def vm_field(pid, field):
    """A `/proc/<pid>/status` field in KiB (`VmHWM` = peak RSS, `VmRSS` = current RSS)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children_of(pid):
    """Pids whose parent is `pid` (from /proc/*/stat)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[-1].split()
        if len(rest) > 1 and rest[1] == str(pid):
            out.append(int(d))
    return out


class Client:
    """One spawned language server."""

    def __init__(self, argv, settings, cwd=None, timeout=120.0):
        self.settings = settings
        self.timeout = timeout
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.pid = self.proc.pid
        self.wlock = threading.Lock()
        self.q = queue.Queue()
        self.next_id = 1000
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # -- wire -------------------------------------------------------------------------
    def _read(self):
        r = self.proc.stdout
        while True:
            length = None
            while True:
                line = r.readline()
                if not line:
                    self.q.put((time.perf_counter(), None))
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1].strip())
            body = r.read(length)
            now = time.perf_counter()
            msg = json.loads(body)
            if "method" in msg and "id" in msg:
                self._answer(msg)
                continue
            self.q.put((now, msg))

    def _answer(self, msg):
        method = msg["method"]
        result = None
        if method == "workspace/configuration":
            result = []
            for item in msg["params"].get("items", []):
                section = item.get("section")
                if section and section in self.settings:
                    result.append(self.settings[section])
                elif section and "." in section:
                    head, _, tail = section.partition(".")
                    result.append(self.settings.get(head, {}).get(tail))
                else:
                    result.append(None if section else self.settings)
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def send(self, msg):
        body = json.dumps(msg).encode()
        with self.wlock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait(self, pred, what):
        """The next message matching `pred` as `(arrival time, message)`; others dropped."""
        end = time.perf_counter() + self.timeout
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {what} within {self.timeout} s")
            try:
                t, m = self.q.get(timeout=left)
            except queue.Empty:
                raise TimeoutError(f"no {what} within {self.timeout} s") from None
            if m is None:
                raise EOFError(f"server closed stdout while waiting for {what}")
            if pred(m):
                return t, m

    def response(self, rid):
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, f"response {rid}")

    def diagnostics(self, uri, version=None):
        """The next publishDiagnostics of `uri`; with `version`, one for that version or
        (servers that omit the version) the first one after the call."""

        def pred(m):
            if m.get("method") != "textDocument/publishDiagnostics":
                return False
            p = m["params"]
            if p["uri"] != uri:
                return False
            if version is None or "version" not in p or p["version"] is None:
                return True
            return p["version"] == version

        return self.wait(pred, f"diagnostics of {uri}")

    def drain(self):
        while True:
            try:
                self.q.get_nowait()
            except queue.Empty:
                return

    # -- session ----------------------------------------------------------------------
    def initialize(self, root_uri, init_options=None):
        rid = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
                "capabilities": {
                    "workspace": {"configuration": True, "didChangeConfiguration": {}},
                    "textDocument": {
                        "synchronization": {"didSave": True},
                        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                        "completion": {"completionItem": {"snippetSupport": True}},
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                    },
                },
                "initializationOptions": init_options or {},
            },
        )
        _, res = self.response(rid)
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": self.settings})
        return res

    def open(self, uri, text, version=1):
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": version, "text": text}},
        )

    def change(self, uri, version, sl, sc, el, ec, text):
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": sl, "character": sc},
                            "end": {"line": el, "character": ec},
                        },
                        "text": text,
                    }
                ],
            },
        )

    def completion(self, uri, line, character):
        return self.request(
            "textDocument/completion",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
        )

    def close(self):
        try:
            rid = self.request("shutdown", None)
            self.response(rid)
            self.notify("exit", None)
            self.proc.stdin.close()
        except (OSError, TimeoutError, EOFError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
