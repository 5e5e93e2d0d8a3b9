#!/usr/bin/env python3
"""What long inputs cost `semroute serve` under the runtime contract: the
server's resident memory before and after a 5 MiB input (rejected, and cut
under truncate, to classify and to embeddings), and a 32K-token document read
in windows; time per request. A benchmark, not a test.

    long_inputs.py SEMROUTE_CLI REPO_DIR"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/server"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime_packages  # noqa: E402
from serve_client import cpu_name, post  # noqa: E402

CLI, REPO = sys.argv[1], os.path.abspath(sys.argv[2])


def status_mb(pid, field):
    """A memory field of /proc/PID/status (VmRSS: now, VmHWM: the peak), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_mb(pid):
    return status_mb(pid, "VmRSS")


def peak_mb(pid):
    return status_mb(pid, "VmHWM")


def main():
    work = tempfile.mkdtemp(prefix="semroute-long-")
    packages = runtime_packages.make_packages(CLI, REPO, os.path.join(work, "p"))
    sock = os.path.join(work, "s.sock")
    models = os.path.join(REPO, "models")
    config = os.path.join(work, "serve.yaml")
    with open(config, "w") as f:
        f.write(f"unix_socket: {sock}\nlimits: {{max_body_bytes: 67108864}}\nmodels:\n"
                f"  domain: {models}/domain\n  encoder: {{path: {models}/multitask/base, task: embedding}}\n"
                f"  scores: {packages['scores']}\n")
    proc = subprocess.Popen([CLI, "serve", config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.readline()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} vCPU")
    print(f"server RSS after load: {rss_mb(proc.pid):.0f} MB")
    text = ("The quick brown fox jumps over the lazy dog. " * 120000)[: 5 << 20]  # 5 MiB
    cases = [("classify, reject (5 MiB)", "/v1/classify", {"model": "domain", "input": text}),
             ("classify, truncate (5 MiB)", "/v1/classify", {"model": "domain", "input": text,
                                                             "options": {"overflow": "truncate"}}),
             ("embeddings, truncate (5 MiB)", "/v1/embeddings", {"model": "encoder", "input": text,
                                                                 "options": {"overflow": "truncate"}}),
             ("classify, window scan of 32K tokens (tiny scores model, 512-token windows)", "/v1/classify",
              {"model": "scores", "input": "word " * 32000,
               "options": {"overflow": "window", "max_tokens": 32768, "window": {"tokens": 512, "overlap": 64}}})]
    for name, path, body in cases:
        before = rss_mb(proc.pid)
        status, data, seconds = post(sock, path, body)
        item = (data.get("results") or data.get("data") or [{}])[0]
        print(f"{name}: HTTP {status}, {item.get('error') or 'answered'}, input {item.get('input')}, "
              f"{seconds * 1000:.0f} ms; RSS {before:.0f} -> {rss_mb(proc.pid):.0f} MB (peak so far {peak_mb(proc.pid):.0f} MB)")
    proc.terminate()
    proc.wait()


if __name__ == "__main__":
    main()
