"""A redis-server of the test's own on a free port (never the shared one on 6379), that can be
stopped and started again on the same port, as an operator or a crash would."""
import shutil
import subprocess

from .live_app import free_port, wait_for_port


class RedisServer:
    """`redis-server --port N --save ''`: nothing kept on disk, so a restart starts empty, as a
    Redis without persistence does (every queued job is gone with it)."""

    def __init__(self):
        self.port, self.process = free_port(), None

    @staticmethod
    def available() -> bool:
        return shutil.which("redis-server") is not None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, 20)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(20)
            self.process = None
