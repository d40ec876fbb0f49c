"""gunicorn's settings for Nimbus, read from the working directory (scripts/serve.sh runs it there).

A request line too long for the app (webapp/security/validation.py: MAX_REQUEST_LINE) reaches the
app, which refuses it with a readable 414 and its security headers; one longer than gunicorn's
ceiling (8190 bytes, the most it allows) gunicorn refuses itself, and its own refusals (414, 431,
400) carry the same headers.
"""
import html

limit_request_line = 8190  # gunicorn's ceiling: a bound on what a worker reads, twice the app's


def post_worker_init(worker) -> None:
    """Give gunicorn's own error responses the app's security headers, in each worker."""
    from gunicorn import util

    from webapp.security.headers import security_headers

    headers = "".join(f"{name}: {value}\r\n" for name, value in
                      security_headers(worker.wsgi.config).items())

    def write_error(sock, status_int, reason, mesg):
        """gunicorn's util.write_error, with the headers."""
        body = (f"<html><head><title>{reason}</title></head><body><h1>{reason}</h1>"
                f"<p>{html.escape(mesg)}</p></body></html>")
        response = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
                    f"Content-Type: text/html\r\nContent-Length: {len(body)}\r\n"
                    f"Cache-Control: no-store\r\n{headers}\r\n{body}")
        util.write_nonblock(sock, response.encode("latin-1", "replace"))

    util.write_error = write_error
