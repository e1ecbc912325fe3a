"""A replay of how SLIME v0.2.4 starts an SGLang server and waits for its health, for the uvicorn-log-level reproducer.

SLIME itself is not importable here (it needs sglang_router and a GPU engine), so its code path is replayed step for
step from slime/backends/sglang_utils/sglang_engine.py at v0.2.4 (bd217a63, launch_server_process and
_wait_server_healthy, lines 53-96): a spawned multiprocessing.Process runs the server; a requests.Session polls
{base_url}/health_generate with a Bearer header until it answers 200, swallowing RequestException, raising only
when p.is_alive() turns false, sleeping 2 s between tries; no deadline. The server is real uvicorn given the log
level from argv; like SGLang's launch_server, whose engine subprocesses outlive a failed HTTP server, its process
stays alive after uvicorn raises.

    python reproducers/slime_wait_replay.py PORT LEVEL   -> prints "SLIME health wait returned" once healthy
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time

import requests


async def app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def launch_server(port: int, level: str) -> None:
    import uvicorn

    # stands for SGLang's scheduler and detokenizer processes, which keep launch_server's process alive
    threading.Thread(target=time.sleep, args=(600,)).start()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level=level)


def _wait_server_healthy(base_url: str, api_key: str | None, is_process_alive) -> None:
    headers = {"Content-Type": "application/json; charset=utf-8", "Authorization": f"Bearer {api_key}"}
    with requests.Session() as session:
        while True:
            try:
                response = session.get(f"{base_url}/health_generate", headers=headers)
                if response.status_code == 200:
                    break
            except requests.RequestException:
                pass
            if not is_process_alive():
                raise Exception("Server process terminated unexpectedly.")
            time.sleep(2)


def main(port: int, level: str) -> None:
    multiprocessing.set_start_method("spawn", force=True)
    p = multiprocessing.Process(target=launch_server, args=(port, level))
    p.start()
    _wait_server_healthy(f"http://127.0.0.1:{port}", None, lambda: p.is_alive())
    print("SLIME health wait returned", flush=True)
    p.kill()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
