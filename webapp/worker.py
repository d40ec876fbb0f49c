"""The worker's entry point, `huey_consumer webapp.worker.huey`: the app, built as the web's is.

create_app reads the same configuration (REDIS_URL, NIMBUS_JOBS_DB, .env) and its packages'
init_app load every module with jobs, so the consumer finds them all on this queue.
"""
from . import create_app

app = create_app()
huey = app.extensions["huey"]
