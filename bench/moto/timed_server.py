"""moto_server with a timing log: one tab-separated line per AWS request.

Run it in place of moto_server (same arguments) and point aws-local at it:

    PATH=/tmp/ci-base/.venv/bin:$PATH python bench/moto/timed_server.py -H 127.0.0.1 -p 5077 &
    cd web && AWS_ENDPOINT_URL=http://127.0.0.1:5077 AWS_ACCESS_KEY_ID=testing \\
      AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 LOOPBACK_E2E_TARGET=aws-local \\
      node --test --test-name-pattern='pages back' test/e2e/inbox.test.mjs

Each line (to $MOTO_TIMING_LOG, default moto-timing.log): the Unix time, the operation
(X-Amz-Target's tail), the milliseconds moto took, bytes in, bytes out, then for a Query its key
condition, index, filter, limit and Count, and for a GetItem its key's prefixes. Summed by
operation, it shows which DynamoDB calls grow with the table (docs/benchmarks.md, "Inbox (issue 29)").
"""
import io
import json
import os
import sys
import threading
import time

from moto import server
from moto.moto_server import werkzeug_app

LOG = open(os.environ.get("MOTO_TIMING_LOG", "moto-timing.log"), "a", buffering=1)
LOCK = threading.Lock()
ORIGINAL = werkzeug_app.DomainDispatcherApplication.__call__


def describe(body, out):
    try:
        req = json.loads(body)
        info = ""
        if "Key" in req:
            info += " key=" + ",".join(str(next(iter(v.values()))).split("#")[0] for v in req["Key"].values())
        if "TransactItems" in req:
            info += " n=%d" % len(req["TransactItems"])
        if "KeyConditionExpression" in req:
            info += " kc=%s idx=%s filter=%s limit=%s" % (
                req["KeyConditionExpression"], req.get("IndexName"), bool(req.get("FilterExpression")), req.get("Limit"))
            resp = json.loads(out or b"{}")
            info += " count=%s" % resp.get("Count")
        return info
    except Exception:  # a body that is not JSON: S3, say
        return ""


def timed(self, environ, start_response):
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    body = b""
    if target:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
    t0 = time.perf_counter()
    chunks = list(ORIGINAL(self, environ, start_response))
    ms = (time.perf_counter() - t0) * 1000
    if target:
        out = b"".join(chunks)
        with LOCK:
            LOG.write("%.3f\t%s\t%.1f\t%d\t%d\t%s\n" % (time.time(), target.split(".")[-1], ms, len(body), len(out), describe(body, out)))
    return chunks


werkzeug_app.DomainDispatcherApplication.__call__ = timed

if __name__ == "__main__":
    server.main(sys.argv[1:])
