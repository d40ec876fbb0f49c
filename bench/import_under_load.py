"""Large imports while other customers chat: do they slow anyone's first token, kill a worker,
or take unbounded memory?

The default deployment (gunicorn, 2 gevent workers, the Huey worker, SQLite) with a fast fake
OpenAI-compatible server. 20 guests chat (send, read the reply to `done`, a second's pause,
again); first their first-token times are taken with nothing else running (the quiet run), then
while a guest uploads a 4 MB OpenAI JSONL file (41,000 one-turn conversations), and a signed-in
customer uploads that file and a 60 MB ChatGPT export (one conversation, ChatGPT's
`conversations.json` shape: a `mapping` tree of nodes with `parent` and `children`, written
here), until both imports end. Prints the chatters' first-token p50/p95 in both runs, the
uploads' answers and the imports' results (turns/s), whether any worker was killed (gunicorn's
log, the worker pids, the Huey worker alive), and the Huey worker's peak RSS (VmHWM) before and
after.

    python bench/import_under_load.py [--small] [--chatters 20] [--quiet 30]
"""
import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.fakes import live_app  # noqa: E402

WORDS = ("order refund parcel shipping days window policy customer ticket help address "
         "delivery late return label receipt bakery flour starter oven recipe").split()
PASSWORD = "bench-password-1234"


def chatgpt_node(node_id, parent, child, role, text, when):
    return {"id": node_id, "parent": parent, "children": [child] if child else [], "message": None
            if role is None else {"id": node_id, "author": {"role": role, "name": None, "metadata": {}},
                                  "create_time": when, "update_time": None,
                                  "content": {"content_type": "text", "parts": [text]},
                                  "status": "finished_successfully", "end_turn": True,
                                  "weight": 1.0, "metadata": {}, "recipient": "all"}}


def write_chatgpt_export(path: str, megabytes: float, rng) -> int:
    """One conversation of as many turns as make the file `megabytes` long, written node by
    node (never held whole); its turns."""
    start, target, turns = 1.7e9, megabytes * 1e6, 0
    with open(path, "w") as out:
        out.write('[{"title": "Everything I ever asked", "create_time": %r, "mapping": {' % start)
        out.write('"root": ' + json.dumps(chatgpt_node("root", None, "u0", None, "", None)))
        parent = "root"
        while out.tell() < target:
            when = start + turns * 60
            question, answer = f"u{turns}", f"a{turns}"
            out.write(f', "{question}": ' + json.dumps(chatgpt_node(
                question, parent, answer, "user",
                f"Question {turns}: " + " ".join(rng.choices(WORDS, k=12)) + "?", when)))
            last = out.tell() >= target - 400
            out.write(f', "{answer}": ' + json.dumps(chatgpt_node(
                answer, question, None if last else f"u{turns + 1}", "assistant",
                " ".join(rng.choices(WORDS, k=40)), when + 5)))
            parent, turns = answer, turns + 1
            if last:
                break
        out.write('}, "current_node": "%s", "update_time": %r, "id": "%s"}]'
                  % (parent, start + turns * 60, uuid.UUID(int=rng.getrandbits(128))))
    return turns


def write_jsonl(path: str, megabytes: float, rng) -> int:
    """OpenAI fine-tuning JSONL: one short conversation a line; how many lines."""
    lines = 0
    with open(path, "w") as out:
        while out.tell() < megabytes * 1e6:
            out.write(json.dumps({"messages": [
                {"role": "user", "content": f"Q{lines} " + " ".join(rng.choices(WORDS, k=3))},
                {"role": "assistant", "content": " ".join(rng.choices(WORDS, k=4))}]}) + "\n")
            lines += 1
    return lines


def multipart(name: str, path: str, fields: dict) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
             .encode() for key, value in fields.items()]
    with open(path, "rb") as file:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                     f'filename="{name}"\r\nContent-Type: application/json\r\n\r\n'.encode()
                     + file.read() + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(guest, name: str, path: str) -> tuple[int, str]:
    """POST /import as the form does; the answer's status and where it sends the browser."""
    body, kind = multipart(name, path, {"csrf_token": guest.token, "format": "auto"})
    connection, response = guest.request("POST", "/import", headers={
        "Content-Type": kind, "HX-Request": ""}, body=body)
    try:
        response.read()
        return response.status, response.getheader("Location") or ""
    finally:
        connection.close()


def sign_in(port: int, env: dict, email: str):
    subprocess.run([sys.executable, "-m", "flask", "--app", "webapp", "users", "add", email,
                    "--password-stdin"], input=PASSWORD + "\n", text=True, cwd=live_app.ROOT,
                   env=env, check=True, capture_output=True)
    customer = live_app.Guest(port, timeout=600)
    status, _, page = customer.fetch("GET", "/login", headers={"HX-Request": ""})
    customer.token = live_app.CSRF.search(page).group(1)
    status, _, _ = customer.fetch("POST", "/login", form={
        "email": email, "password": PASSWORD, "csrf_token": customer.token},
        headers={"HX-Request": ""})
    assert status == 303, f"sign-in answered {status}"
    _, _, page = customer.fetch("GET", "/import", headers={"HX-Request": ""})
    customer.token = live_app.CSRF.search(page).group(1)
    return customer


def chatter(port: int, running: threading.Event, samples: list) -> None:
    """One customer chatting: (when, first-token seconds or None, status, seconds the POST that
    stores the question took) per send."""
    guest, conversation = live_app.Guest(port, timeout=120), None
    try:
        guest.open()
    except Exception as error:
        samples.append((time.monotonic(), None, type(error).__name__, None))
        return
    while running.is_set():
        sent, first, posted = time.monotonic(), None, None
        try:
            path = f"/c/{conversation}/messages" if conversation else "/messages"
            status, headers, body = guest.fetch("POST", path, form={"message": "Where is my order #1042?"})
            posted = time.monotonic() - sent
            if status != 200:
                samples.append((sent, None, status, posted))
                time.sleep(float(headers.get("Retry-After", 1)))
                continue
            conversation = conversation or headers["HX-Push-Url"].rsplit("/", 1)[1]
            seq = body.split("/turns/", 1)[1].split("/", 1)[0]
            for name, _ in guest.events(f"/c/{conversation}/turns/{seq}/stream"):
                if name in ("token", "block") and first is None:
                    first = time.monotonic() - sent
            samples.append((sent, first, 200, posted))
        except Exception as error:  # counted, whatever it is
            samples.append((sent, None, type(error).__name__, posted))
        time.sleep(1)


def peak_rss_mb(pid: int) -> tuple[float, float]:
    """(VmHWM, VmRSS) of a process in MB."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return tuple(int(fields[key].split()[0]) / 1024 for key in ("VmHWM", "VmRSS"))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


def window(samples: list, start: float, end: float) -> tuple[list[float], dict, list[float]]:
    """First-token times, failures by status, and the POSTs' own times of the sends in [start,
    end)."""
    firsts, failures, posts = [], {}, []
    for when, first, status, posted in list(samples):
        if start <= when < end:
            if first is not None:
                firsts.append(first)
                posts.append(posted)
            else:
                failures[status] = failures.get(status, 0) + 1
    return firsts, failures, posts


def imports(database: str) -> list[tuple]:
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT options, status, stored, error, result FROM imports "
                                  "ORDER BY created_at").fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="0.4 MB and 6 MB instead of 4 and 60")
    parser.add_argument("--chatters", type=int, default=20)
    parser.add_argument("--quiet", type=float, default=30, help="seconds of the quiet run")
    parser.add_argument("--limit", type=float, default=420, help="seconds the imports may take")
    args = parser.parse_args()
    rng, scale = random.Random(7), 0.1 if args.small else 1.0
    folder = tempfile.mkdtemp(prefix="nimbus-import-load-")
    export, jsonl = os.path.join(folder, "conversations.json"), os.path.join(folder, "chat.jsonl")
    turns = write_chatgpt_export(export, 60 * scale, rng)
    lines = write_jsonl(jsonl, 4 * scale, rng)
    provider, provider_url = live_app.start_fake_provider(0.1, 12, 0.02)
    database = os.path.join(folder, "nimbus.db")
    env = live_app.app_environment(f"sqlite:///{database}", provider_url, folder)
    app, port = live_app.start_app(env, 2, folder)
    worker = live_app.start_worker(env, folder)
    running, samples = threading.Event(), []
    running.set()
    try:
        print(f"bench/import_under_load.py: gunicorn 2 gevent workers + Huey worker (2 threads), "
              f"SQLite; {args.chatters} customers chatting; {os.cpu_count()} CPUs, load "
              f"{os.getloadavg()[0]:.1f}")
        print(f"  files: ChatGPT export {os.path.getsize(export) / 1e6:.1f} MB (1 conversation, "
              f"{turns:,} turns); JSONL {os.path.getsize(jsonl) / 1e6:.1f} MB ({lines:,} lines)")
        customer = sign_in(port, env, "importer@example.com")
        pids = sorted(live_app.worker_pids(app.pid))
        threads = [threading.Thread(target=chatter, args=(port, running, samples), daemon=True)
                   for _ in range(args.chatters)]
        for thread in threads:
            thread.start()
        time.sleep(10)  # every chatter has its page and first reply: the workers are warm
        quiet_start = time.monotonic()
        time.sleep(args.quiet)
        quiet_end = time.monotonic()
        rss_before = peak_rss_mb(worker.pid)
        guest = live_app.Guest(port, timeout=600)
        guest.open()
        guest_answer = upload(guest, "chat.jsonl", jsonl)
        uploads = [(name, *upload(customer, name, path)) for name, path in
                   (("chat.jsonl", jsonl), ("conversations.json", export))]
        uploaded = time.monotonic()
        rss_peak_seen, wal_peak = rss_before[1], 0
        while time.monotonic() - uploaded < args.limit:
            rows = imports(database)
            rss_peak_seen = max(rss_peak_seen, peak_rss_mb(worker.pid)[1])
            if os.path.exists(database + "-wal"):
                wal_peak = max(wal_peak, os.path.getsize(database + "-wal"))
            if rows and all(row[1] in ("done", "failed") for row in rows):
                break
            time.sleep(0.5)
        loaded_end = time.monotonic()
        rss_after = peak_rss_mb(worker.pid)
        running.clear()
        for thread in threads:
            thread.join(60)
        quiet, quiet_failed, quiet_posts = window(samples, quiet_start, quiet_end)
        loaded, loaded_failed, loaded_posts = window(samples, quiet_end, loaded_end)
        with open(os.path.join(folder, "gunicorn.log")) as log:
            text = log.read()
        killed = text.count("WORKER TIMEOUT") + text.count("was sent SIGKILL") + \
            text.count("Worker exiting")
        now_pids = sorted(live_app.worker_pids(app.pid))
        print(f"  guest's upload of the JSONL: HTTP {guest_answer[0]}"
              f"{' (refused: a guest uploads what any request may carry)' if guest_answer[0] == 413 else ''}")
        for name, status, location in uploads:
            print(f"  customer's upload of {name}: HTTP {status} → {location or '-'}")
        all_turns = 0
        for options, status, stored, error, result in imports(database):
            files = json.loads(options)["files"]
            turns = sum(one[2] for one in json.loads(result)["conversations"]) if result else 0
            all_turns += turns
            print(f"  import of {files[0]}: {status}, {stored:,} conversations ({turns:,} turns) "
                  f"stored{'; ' + error if error else ''}")
        print(f"  imports took {loaded_end - uploaded:.0f} s after their uploads (one at a time): "
              f"{all_turns / (loaded_end - uploaded):,.0f} turns/s while the chats went on")
        print(f"  quiet run : {len(quiet)} replies, first token p50 {pct(quiet, .5):.0f} ms, "
              f"p95 {pct(quiet, .95):.0f} ms, failed {quiet_failed or 0}; the POST p50 "
              f"{pct(quiet_posts, .5):.0f} ms, p95 {pct(quiet_posts, .95):.0f} ms")
        print(f"  importing : {len(loaded)} replies, first token p50 {pct(loaded, .5):.0f} ms, "
              f"p95 {pct(loaded, .95):.0f} ms, failed {loaded_failed or 0}; the POST p50 "
              f"{pct(loaded_posts, .5):.0f} ms, p95 {pct(loaded_posts, .95):.0f} ms")
        print(f"  SQLite's write-ahead log: at most {wal_peak / 1e6:.1f} MB while importing")
        print(f"  workers killed: {killed} in gunicorn's log; web workers {pids} → {now_pids}; "
              f"Huey worker {'alive' if worker.poll() is None else 'DEAD'}")
        print(f"  Huey worker RSS: {rss_before[1]:.0f} MB before (peak so far {rss_before[0]:.0f} MB), peak {rss_after[0]:.0f} MB "
              f"(VmHWM), {rss_after[1]:.0f} MB after")
        ratio = pct(loaded, .95) / pct(quiet, .95)
        print(f"import under load ({'small' if args.small else '60 MB + 4 MB'}): first-token p95 "
              f"{pct(loaded, .95):.0f} ms importing vs {pct(quiet, .95):.0f} ms quiet "
              f"(×{ratio:.2f}), p50 {pct(loaded, .5):.0f} vs {pct(quiet, .5):.0f} ms, "
              f"{killed + len(set(pids) - set(now_pids))} workers killed, import worker peak RSS "
              f"{rss_after[0]:.0f} MB ({rss_after[0] - rss_before[0]:+.0f} MB)")
    finally:
        running.clear()
        for process in (worker, app, provider):
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
