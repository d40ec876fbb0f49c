"""An OTLP/HTTP trace receiver on a free port: what Jaeger or Langfuse would get, kept in a list.
tests/test_tracing.py reads the spans; bench/load.py counts them to prove tracing was on."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class Collector(BaseHTTPRequestHandler):
    """POST /v1/traces with a protobuf ExportTraceServiceRequest."""
    received: list = []  # (path, content type, request)

    def do_POST(self):  # noqa: N802  the http.server hook
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.received.append((self.path, self.headers["Content-Type"], request))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args):
        pass


def spans(received: list) -> list:
    return [span for _, _, request in received for rs in request.resource_spans
            for ss in rs.scope_spans for span in ss.spans]


def start() -> ThreadingHTTPServer:
    """A running receiver (stop it with .shutdown()); its requests land in Collector.received."""
    Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
