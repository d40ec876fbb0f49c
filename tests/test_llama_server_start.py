"""The real-server harness starts llama-server so that it runs on CPUs whose AMX repacking faults."""
import stat
import sys
import textwrap

from tests.llama_server import LlamaServer

FAKE = textwrap.dedent('''\
    #!{python}
    """A llama-server that dies with SIGILL at load unless told --no-repack, like one on a faulty-AMX CPU."""
    import http.server, os, signal, sys
    if "--no-repack" not in sys.argv:
        os.kill(os.getpid(), signal.SIGILL)
    port = int(sys.argv[sys.argv.index("--port") + 1])
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
''')


def test_server_on_a_cpu_whose_repacking_faults_still_starts(tmp_path):
    binary = tmp_path / "llama-server"
    binary.write_text(FAKE.format(python=sys.executable))
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"")
    server = LlamaServer(str(tmp_path / "server.log"), binary=str(binary), model=str(model))
    try:
        server.start(timeout=30)
        assert server.process.poll() is None
        assert "--no-repack" in server.process.args
    finally:
        server.stop()
