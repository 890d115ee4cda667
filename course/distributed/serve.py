"""Lesson 13's LLM server as a long-running process: the entrypoint of the server image.

``python -m course.distributed.serve --host 0.0.0.0 --port 8000`` serves the course's own small
decoder (:data:`course.measure.llm_server.MODEL_CONFIG`, seeded weights: nothing is downloaded,
no token is needed) with :class:`course.measure.llm_server.Engine`'s continuous batching on the
GPU where there is one, and streams tokens over HTTP (``POST /generate``, server-sent events) until
SIGTERM, which Kubernetes sends a pod before it stops it. ``container/Containerfile``'s ``server``
target runs it; ``jobs/server.yaml`` deploys it (``course.distributed.manifests``).
"""

from __future__ import annotations

import argparse
import signal
import threading

import torch

from course.measure import llm_server
from course.measure.decoding import serve_model


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    ap.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--max-batch", type=int, default=64, help="sequences decoded per step")
    ap.add_argument("--num-blocks", type=int, default=4096, help="KV-cache blocks of 16 tokens")
    ap.add_argument("--seconds", type=float, default=None, help="stop after (default: SIGTERM)")
    a = ap.parse_args(argv)
    model = serve_model(llm_server.MODEL_CONFIG).to(a.device)
    engine = llm_server.Engine(model, max_batch=a.max_batch, num_blocks=a.num_blocks)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with llm_server.running_server(engine, host=a.host, port=a.port) as handle:
        print(f"serving {handle.url} on {a.device}", flush=True)
        stop.wait(a.seconds)
    print("stopped", flush=True)


if __name__ == "__main__":
    main()

__all__ = ["main"]
