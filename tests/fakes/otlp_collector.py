"""An OTLP/HTTP receiver of traces and metrics on a free port: what Jaeger or Langfuse would get,
kept in a list. tests/test_tracing.py reads the spans and metrics; bench/load.py counts spans to
prove tracing was on."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class Collector(BaseHTTPRequestHandler):
    """POST /v1/traces or /v1/metrics with a protobuf Export…ServiceRequest."""
    received: list = []  # (path, content type, request)

    def do_POST(self):  # noqa: N802  the http.server hook
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportMetricsServiceRequest() if self.path.endswith("/v1/metrics") \
            else ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.received.append((self.path, self.headers["Content-Type"], request))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args):
        pass


def spans(received: list) -> list:
    return [span for path, _, request in received if path.endswith("/v1/traces")
            for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def metrics(received: list) -> dict:
    """Metric name → its data points in the newest metrics request (the SDK's temporality is
    cumulative: each export holds everything so far)."""
    found: dict = {}
    requests = [request for path, _, request in received if path.endswith("/v1/metrics")]
    for request in requests[-1:]:
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    found.setdefault(metric.name, []).extend(metric.histogram.data_points)
    return found


def start() -> ThreadingHTTPServer:
    """A running receiver (stop it with .shutdown()); its requests land in Collector.received."""
    Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
