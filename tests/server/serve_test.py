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

    def __init__(self, config_text, workdir, name="serve", env=None):
        self.config = os.path.join(workdir, f"{name}.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.proc = subprocess.Popen([CLI, "serve", self.config], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
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

    def request(self, method, path, body=None, headers=None, unix=False):
        c = self.connection(unix)
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


def endpoints_equal_the_cli(server):
    texts = ["What is the derivative of x^2 + 3x?", "Call me at 212-555-0187, David Kim.", "Ünïcödé — 日本語"]
    for unix in (False, True):
        got = server.post("/v1/classify", {"model": "domain", "input": texts}, unix=unix)["results"]
        want = cli_json("classify", f"{MODELS}/domain", *texts)["results"]
        for g, w in zip(got, want):
            check(g["label"] == w["label"] and all(close_to(g["probabilities"][k], v) for k, v in w["probabilities"].items()),
                  f"classify {w['text']!r} (unix={unix})")
    got = server.post("/v1/tokens", {"model": "pii", "input": texts})["results"]
    want = cli_json("tokens", f"{MODELS}/pii", *texts)["results"]
    for g, w in zip(got, want):
        check([(e["type"], e["begin"], e["end"]) for e in g["entities"]] ==
              [(e["type"], e["begin"], e["end"]) for e in w["entities"]], f"tokens {w['text']!r}")
    got = server.post("/v1/embeddings", {"model": "encoder", "input": texts[:2]})
    want = cli_json("embed", f"{MODELS}/multitask/base", *texts[:2])["embeddings"]
    check(got["object"] == "list" and len(got["data"]) == 2, "embeddings: the OpenAI shape")
    for d in got["data"]:
        check(all(close_to(a, b) for a, b in zip(d["embedding"], want[d["index"]])), f"embedding {d['index']}")
    got = server.post("/v1/unified", {"model": "default", "input": texts[1]})["results"][0]["tasks"]
    want = cli_json("unified", f"{MODELS}/router.yaml", texts[1])["results"][0]["tasks"]
    check([t["task"] for t in got] == [t["task"] for t in want], "unified tasks")
    for g, w in zip(got, want):
        if "confidence" in w:
            check(g["label"] == w["label"] and close_to(g["confidence"], w["confidence"]), f"unified {w['task']}")
    for name in ("math.json", "code.json", "card.json", "jailbreak.json"):
        path = os.path.join(REPO, "examples/router/requests", name)
        with open(path, "rb") as f:
            status, data, headers = server.request("POST", "/v1/route?router=default", f.read())
        want = cli_json("route", os.path.join(REPO, "examples/router/router.yaml"), path)
        got = json.loads(data)
        check(status == 200 and got["decision"] == want["decision"] and got["request"] == want["request"],
              f"route {name}")
        check(headers.get("x-semroute-decision") == want["decision"], f"route {name}: the decision header")
    text = "Please read the report.\n" + "".join(f"Nothing new happened in week {i % 9}.\n" for i in range(200)) + \
        "The Lisbon office closed after the audit of 2024.\nWhat changed?\n"
    long_path = os.path.join(os.path.dirname(server.config), "long.txt")
    with open(long_path, "w") as f:
        f.write(text)
    want = cli_json("compress", long_path, "--max-tokens", "40", "--tokenizer", f"{MODELS}/domain")
    got = server.post("/v1/compress", {"model": "short", "input": text})
    check(all(got[k] == want[k] for k in ("text", "tokens", "ranges", "compressed", "language")), "compress")


def hostile_requests(server):
    for body, code in ((b"{not json", "invalid_argument"), (b"[1, 2]", "invalid_argument"),
                       (b'{"model": "domain", "input": "bad \xff"}', "invalid_argument"),
                       (b'{"model": "nope", "input": "x"}', "not_found"),
                       (b'{"model": "domain", "input": 5}', "invalid_argument")):
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
    config = f"listen: 127.0.0.1:0\nmodels:\n  domain: {{path: {MODELS}/domain, max_batch: 8, max_wait_us: 500}}\n"
    server = Server(config, workdir, "drain")
    answered, broken, stop = [], [], threading.Event()

    def client():
        while not stop.is_set():
            try:
                c = server.connection(timeout=30)
                c.request("POST", "/v1/classify", body=b'{"model": "domain", "input": "What is 2 + 2?"}')
                r = c.getresponse()
                data = r.read()
                (answered if r.status == 200 and json.loads(data)["results"] else broken).append(r.status)
                c.close()
            except (ConnectionRefusedError, ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError):
                pass  # not accepted: the server had stopped listening
            except Exception as e:  # a response cut short is a lost request
                broken.append(repr(e))
    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    code = server.stop(signal.SIGTERM)
    stop.set()
    for t in threads:
        t.join()
    check(code == 0, f"SIGTERM: exit code {code}")
    check(len(answered) > 20 and not broken, f"SIGTERM under load: {len(answered)} answered, broken: {broken[:5]}")


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


def shared_redis_cache(workdir):
    if shutil.which("redis-server") is None:
        print("SKIP shared cache: no redis-server")
        return
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
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


def main():
    workdir = tempfile.mkdtemp(prefix="semroute-serve-")
    subprocess.run([CLI, "make-model", "tiny", f"{workdir}/detector", "--token-labels", "SUPPORTED,HALLUCINATED",
                    "--tokenizer", f"{REPO}/tests/data/tokenizers/modernbert/tokenizer.json"],
                   check=True, capture_output=True)
    config = (f"listen: 127.0.0.1:0\nunix_socket: {workdir}/serve.sock\nlimits: {{max_connections: 128}}\n"
              f"models:\n  domain: {{path: {MODELS}/domain, max_batch: 8, max_wait_us: 1000}}\n"
              f"  pii: {MODELS}/pii\n  encoder: {{path: {MODELS}/multitask/base, task: embedding}}\n"
              f"unified:\n  default: {MODELS}/router.yaml\nrouters:\n  default: {REPO}/examples/router/router.yaml\n"
              f"compressors:\n  short: {{max_tokens: 40, tokenizer: {MODELS}/domain}}\n"
              f"detectors:\n  d: {workdir}/detector\n")
    server = Server(config, workdir)
    try:
        for step in (endpoints_equal_the_cli, check_answer_equals_the_cli, hostile_requests, slow_and_many_connections, wrk_load):
            step(server)
        check(server.request("GET", "/health")[0] == 200, "still healthy after all that")
    finally:
        check(server.stop() == 0, "the main server exits 0")
    for step in (bearer_token, sigterm_under_load, kill_and_restart, shared_redis_cache):
        step(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    if failures:
        print(f"serve test: {len(failures)} failure(s)")
        return 1
    print("serve test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
