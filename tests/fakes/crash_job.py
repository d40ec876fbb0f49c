"""A background job that notes each start and finish in a file, and can die half-way."""
import os

from webapp.jobs import job, register_jobs


@job()
def noted_job(path: str) -> None:
    with open(path, "a") as notes:
        notes.write("started\n")
    if os.environ.get("NIMBUS_TEST_DIE_MID_JOB") == "1":
        os._exit(9)  # as a worker killed mid-run: no cleanup of any kind
    with open(path, "a") as notes:
        notes.write("finished\n")


register_jobs(noted_job)  # as a package's init_app does, so the sweep can queue it again
