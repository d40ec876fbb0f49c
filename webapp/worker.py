"""The worker's entry point: `huey_consumer webapp.worker.huey` imports every module with jobs."""
from .jobs import huey  # noqa: F401
from .memories import jobs as memory_jobs  # noqa: F401
from .context.summary import jobs as summary_jobs  # noqa: F401
from .chat import deletion_jobs  # noqa: F401
