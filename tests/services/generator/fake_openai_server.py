"""A scripted OpenAI-compatible chat-completions server (standard library only), run as a process.

    python fake_openai_server.py SCRIPT.json REQUESTS.jsonl PORT_FILE

SCRIPT.json is a list of replies, one consumed per chat-completions request, in order:
``{"status": 200, "content": "...", "finish_reason": "stop", "usage": {"prompt_tokens": 10,
"completion_tokens": 5} | null, "delay_s": 0}``; a non-200 status answers with an OpenAI-style
error body. Every request body is appended to REQUESTS.jsonl so tests can see what was sent.
The bound port is written to PORT_FILE once the server listens.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SCRIPT: list[dict[str, Any]] = []
LOG: Path = Path("requests.jsonl")
LOCK = threading.Lock()
COUNTER = {"n": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left; that is what the delay was for

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        with LOCK:
            index = COUNTER["n"]
            COUNTER["n"] += 1
            with LOG.open("a") as fh:
                fh.write(json.dumps({"index": index, "body": body,
                                     "authorization": self.headers.get("Authorization", "")}) + "\n")
        if index >= len(SCRIPT):
            self._send(500, {"error": {"message": "script exhausted", "type": "server_error"}})
            return
        entry = SCRIPT[index]
        time.sleep(float(entry.get("delay_s", 0)))
        status = int(entry.get("status", 200))
        if status != 200:
            self._send(status, {"error": {"message": entry.get("message", f"scripted {status}"),
                                          "type": "scripted", "code": status}})
            return
        reply: dict[str, Any] = {
            "id": f"chatcmpl-{index}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "finish_reason": entry.get("finish_reason", "stop"),
                         "message": {"role": "assistant", "content": entry.get("content", "")}}],
        }
        usage = entry.get("usage", {"prompt_tokens": 100, "completion_tokens": 50})
        if usage is not None:
            reply["usage"] = dict(usage, total_tokens=usage["prompt_tokens"] + usage["completion_tokens"])
        self._send(200, reply)


def main() -> None:
    global LOG
    script_path, log_path, port_file = (Path(a) for a in sys.argv[1:4])
    SCRIPT.extend(json.loads(script_path.read_text()))
    LOG = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.rename(port_file)  # atomic: the test never reads half a number
    server.serve_forever()


if __name__ == "__main__":
    main()
