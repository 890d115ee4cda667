"""The server image's entrypoint with server.yaml's arguments (a free port on the loopback here;
in this process, where torch is imported already, rather than a second Python that takes ~20 s to
import it): the port accepts (the readiness probe), a request streams its tokens, and SIGTERM
(what Kubernetes sends a pod before it stops it) ends the server."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import urllib.request

import yaml

from course.distributed import manifests, serve


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client(port: int, out: dict) -> None:
    """Wait for the port (the readiness probe), stream one request, then send SIGTERM."""
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        body = json.dumps({"prompt": [1, 2, 3], "max_tokens": 4}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/generate", data=body)
        with urllib.request.urlopen(request, timeout=30) as response:
            out["events"] = [line for line in response.read().decode().splitlines() if line]
    finally:
        out["sent"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGTERM)


def test_the_server_entrypoint_serves_and_stops_on_sigterm(capsys):
    deployment = next(yaml.safe_load_all(manifests.text("server")))
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = list(container["args"])
    assert args[args.index("--port") + 1] == str(container["ports"][0]["containerPort"])
    port = _free_port()
    args[args.index("--port") + 1], args[args.index("--host") + 1] = str(port), "127.0.0.1"
    caught = []
    previous = signal.signal(signal.SIGTERM, lambda *_: caught.append(1))  # if serve sets none
    out: dict = {}
    client = threading.Thread(target=_client, args=(port, out))
    try:
        client.start()
        serve.main([*args, "--device", "cpu", "--seconds", "60"])
        stopped = time.monotonic()
    finally:
        client.join(60)
        signal.signal(signal.SIGTERM, previous)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"serving http://127.0.0.1:{port}/") and printed[-1] == "stopped"
    events = out["events"]
    assert len(events) == 5 and events[-1] == "data: [DONE]"
    assert all(isinstance(json.loads(e.removeprefix("data: "))["token"], int) for e in events[:-1])
    assert not caught and stopped - out["sent"] < 10  # SIGTERM stopped it, not the 60 s limit
