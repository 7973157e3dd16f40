"""A protocol process that misbehaves on purpose, for tests/external_test.cpp (standard library
only). `hostile_solver.py MODE [N]`: answers the first N problems with their start configuration
(status max-iterations), misbehaves as MODE says on the next one, and answers the rest:

  crash     aborts (SIGABRT)              hang       sleeps without answering
  garbage   writes a line that is not JSON nan_null   q with a null entry
  nan_token q with a NaN token (not JSON) short      q one entry short
  flood     writes megabytes without a newline       wrong_id   answers under another id
  status    an unknown status              child      starts a sleeping child process, then hangs
Modes about the start: exit_at_start (exits 3 before its hello), no_hello (a line that is not a
hello), old_version (hello of version 0), silent (never says hello).
Mode describe_model answers every problem, its message saying what the model message held:
"urdf N bytes from FILE" (the `urdf` text's length and the `source`'s file name) or "no urdf".
"""
import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
good = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if mode == "exit_at_start":
    sys.exit(3)
solved = 0
models = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "no_hello":
            send("hello there")
        elif mode == "old_version":
            send(json.dumps({"type": "hello", "protocol": "ikbench-external", "version": 0}))
        elif mode == "silent":
            time.sleep(3600)
        else:
            send(json.dumps({"type": "hello", "protocol": "ikbench-external", "version": 1, "name": mode}))
        continue
    if msg["type"] == "model":
        models[msg["model_id"]] = msg
    if msg["type"] != "solve":
        continue
    answers = []
    for p in msg["problems"]:
        q = list(p["q0"])
        answer = {"id": p["id"], "q": q, "status": "max-iterations", "iterations": 0, "time_us": 1.5,
                  "message": f"batch of {len(msg['problems'])}"}
        if mode == "describe_model":
            m = models[p["model_id"]]
            answer["message"] = (f"urdf {len(m['urdf'].encode())} bytes from {os.path.basename(m['model']['source'])}"
                                 if "urdf" in m else "no urdf")
        if solved == good:
            if mode == "crash":
                os.abort()
            if mode == "hang":
                time.sleep(3600)
            if mode == "child":
                child = subprocess.Popen(["sleep", "3600"])
                sys.stderr.write(f"hostile_solver: child {child.pid}\n")
                with open(os.environ["HOSTILE_CHILD_PID_FILE"], "w") as f:
                    f.write(str(child.pid))
                time.sleep(3600)
            if mode == "garbage":
                send("Traceback (most recent call last): not an answer")
                answer = None
            if mode == "flood":
                chunk = "x" * (1 << 16)
                for _ in range(200):
                    sys.stdout.write(chunk)
                sys.stdout.flush()
                time.sleep(3600)
            if mode == "nan_null":
                q[0] = None
            if mode == "nan_token":
                send('{"type": "answers", "answers": [{"id": %d, "q": [NaN]}]}' % p["id"])
                answer = None
            if mode == "short":
                answer["q"] = q[:-1]
            if mode == "wrong_id":
                answer["id"] = p["id"] + 1000
            if mode == "status":
                answer["status"] = "solved-it"
        solved += 1
        if answer is not None:
            answers.append(answer)
    if len(answers) == len(msg["problems"]):
        send(json.dumps({"type": "answers", "answers": answers}))
