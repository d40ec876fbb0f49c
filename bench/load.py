"""Reply runs under load: N guests at once send a tool-using question and read the SSE reply to
`done`, while other guests rename their conversations.

The app runs under gunicorn with gevent workers as scripts/serve.sh runs it, against its own slow
fake OpenAI-compatible server (a delay before each call's first token, a tool call, then words at
a set pace). Each guest has its own session and CSRF token. A send refused as busy (503 with
Retry-After) is retried after the time it asks for and counted as a refusal, not a failure.
Figures are ratios against one guest alone, measured first in the same run. Rate limits are off
in the app (NIMBUS_RATE_LIMIT_ENABLED=0): every guest here shares one IP address.

    python bench/load.py --n 50,200                          # SQLite (the default), 2 workers
    python bench/load.py --n 500 --database postgresql --redis
    python bench/load.py --n 50 --tracing                    # the same, tracing off then on

Each N also prints the CPU a reply cost: the app's web workers, this bench's own guests, and
the whole machine, with how busy the machine was: a crowd that keeps every CPU busy waits for
CPU, not for a queue the app could remove.
Ends with one line for the largest N:
load @N streams: completed C/N, failed F, pending P, first-token p95 X ms, other-user write p95 Y ms
With --tracing the whole run is made twice, on a fresh database each time: without
OTEL_EXPORTER_OTLP_ENDPOINT, then with it pointing at an OTLP/HTTP receiver in this process
(tests/fakes/otlp_collector.py), and ends with
tracing on/off @N: first-token p95 A / B ms (×R), reply p95 C / D ms (×S), S spans received
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import secrets  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.fakes import live_app  # noqa: E402

QUESTION = "Where is my order #1042?"
POSTGRES = os.environ.get("NIMBUS_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("NIMBUS_BENCH_REDIS", "redis://127.0.0.1:6379/13")


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def converse(port: int, words: int, result: dict) -> None:
    """One guest: open the page, send (again after each busy answer), read the reply to done."""
    guest = live_app.Guest(port)
    try:
        guest.open()
        while True:
            sent = time.monotonic()
            status, headers, body = guest.fetch("POST", "/messages", form={"message": QUESTION})
            if status != 503:
                break
            result["refusals"] = result.get("refusals", 0) + 1
            gevent.sleep(float(headers.get("Retry-After", 1)))
        if status != 200:
            result["error"] = f"send answered {status}"
            return
        result["conversation"] = headers["HX-Push-Url"].rsplit("/", 1)[1]
        for name, data in guest.events(f"/c/{result['conversation']}/turns/0/stream"):
            if name == "token" and "first_token" not in result:
                result["first_token"] = time.monotonic() - sent
            if name == "done":
                result["total"] = time.monotonic() - sent
                full = f"w{words - 1}" in data and "Stopped" not in data
                result["ok"] = full and "Couldn" not in data
                if not result["ok"]:
                    result["error"] = "done without the full answer"
        result.setdefault("error", "the stream ended before done")
    except Exception as error:  # a failure to count, whatever it is
        result["error"] = f"{type(error).__name__}: {error}"


def renamer(port: int, words: int, running, latencies: list, failures: list) -> None:
    """Another guest renaming its own conversation again and again while the streams run."""
    mine = live_app.Guest(port)
    mine.open()
    status, headers, _ = mine.fetch("POST", "/messages", form={"message": "Hello"})
    conversation = headers.get("HX-Push-Url", "/").rsplit("/", 1)[1]
    try:
        if status == 200:
            list(mine.events(f"/c/{conversation}/turns/0/stream"))
    except (OSError, ConnectionError):  # its own reply failed: renaming still measures writes
        pass
    index = 0
    while running.is_set():
        index += 1
        started = time.monotonic()
        status, _, _ = mine.fetch("PATCH", f"/c/{conversation}", headers={"HX-Prompt": f"Renamed {index}"})
        (latencies if status == 200 else failures).append((time.monotonic() - started) * 1000)
        gevent.sleep(0.25)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU these processes have used (0 for one that is gone)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def machine_busy() -> float:
    """CPU-seconds the whole machine has spent busy (not idle or waiting on the disk)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def cpu_now(web: list[int]) -> tuple:
    return cpu_seconds(web), resource.getrusage(resource.RUSAGE_SELF), machine_busy()


def load(port: int, n: int, words: int, database_url: str, renamers: int, web=()) -> dict:
    from gevent.event import Event
    running, latencies, failures = Event(), [], []
    cpu_before = cpu_now(list(web))
    results = [{} for _ in range(n)]
    writers = [gevent.spawn(renamer, port, words, running, latencies, failures)
               for _ in range(renamers)]
    running.set()
    gevent.sleep(1)  # the renamers have their conversations (their replies stream meanwhile)
    started = time.monotonic()
    gevent.joinall([gevent.spawn(converse, port, words, result) for result in results])
    wall = time.monotonic() - started
    cpu_after = cpu_now(list(web))
    running.clear()
    gevent.joinall(writers, timeout=30)
    errors: dict[str, int] = {}
    for result in results:
        if not result.get("ok"):
            errors[result.get("error", "?")] = errors.get(result.get("error", "?"), 0) + 1
    return {"n": n, "completed": sum(1 for r in results if r.get("ok")),
            "failed": sum(1 for r in results if not r.get("ok")),
            "pending": live_app.pending_turns(database_url),
            "refusals": sum(r.get("refusals", 0) for r in results),
            "first": [r["first_token"] * 1000 for r in results if "first_token" in r],
            "total": [r["total"] * 1000 for r in results if "total" in r],
            "writes": latencies, "write_failures": len(failures), "wall": wall, "errors": errors,
            "cpu": {"web": cpu_after[0] - cpu_before[0],
                    "client": (cpu_after[1].ru_utime + cpu_after[1].ru_stime
                               - cpu_before[1].ru_utime - cpu_before[1].ru_stime),
                    "machine": cpu_after[2] - cpu_before[2]}}


def print_table(row: dict, baseline: dict) -> None:
    base_first, base_total = p(baseline["first"], 0.5), p(baseline["total"], 0.5)
    print(f"\n{row['n']} concurrent streams (wall {row['wall']:.1f} s)")
    print(f"  {'completed':<28}{row['completed']}/{row['n']}")
    print(f"  {'failed':<28}{row['failed']}  {row['errors'] or ''}")
    print(f"  {'pending turns left':<28}{row['pending']}")
    print(f"  {'busy refusals (retried)':<28}{row['refusals']}")
    for label, values, base in (("first token", row["first"], base_first),
                                ("reply to done", row["total"], base_total)):
        print(f"  {label:<28}p50 {p(values, .5):7.0f} ms  p95 {p(values, .95):7.0f} ms  "
              f"(p95 ×{p(values, .95) / base:.2f} of one guest alone)")
    cpu, cores = row["cpu"], os.cpu_count()
    print(f"  {'CPU per reply':<28}web workers {cpu['web'] * 1000 / row['n']:.1f} ms, this bench's "
          f"guests {cpu['client'] * 1000 / row['n']:.1f} ms, whole machine "
          f"{cpu['machine'] * 1000 / row['n']:.1f} ms; the machine was busy "
          f"{cpu['machine'] / (cores * row['wall']):.0%} of its {cores} CPUs for {row['wall']:.1f} s")
    print(f"  {'other-user rename':<28}p50 {p(row['writes'], .5):7.0f} ms  "
          f"p95 {p(row['writes'], .95):7.0f} ms  ({len(row['writes'])} renames, "
          f"{row['write_failures']} failed)")


def run(args, label: str = "", **extra) -> dict:
    """Serve the app on a fresh database and load it at each N; the row of the largest N."""
    folder = tempfile.mkdtemp(prefix="nimbus-load-")
    provider, provider_url = live_app.start_fake_provider(args.first_token_delay, args.words, args.pace)
    database_url, cleanup = f"sqlite:///{folder}/nimbus.db", None
    if args.database == "postgresql":
        import psycopg
        name = f"nimbus_load_{secrets.token_hex(4)}"
        admin = psycopg.connect(POSTGRES, autocommit=True)
        admin.execute(f'CREATE DATABASE "{name}"')
        database_url = POSTGRES.rsplit("/", 1)[0] + "/" + name
        cleanup = lambda: admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # noqa: E731
    env = live_app.app_environment(database_url, provider_url, folder,
                                   **({"REDIS_URL": REDIS} if args.redis else {}), **extra)
    app, port = live_app.start_app(env, args.workers, folder)
    try:
        print(f"bench/load.py{label}: {args.workers} gevent workers, {args.database}"
              f"{' + Redis' if args.redis else ''}; provider: {args.first_token_delay} s before "
              f"each first token, a tool call, {args.words} words {args.pace} s apart; "
              f"{args.renamers} guests renaming meanwhile; rate limits off (one shared IP); "
              f"{os.cpu_count()} CPUs")
        web = [app.pid, *live_app.worker_pids(app.pid)]
        load(port, 2 * args.workers, args.words, database_url, 0)  # warm every worker up
        baseline = load(port, 1, args.words, database_url, 0, web)
        print(f"one guest alone: first token {p(baseline['first'], .5):.0f} ms, "
              f"reply to done {p(baseline['total'], .5):.0f} ms")
        for n in (int(value) for value in args.n.split(",")):
            row = load(port, n, args.words, database_url, args.renamers, web)
            print_table(row, baseline)
        print(f"load @{row['n']} streams{label}: completed {row['completed']}/{row['n']}, "
              f"failed {row['failed']}, pending {row['pending']}, first-token p95 "
              f"{p(row['first'], .95):.0f} ms, other-user write p95 {p(row['writes'], .95):.0f} ms")
        return row
    finally:
        app.terminate()
        app.wait(30)
        provider.terminate()
        if cleanup:
            cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="50,200", help="comma-separated numbers of guests")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--redis", action="store_true", help="REDIS_URL for locks and jobs")
    parser.add_argument("--first-token-delay", type=float, default=0.5)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--pace", type=float, default=0.15)
    parser.add_argument("--renamers", type=int, default=4)
    parser.add_argument("--tracing", action="store_true",
                        help="run twice: tracing off, then on (OTLP/HTTP to a local receiver)")
    args = parser.parse_args()
    off = run(args, " (tracing off)" if args.tracing else "")
    if not args.tracing:
        return
    from tests.fakes import otlp_collector
    collector = otlp_collector.start()
    try:
        on = run(args, " (tracing on)", OTEL_EXPORTER_OTLP_ENDPOINT=
                 f"http://127.0.0.1:{collector.server_port}", OTEL_BSP_SCHEDULE_DELAY=500)
        gevent.sleep(2)  # the workers' batch exporters have sent what they buffered at exit
        received = len(otlp_collector.spans(otlp_collector.Collector.received))
    finally:
        collector.shutdown()
    ratios = [p(on[k], .95) / p(off[k], .95) for k in ("first", "total")]
    print(f"tracing on/off @{on['n']}: first-token p95 {p(on['first'], .95):.0f} / "
          f"{p(off['first'], .95):.0f} ms (×{ratios[0]:.2f}), reply p95 {p(on['total'], .95):.0f} / "
          f"{p(off['total'], .95):.0f} ms (×{ratios[1]:.2f}), {received} spans received")


if __name__ == "__main__":
    main()
