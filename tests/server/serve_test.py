#!/usr/bin/env python3
"""`semroute serve` end to end: started on loopback and on a Unix socket,
every endpoint against the CLI's answers on the same models (1e-6), hostile
requests, a bearer token, connections past the cap, slow clients, SIGTERM
under load (no accepted request lost), kill -9 and a restart, two servers
sharing a Redis cache, and a short wrk load.

    serve_test.py SEMROUTE_CLI REPO_DIR"""
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CLI, REPO = sys.argv[1], os.path.abspath(sys.argv[2])
MODELS = os.path.join(REPO, "models")
TOLERANCE = 1e-6
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def cli_json(*args):
    return json.loads(subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True).stdout)


class Server:
    """A `semroute serve` process; address() once it listens."""

    def __init__(self, config_text, workdir, name="serve", env=None, args=()):
        self.config = os.path.join(workdir, f"{name}.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.proc = subprocess.Popen([CLI, "serve", self.config, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, **(env or {})})
        line = self.proc.stdout.readline()
        if not line.startswith("listening"):
            raise RuntimeError(f"serve did not start: {line!r} {self.proc.stderr.read()}")
        parts = line.split()[1:]
        self.tcp = next((p[len("http://"):] for p in parts if p.startswith("http://")), None)
        self.unix = next((p[len("unix://"):] for p in parts if p.startswith("unix://")), None)

    def connection(self, unix=False, timeout=30):
        if unix:
            c = http.client.HTTPConnection("localhost", timeout=timeout)
            c.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.sock.settimeout(timeout)
            c.sock.connect(self.unix)
            return c
        host, port = self.tcp.rsplit(":", 1)
        return http.client.HTTPConnection(host, int(port), timeout=timeout)

    def request(self, method, path, body=None, headers=None, unix=False, timeout=30):
        c = self.connection(unix, timeout)
        try:
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            c.request(method, path, body=data, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read(), dict(r.getheaders())
        finally:
            c.close()

    def post(self, path, body, expected=200, unix=False, headers=None):
        status, data, _ = self.request("POST", path, body, headers, unix)
        check(status == expected, f"POST {path}: {status} (wanted {expected}) {data[:200]!r}")
        return json.loads(data) if data else None

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=60)


def close_to(a, b):
    return abs(a - b) <= TOLERANCE


def same_length(got, want, what):
    check(len(got) == len(want), f"{what}: {len(got)} answers for {len(want)}")
    return len(got) == len(want)


def endpoints_equal_the_cli(server):
    """Every endpoint, over TCP and over the Unix socket, against the CLI."""
    texts = ["What is the derivative of x^2 + 3x?", "Call me at 212-555-0187, David Kim.", "Ünïcödé — 日本語"]
    classified = cli_json("classify", f"{MODELS}/domain", *texts)["results"]
    entities = cli_json("tokens", f"{MODELS}/pii", *texts)["results"]
    embedded = cli_json("embed", f"{MODELS}/multitask/base", *texts)["embeddings"]
    unified = cli_json("unified", f"{MODELS}/router.yaml", texts[1])["results"][0]["tasks"]
    requests = {name: os.path.join(REPO, "examples/router/requests", name)
                for name in ("math.json", "code.json", "card.json", "jailbreak.json")}
    routed = {name: cli_json("route", os.path.join(REPO, "examples/router/router.yaml"), path)
              for name, path in requests.items()}
    text = "Please read the report.\n" + "".join(f"Nothing new happened in week {i % 9}.\n" for i in range(200)) + \
        "The Lisbon office closed after the audit of 2024.\nWhat changed?\n"
    long_path = os.path.join(os.path.dirname(server.config), "long.txt")
    with open(long_path, "w") as f:
        f.write(text)
    compressed = cli_json("compress", long_path, "--max-tokens", "40", "--tokenizer", f"{MODELS}/domain")
    for unix in (False, True):
        over = "unix" if unix else "tcp"
        answer = server.post("/v1/classify", {"model": "domain", "input": texts}, unix=unix)
        got = answer["results"]  # the runtime contract's schema: probabilities in the order of "labels"
        if same_length(got, classified, f"classify ({over})"):
            for g, w in zip(got, classified):
                probabilities = dict(zip(answer["labels"], g["probabilities"]))
                check(g["label"] == w["label"] and
                      all(close_to(probabilities[k], v) for k, v in w["probabilities"].items()),
                      f"classify {w['text']!r} ({over})")
        got = server.post("/v1/tokens", {"model": "pii", "input": texts}, unix=unix)["results"]
        if same_length(got, entities, f"tokens ({over})"):
            for g, w in zip(got, entities):
                check([(e["type"], e["begin"], e["end"]) for e in g["entities"]] ==
                      [(e["type"], e["begin"], e["end"]) for e in w["entities"]], f"tokens {w['text']!r} ({over})")
        got = server.post("/v1/embeddings", {"model": "encoder", "input": texts}, unix=unix)
        check(got["object"] == "list", f"embeddings: the OpenAI shape ({over})")
        if same_length(got["data"], embedded, f"embeddings ({over})"):
            for d in got["data"]:
                want = embedded[d["index"]]
                check(len(d["embedding"]) == len(want) and all(close_to(a, b) for a, b in zip(d["embedding"], want)),
                      f"embedding {d['index']} ({over})")
        # Two different texts: their cosine as the CLI's embeddings give it (not 1).
        cosine = sum(a * b for a, b in zip(embedded[0], embedded[1])) / (
            sum(a * a for a in embedded[0]) ** 0.5 * sum(b * b for b in embedded[1]) ** 0.5)
        got = server.post("/v1/similarity", {"model": "encoder", "a": texts[0], "b": texts[1]}, unix=unix)
        check(abs(got["similarity"] - cosine) < 1e-5 and cosine < 0.99, f"similarity {got['similarity']} vs {cosine} ({over})")
        got = server.post("/v1/unified", {"model": "default", "input": texts[1]}, unix=unix)["results"][0]["tasks"]
        check([t["task"] for t in got] == [t["task"] for t in unified], f"unified tasks ({over})")
        for g, w in zip(got, unified):
            if "confidence" in w:
                check(g["label"] == w["label"] and close_to(g["confidence"], w["confidence"]), f"unified {w['task']} ({over})")
        for name, path in requests.items():
            with open(path, "rb") as f:
                status, data, headers = server.request("POST", "/v1/route?router=default", f.read(), unix=unix)
            got, want = json.loads(data), routed[name]
            check(status == 200 and got["decision"] == want["decision"] and got["request"] == want["request"],
                  f"route {name} ({over})")
            check(headers.get("x-semroute-decision") == want["decision"], f"route {name}: the decision header ({over})")
        got = server.post("/v1/compress", {"model": "short", "input": text}, unix=unix)
        check(all(got[k] == compressed[k] for k in ("text", "tokens", "ranges", "compressed", "language")),
              f"compress ({over})")
        for path in ("/health", "/health/live", "/v1/models", "/ready", "/metrics"):
            check(server.request("GET", path, unix=unix)[0] == 200, f"GET {path} ({over})")


def hostile_requests(server):
    for body, code in ((b"{not json", "invalid_request"), (b"[1, 2]", "invalid_request"),
                       (b'{"model": "domain", "input": "bad \xff"}', "invalid_request"),
                       (b'{"model": "nope", "input": "x"}', "model_not_found"),
                       (b'{"model": "domain", "input": 5}', "invalid_request")):
        status, data, _ = server.request("POST", "/v1/classify", body)
        check(status in (400, 404) and json.loads(data)["error"]["code"] == code, f"hostile body {body[:30]!r}: {status}")
    for length in (2 << 20, 10**12):  # a body announced too big is refused before it is sent
        c = server.connection()
        c.putrequest("POST", "/v1/classify")
        c.putheader("Content-Length", str(length))
        c.endheaders()
        check(c.getresponse().status == 413, f"Content-Length {length}")
        c.close()
    c = server.connection()  # a chunked body is counted as it arrives, and refused past the limit
    c.request("POST", "/v1/classify", body=iter([b"x" * 65536] * 40), encode_chunked=True)
    check(c.getresponse().status == 413, "a 2.5 MiB chunked body")
    c.close()
    status, _, _ = server.request("GET", "/v1/" + "a" * 100000)
    check(status in (404, 414, 431, 400, 413), f"a 100 KB URL: {status}")
    for timeout in ("soon", "-5", "0", "99999999999", "12ms"):
        status, data, _ = server.request("POST", "/v1/classify", {"model": "domain", "input": "x"},
                                         {"x-semroute-timeout-ms": timeout})
        check(status == 400 and b"x-semroute-timeout-ms" in data, f"x-semroute-timeout-ms: {timeout}: {status}")
    status, _, _ = server.request("POST", "/v1/classify", {"model": "domain", "input": "x"},
                                  {"x-semroute-timeout-ms": "30000"})
    check(status == 200, f"a generous deadline: {status}")


def raw_exchange(address, data, timeout=10):
    """Sends raw bytes on a new TCP connection; everything the server sends back until it closes."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return out


def malformed_requests(server):
    """Bytes the HTTP layer refuses before the service sees them: one well-formed 400 each."""
    body = b'{"model": "domain", "input": "a"}'
    cases = {f"Content-Length {v}": b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: " + v.encode() +
             b"\r\n\r\n" + body for v in ("abc", "-1", "+33", "99999999999999999999999", "33, 34")}
    cases["no Host (HTTP/1.1)"] = b"GET /health HTTP/1.1\r\n\r\n"
    cases["NUL in the path"] = b"GET /health%00x HTTP/1.1\r\nHost: x\r\n\r\n"
    cases["newline in the path"] = b"GET /x%22%7D%201%0Afake%7Ba%3D%22 HTTP/1.1\r\nHost: x\r\n\r\n"
    cases["NUL in the query"] = b"POST /v1/route?router=default%00x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
    cases["NUL in a header"] = b"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\x00junk\r\n\r\n"
    cases["NUL after the body"] = (b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                                   str(len(body) + 5).encode() + b"\r\n\r\n" + body + b"\x00junk")
    for what, data in cases.items():
        reply = raw_exchange(server.tcp, data)
        check(reply.count(b"\r\n\r\n") == 1 and reply.startswith(b"HTTP/1.1 400 "), f"{what}: {reply[:200]!r}")
    metrics = server.request("GET", "/metrics")[1]
    check(b"fake" not in metrics, "a path cannot write into /metrics")
    check(b'semroute_requests_total{endpoint="http",status="400"}' in metrics, "refusals are counted under http")
    size = len(metrics)
    for i in range(2000):
        server.request("GET", f"/unknown-{i}")
    grown = len(server.request("GET", "/metrics")[1]) - size
    check(grown < 4096, f"2000 unknown paths grew /metrics by {grown} bytes")


def slow_headers_are_cut(workdir):
    """A client that sends a header byte now and then is cut at the header deadline with 408, and as many of
    them as the connection cap keep /health out only until then."""
    config = (f"listen: 127.0.0.1:0\nlimits: {{max_connections: 16, header_timeout_ms: 1000}}\n"
              f"models:\n  domain: {MODELS}/domain\n")
    server = Server(config, workdir, "slow")
    try:
        host, port = server.tcp.rsplit(":", 1)
        drippers = [socket.create_connection((host, int(port))) for _ in range(16)]
        start = time.time()
        request = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 60 + b"\r\n\r\n"
        answer, cut_after = b"", None
        for byte in request:
            for d in drippers:
                try:
                    d.send(bytes([byte]))
                except OSError:
                    pass
            drippers[0].settimeout(0.2)
            try:
                answer = drippers[0].recv(4096)
                cut_after = time.time() - start
                break
            except socket.timeout:
                pass
        check(answer.startswith(b"HTTP/1.1 408 "), f"a slow client gets 408: {answer[:80]!r}")
        check(cut_after is not None and cut_after < 2.5, f"cut after {cut_after} s (deadline 1 s)")
        # The others were accepted a little later: their deadlines pass a sweep or two after the first one's.
        for i, d in enumerate(drippers[1:], 1):
            check(read_to_end(d, 2.5).startswith(b"HTTP/1.1 408 "), f"slow client {i} gets 408 too")
        read_to_end(drippers[0], 2.5)
        # Each slot frees a moment after its client saw the end (the server closes, then forgets the connection);
        # a connection in that moment is closed at accept, as the cap says.
        status, deadline = None, time.time() + 1
        while status is None:
            try:
                status, _, _ = server.request("GET", "/health")
            except ConnectionError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        check(status == 200, "/health answers once the slow clients are cut")
        for d in drippers:
            d.close()
    finally:
        server.stop()


def read_to_end(sock, timeout):
    """What `sock` receives until the peer closes (or `timeout` passes)."""
    sock.settimeout(timeout)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except OSError:
        pass
    return got


def long_answer_check(server):
    """A check-answer that reads thousands of windows neither stalls other models nor outlives its deadline."""
    context = "".join(f"Record {i} of the archive lists the harbour, the mill and the bridge of town {i % 97}. "
                      for i in range(300))
    answer = " ".join(f"The bridge of town {i} was built in {1800 + i}." for i in range(30))
    body = {"detector": "wide", "context": context, "question": "When?", "answer": answer}
    result = {}

    def check_in_background():
        start = time.time()
        result["status"] = server.request("POST", "/v1/check-answer", body, timeout=300)[0]
        result["seconds"] = time.time() - start
    t = threading.Thread(target=check_in_background)
    t.start()
    time.sleep(0.3)
    latencies = []
    for _ in range(5):
        start = time.time()
        server.post("/v1/classify", {"model": "domain", "input": "What is 2 + 2?"})
        latencies.append(time.time() - start)
    t.join()
    print(f"a long check ({result.get('seconds', 0):.1f} s): classify meanwhile took at most "
          f"{max(latencies) * 1000:.0f} ms", flush=True)
    check(result.get("status") == 200, f"the long check: {result}")
    check(max(latencies) < result.get("seconds", 0) / 4,
          f"classify waited {max(latencies):.2f} s behind a {result.get('seconds', 0):.1f} s check")
    start = time.time()
    status, data, _ = server.request("POST", "/v1/check-answer", body, headers={"x-semroute-timeout-ms": "300"})
    took = time.time() - start
    check(status == 504 and took < result.get("seconds", 0) / 2,
          f"a check past its 300 ms deadline: {status} after {took:.2f} s (the whole check: {result.get('seconds')} s)")
    # A client that leaves: its check stops at the next sentence (counted as 503 in /metrics).
    payload = json.dumps(body).encode()
    host, port = server.tcp.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /v1/check-answer HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(payload)).encode() +
                     b"\r\n\r\n" + payload)
        time.sleep(0.3)
    left, deadline = time.time(), time.time() + result.get("seconds", 0) / 2
    stopped = False
    while not stopped and time.time() < deadline:
        stopped = b'endpoint="/v1/check-answer",status="503"} 1' in server.request("GET", "/metrics")[1]
        time.sleep(0.05)
    check(stopped, f"a check whose client left stops within half the check's time ({time.time() - left:.1f} s)")


def byte_bounded_stores(workdir):
    """Route requests carrying a large field and large answers stored for them: the pending routes keep none
    of it, and the semantic cache stays within its max_bytes."""
    with open(os.path.join(REPO, "examples/router/router.yaml")) as f:
        router = f.read().replace("../../models", MODELS)
    router = router.replace("threshold: 0.95", "threshold: 0.999").replace("cache:\n", "cache:\n  max_bytes: 8388608\n", 1)
    with open(os.path.join(workdir, "bounded-router.yaml"), "w") as f:
        f.write(router)
    # (Under AddressSanitizer freed memory would wait in its quarantine and count as grown.)
    asan = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0"}
    server = Server(f"listen: 127.0.0.1:0\nrouters:\n  default: {workdir}/bounded-router.yaml\n", workdir, "bounded",
                    env=asan)
    try:
        with open(os.path.join(REPO, "examples/router/requests/math.json")) as f:
            math = json.load(f)
        blob = "x" * 900_000
        words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
        for _ in range(2):
            server.request("POST", "/v1/route", {**math, "user": blob})
        before = rss_bytes(server.proc.pid)
        stored = 0
        for i in range(48):
            prompt = f"Solve for x: {i} x + {words[i % 13]} {words[(i * 7) % 13]} = {i * 3}"
            request = {**math, "messages": [{"role": "user", "content": prompt}], "user": blob}
            routed = json.loads(server.request("POST", "/v1/route", request)[1])
            if "route_id" in routed:
                answer = {"id": f"a{i}", "object": "chat.completion", "choices": [], "note": blob}
                stored += bool(server.post("/v1/route/answer", {"route_id": routed["route_id"], "response": answer})["stored"])
        grown = rss_bytes(server.proc.pid) - before
        print(f"48 routes with a 0.9 MB field, {stored} 0.9 MB answers stored: the server grew by "
              f"{grown / 2**20:.0f} MiB", flush=True)
        check(stored >= 40, f"answers stored: {stored}")
        check(grown < 32 << 20, f"the stores grew the server by {grown >> 20} MiB (46 MiB with max_bytes out of reach)")
    finally:
        server.stop()


def sigterm_with_a_long_request(workdir):
    """SIGTERM while a long request computes: the grace is kept (then the work is cancelled)."""
    config = (f"listen: 127.0.0.1:0\nlimits: {{max_check_windows: 100000}}\n"
              f"detectors:\n  wide: {{path: {workdir}/detector, windows: 0, max_length: 512}}\n")
    server = Server(config, workdir, "grace", args=["--grace-seconds", "1"])
    context = "".join(f"Record {i} lists the harbour and the mill of town {i % 97}. " for i in range(600))
    answer = " ".join(f"The mill of town {i} was built in {1800 + i}." for i in range(300))
    result = {}

    def long_check():
        result["status"] = server.request("POST", "/v1/check-answer",
                                          {"detector": "wide", "context": context, "answer": answer})[0]
    t = threading.Thread(target=long_check)
    t.start()
    time.sleep(0.5)
    start = time.time()
    code = server.stop(signal.SIGTERM)
    took = time.time() - start
    t.join()
    print(f"SIGTERM with --grace-seconds 1 during a long check: exit {code} after {took:.1f} s", flush=True)
    check(code == 0 and took < 8, f"SIGTERM with --grace-seconds 1 during a long check: exit {code} after {took:.1f} s")
    check(result.get("status") == 503, f"the cancelled check is answered 503: {result}")


def slow_and_many_connections(server):
    host, port = server.tcp.rsplit(":", 1)
    slow = []
    for _ in range(40):  # slowloris: headers that never finish
        s = socket.create_connection((host, int(port)))
        s.sendall(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    # 10,000 connections at once, far past max_connections (128): each is
    # served, closed at accept or left in the backlog, never a crash, and the
    # server's memory does not grow with them.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 10_000
    if soft < wanted + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted + 256), hard))
    count = min(wanted, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 256)
    if count < wanted:
        print(f"note: {count} connections (the file descriptor limit is {hard})", flush=True)
    rss_before = rss_bytes(server.proc.pid)
    many = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((host, int(port)))
        many.append(s)
    time.sleep(1.0)
    check(server.proc.poll() is None, f"alive with {count} connections")
    grown = rss_bytes(server.proc.pid) - rss_before
    print(f"{count} connections at once: the server grew by {grown / 2**20:.1f} MiB", flush=True)
    check(grown < 64 << 20, f"{count} connections grew the server by {grown >> 20} MiB")
    for s in many:
        s.close()
    time.sleep(0.2)
    start = time.time()
    status, _, _ = server.request("GET", "/health")
    check(status == 200 and time.time() - start < 2, f"health after {count} connections, while 40 clients stall")
    for s in slow:
        s.close()


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def bearer_token(workdir):
    config = f"listen: 127.0.0.1:0\nauth_token_env: SEMROUTE_TEST_TOKEN\nmodels:\n  domain: {MODELS}/domain\n"
    server = Server(config, workdir, "auth", env={"SEMROUTE_TEST_TOKEN": "s3cret"})
    try:
        body = {"model": "domain", "input": "x"}
        server.post("/v1/classify", body, expected=401)
        server.post("/v1/classify", body, expected=401, headers={"Authorization": "Bearer s3cre"})
        server.post("/v1/classify", body, headers={"Authorization": "Bearer s3cret"})
        check(server.request("GET", "/health")[0] == 200, "health needs no token")
    finally:
        server.stop()


def sigterm_under_load(workdir):
    """SIGTERM under 8 clients' load on kept-alive connections: every request sent is answered whole. A request
    is "not accepted" only when its connection was refused; one sent on an open connection and dropped is a
    failure."""
    config = f"listen: 127.0.0.1:0\nmodels:\n  domain: {{path: {MODELS}/domain, max_batch: 8, max_wait_us: 500}}\n"
    server = Server(config, workdir, "drain")
    answered, broken, refused, stop = [], [], [], threading.Event()
    started = threading.Barrier(9)

    def client():
        c = None
        started.wait()
        while not stop.is_set():
            if c is None:
                try:
                    c = server.connection(timeout=30)
                    c.connect()
                except ConnectionRefusedError:
                    refused.append(1)  # not accepted: the server had stopped listening
                    c = None
                    continue
            try:
                c.request("POST", "/v1/classify", body=b'{"model": "domain", "input": "What is 2 + 2?"}')
                r = c.getresponse()
                data = r.read()
                (answered if r.status == 200 and json.loads(data)["results"] else broken).append(r.status)
                if r.will_close:  # the server said Connection: close (it is draining)
                    c.close()
                    c = None
            except Exception as e:  # sent on an open connection and not answered: lost
                broken.append(repr(e))
                c.close()
                c = None
    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    started.wait()
    deadline = time.time() + 10
    while len(answered) < 200 and time.time() < deadline:
        time.sleep(0.01)
    code = server.stop(signal.SIGTERM)
    stop.set()
    for t in threads:
        t.join()
    check(code == 0, f"SIGTERM: exit code {code}")
    check(len(answered) >= 200 and not broken,
          f"SIGTERM under load: {len(answered)} answered, {len(refused)} refused, broken: {broken[:5]}")


def kill_and_restart(workdir):
    config = f"unix_socket: {workdir}/crash.sock\nmodels:\n  domain: {MODELS}/domain\n"
    server = Server(config, workdir, "crash")
    server.post("/v1/classify", {"model": "domain", "input": "x"}, unix=True)
    server.stop(signal.SIGKILL)
    try:
        server.request("GET", "/health", unix=True)
        check(False, "a killed server still answered")
    except OSError:
        pass  # the client gets an error
    again = Server(config, workdir, "crash")  # the stale socket file is replaced
    try:
        again.post("/v1/classify", {"model": "domain", "input": "x"}, unix=True)
    finally:
        again.stop()


def start_redis():
    """A redis-server on a free loopback port, answering PING: (process, port). A port another process takes
    first makes redis exit; the next is tried."""
    for attempt in range(20):
        port = 20000 + (os.getpid() * 7 + attempt * 7919) % 40000
        redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no"], stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while redis.poll() is None and time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return redis, port
            except OSError:
                time.sleep(0.02)
        redis.kill()
        redis.wait()
    raise RuntimeError("redis-server did not start on any of 20 ports")


def shared_redis_cache(workdir):
    if shutil.which("redis-server") is None:
        print("SKIP shared cache: no redis-server")
        return
    redis, port = start_redis()
    try:
        with open(os.path.join(REPO, "examples/router/router.yaml")) as f:
            router = f.read().replace("../../models", MODELS)
        router = router.replace("cache:\n  embedding_model:", f"cache:\n  backend: redis\n  redis: {{host: 127.0.0.1, port: {port}}}\n  embedding_model:")
        with open(os.path.join(workdir, "shared-router.yaml"), "w") as f:
            f.write(router)
        config = f"listen: 127.0.0.1:0\nrouters:\n  default: {workdir}/shared-router.yaml\n"
        a, b = Server(config, workdir, "a"), Server(config, workdir, "b")
        try:
            with open(os.path.join(REPO, "examples/router/requests/math.json"), "rb") as f:
                request = f.read()
            first = json.loads(a.request("POST", "/v1/route", request)[1])
            check(first.get("cache") == "miss" and "route_id" in first, f"first route: {first.get('cache')}")
            stored = a.post("/v1/route/answer", {"route_id": first["route_id"],
                                                 "response": {"id": "shared-1", "object": "chat.completion", "choices": []}})
            check(stored and stored["stored"], "stored on server a")
            second = json.loads(b.request("POST", "/v1/route", request)[1])
            check(second.get("cache") == "hit" and second.get("response", {}).get("id") == "shared-1",
                  f"server b sees server a's answer: {second.get('cache')}")
        finally:
            a.stop()
            b.stop()
    finally:
        redis.terminate()
        redis.wait()


def wrk_load(server):
    if shutil.which("wrk") is None:
        print("SKIP load: no wrk")
        return
    script = os.path.join(os.path.dirname(server.config), "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = \'{"model": "domain", "input": "What is 2 + 2?"}\'\n')
    out = subprocess.run(["wrk", "-t2", "-c16", "-d3s", "-s", script, f"http://{server.tcp}/v1/classify"],
                         capture_output=True, text=True, timeout=60).stdout
    requests = [line for line in out.splitlines() if "requests in" in line]
    check(len(requests) == 1 and int(requests[0].split()[0]) > 0, f"wrk sent requests: {out!r}")
    check("Non-2xx" not in out and "Socket errors" not in out, f"wrk: {out}")
    print(out.strip().splitlines()[-2] if out else "wrk: no output")


def sse_events(data):
    """(event, data) pairs of a text/event-stream body."""
    events = []
    for block in data.decode().split("\n\n"):
        if block:
            name, payload = block.split("\n", 1)
            events.append((name[len("event: "):], json.loads(payload[len("data: "):])))
    return events


def check_answer_equals_the_cli(server):
    workdir = os.path.dirname(server.config)
    context = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."
    answer = "It was finished in 1889. It is made of cheese! Gustave Eiffel's company built it."
    with open(os.path.join(workdir, "context.txt"), "w") as f:
        f.write(context)
    run = subprocess.run([CLI, "check-answer", os.path.join(workdir, "detector"), "--context",
                          os.path.join(workdir, "context.txt"), "--question", "When?", "--json"],
                         input=answer, capture_output=True, text=True)
    want = [json.loads(line) for line in run.stdout.splitlines()]
    check(len(want) == 3, f"the CLI judges the answer's three sentences: {run.stdout!r} {run.stderr!r}")
    same = lambda g, w: all(g[k] == w[k] for k in ("event", "begin", "end", "text")) and close_to(g["max_score"], w["max_score"])
    sse = "".join("data: " + json.dumps({"choices": [{"delta": {"content": answer[i:i + 5]}}]}) + "\n\n"
                  for i in range(0, len(answer), 5)) + "data: [DONE]\n\n"
    status, data, headers = server.request("POST", "/v1/check-answer",
                                           {"detector": "d", "context": context, "question": "When?", "stream": sse})
    events = sse_events(data) if status == 200 else []
    check(headers.get("Content-Type") == "text/event-stream", "check-answer: an event stream")
    check(len(events) == len(want) + 1 and events[-1][0] == "done" and
          all(same(g, w) for (_, g), w in zip(events, want)), f"check-answer equals the CLI: {data[:300]!r}")
    opened = server.post("/v1/check-answer/streams", {"detector": "d", "context": context, "question": "When?"},
                         expected=201, unix=True)
    path = "/v1/check-answer/streams/" + opened["stream"]
    got = []
    for i in range(0, len(sse), 40):
        got += server.post(path, sse[i:i + 40].encode(), unix=True)["events"]
    status, data, _ = server.request("DELETE", path, unix=True)
    got += json.loads(data)["events"]
    check(len(got) == len(want) and all(same(g, w) for g, w in zip(got, want)), "an answer stream equals the CLI")


def timed(step, *args):
    start = time.time()
    step(*args)
    print(f"-- {step.__name__}: {time.time() - start:.1f} s", flush=True)


def main():
    workdir = tempfile.mkdtemp(prefix="semroute-serve-")
    subprocess.run([CLI, "make-model", "tiny", f"{workdir}/detector", "--token-labels", "SUPPORTED,HALLUCINATED",
                    "--tokenizer", f"{REPO}/tests/data/tokenizers/modernbert/tokenizer.json"],
                   check=True, capture_output=True)
    config = (f"listen: 127.0.0.1:0\nunix_socket: {workdir}/serve.sock\nlimits: {{max_connections: 128, max_check_windows: 4096}}\n"
              f"models:\n  domain: {{path: {MODELS}/domain, max_batch: 8, max_wait_us: 1000}}\n"
              f"  pii: {MODELS}/pii\n  encoder: {{path: {MODELS}/multitask/base, task: embedding}}\n"
              f"unified:\n  default: {MODELS}/router.yaml\nrouters:\n  default: {REPO}/examples/router/router.yaml\n"
              f"compressors:\n  short: {{max_tokens: 40, tokenizer: {MODELS}/domain}}\n"
              f"detectors:\n  d: {workdir}/detector\n  wide: {{path: {workdir}/detector, windows: 0, max_length: 512}}\n")
    server = Server(config, workdir)
    try:
        for step in (endpoints_equal_the_cli, check_answer_equals_the_cli, hostile_requests, malformed_requests,
                     long_answer_check, slow_and_many_connections, wrk_load):
            timed(step, server)
        check(server.request("GET", "/health")[0] == 200, "still healthy after all that")
    finally:
        check(server.stop() == 0, "the main server exits 0")
    for step in (bearer_token, slow_headers_are_cut, byte_bounded_stores, sigterm_under_load,
                 sigterm_with_a_long_request, kill_and_restart, shared_redis_cache):
        timed(step, workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    if failures:
        print(f"serve test: {len(failures)} failure(s)")
        return 1
    print("serve test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
