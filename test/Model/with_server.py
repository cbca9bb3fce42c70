#!/usr/bin/env python3
"""Runs a command against the scripted model server (lit helper).

    with_server.py SCRIPT.json [--log FILE] -- CMD ARG...

Starts test/fixtures/model-server/scripted_server.py, replaces @PORT@ in the
arguments with its port, runs CMD (its output passes through), stops the
server, and exits with CMD's status.
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
server_py = os.path.join(here, "..", "fixtures", "model-server", "scripted_server.py")
argv = sys.argv[1:]
split = argv.index("--")
server_args, cmd = argv[:split], argv[split + 1:]
server = subprocess.Popen([sys.executable, server_py] + server_args, stdout=subprocess.PIPE,
                          text=True)
try:
    word, port = server.stdout.readline().split()
    assert word == "PORT"
    cmd = [a.replace("@PORT@", port) for a in cmd]
    sys.stdout.flush()
    code = subprocess.run(cmd).returncode
finally:
    server.terminate()
    server.wait(timeout=10)
sys.exit(code)
