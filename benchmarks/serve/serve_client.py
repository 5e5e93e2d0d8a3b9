"""What the Python benchmarks of `semroute serve` share: one request over
its Unix socket, and the CPU's name for their tables."""
import http.client
import json
import platform
import socket
import time


def post(sock_path, path, body):
    c = http.client.HTTPConnection("localhost", timeout=600)
    c.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.sock.connect(sock_path)
    start = time.time()
    c.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = json.loads(r.read())
    c.close()
    return r.status, data, time.time() - start


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()
