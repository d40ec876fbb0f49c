"""Redis stopped under load: every answer during the outage is the clear 503 (never a bare 500),
and every turn stored gets its vector once Redis is back (no job lost).

The app runs under gunicorn (gevent workers) as scripts/serve.sh runs it, with a Huey worker,
REDIS_URL pointing at a redis-server of its own on a free port (tests/fakes/redis_server.py; the
shared one on 6379 is never touched), and a fast fake OpenAI-compatible server. N guests send
one question after another and read each reply's stream to `done`; after --before seconds Redis
is stopped (its process ended: its queue is lost with it) for --outage seconds, then started
again, empty. The guests go on for --after seconds, then the bench waits for every finished turn
to have its vector (the worker's minute sweep, memories/search/lost_vectors.py) and prints:

redis outage of D s under N guests: R requests, 0 bare 500s, S 503s, T turns stored, V without a vector at the restart, all vectors X s after the restart

    python bench/redis_outage.py [--guests 8] [--outage 20] [--workers 2]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.fakes.redis_outage import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--guests", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--before", type=float, default=8, help="seconds of load before the stop")
    parser.add_argument("--outage", type=float, default=20, help="seconds Redis is stopped")
    parser.add_argument("--after", type=float, default=8, help="seconds of load after the restart")
    parser.add_argument("--wait", type=float, default=180,
                        help="seconds after the restart to wait for every turn's vector")
    args = parser.parse_args()
    print(f"bench/redis_outage.py: {args.guests} guests, gunicorn {args.workers} gevent workers "
          f"+ Huey worker, SQLite + Redis (own redis-server), {os.cpu_count()} CPUs")
    row = run(args.guests, args.before, args.outage, args.after, args.workers, args.wait)
    print(f"  answers by status: {dict(sorted(row['statuses'].items()))}")
    print(f"  connection errors: {row['errors'] or 0}")
    for line in row["bare"][:10]:
        print(f"  bare: {line}")
    print(f"  turns stored {row['turns']}, left pending {row['pending']}, without a vector when the "
          f"load ended {row['lacking_after_load']}, still without one {row['lacking']}")
    print(f"redis outage of {row['outage']:g} s under {row['guests']} guests: {row['requests']} "
          f"requests, {len(row['bare'])} bare 500s, {row['statuses'].get(503, 0)} 503s, "
          f"{row['turns']} turns stored, {row['lacking_after_load']} without a vector after the "
          f"load, {'all vectors' if not row['lacking'] else str(row['lacking']) + ' still without'}"
          f" {row['vectors_after']:.0f} s after the restart (logs in {row['folder']})")


if __name__ == "__main__":
    main()
