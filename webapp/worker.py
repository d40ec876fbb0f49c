"""The worker's entry point, `huey_consumer webapp.worker.huey`: the app, built as the web's is.

create_app reads the same configuration (REDIS_URL, NIMBUS_JOBS_DB, .env) and its packages'
init_app load every module with jobs, so the consumer finds them all on this queue.

The worker runs at a lower CPU priority than the web workers: its jobs (imports, embeddings,
summaries) come after the answers people wait for, which on a machine of few cores a 60 MB
import's parsing would otherwise share evenly (bench/import_under_load.py).
"""
import os

from . import create_app

NICENESS = 10  # added to the worker's; what `nice -n 10` would start it with

os.nice(NICENESS)
app = create_app()
huey = app.extensions["huey"]
