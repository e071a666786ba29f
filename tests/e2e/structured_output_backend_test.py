#!/usr/bin/env python3
"""Structured output on a given backend (ARC_ENGINE_ARGS, e.g. "--backend cuda" under the CUDA
emulator): a tiny generated model with a byte-level vocabulary, served; /v1/completions with
response_format json_schema at temperature 1, streamed and not; every answer must parse and
validate with python3-jsonschema (an independent validator). The 151k-vocabulary test
(structured_output_test.py) is too slow on the emulator; this one checks the backend's path.

usage: structured_output_backend_test.py ENGINE N
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is missing (packaging/setup-deps.sh installs it)")
    sys.exit(77)

ENGINE, N = sys.argv[1], int(sys.argv[2])
EXTRA = os.environ.get("ARC_ENGINE_ARGS", "").split()

SCHEMAS = {
    "record": {"type": "object", "additionalProperties": False,
               "required": ["name", "age", "tags"],
               "properties": {"name": {"type": "string", "maxLength": 8},
                              "age": {"type": "integer"},
                              "tags": {"type": "array", "maxItems": 3,
                                       "items": {"enum": ["a", "b", "c"]}}}},
    "choice": {"anyOf": [{"type": "null"},
                         {"type": "object", "additionalProperties": False, "required": ["ok"],
                          "properties": {"ok": {"type": "boolean"}}}]},
    "list": {"type": "array", "minItems": 1, "maxItems": 4,
             "items": {"type": "number"}},
}


def post(base, body, stream):
    req = urllib.request.Request(base + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        if not stream:
            c = json.load(r)["choices"][0]
            return c["text"], c["finish_reason"]
        text, reason = "", None
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            c = json.loads(line[6:])["choices"][0]
            text += c.get("text", "")
            reason = c.get("finish_reason") or reason
        return text, reason


def main():
    model = os.path.join(tempfile.mkdtemp(prefix="arc_so_backend_"), "m.gguf")
    subprocess.run([ENGINE, "--log-level", "warn", "make-test-model", "--family", "qwen3moe",
                    "--out", model], check=True)
    server = subprocess.Popen([ENGINE, "--log-level", "warn", "serve", "--port", "0", "--model",
                               model, "--threads", "2", "--ctx-size", "2048"] + EXTRA,
                              stdout=subprocess.PIPE, text=True)
    try:
        base = None
        for line in server.stdout:
            if "listening on" in line:
                base = line.strip().split()[-1]
                break
        assert base, "the engine did not start"
        for _ in range(600):  # the model loads after the server listens
            try:
                with urllib.request.urlopen(base + "/health", timeout=5) as r:
                    if json.load(r).get("status") == "ready":
                        break
            except OSError:
                pass
            time.sleep(0.1)
        failures = 0
        for name, schema in SCHEMAS.items():
            for i in range(N):
                body = {"model": "m", "prompt": "JSON:", "temperature": 1.0, "seed": i,
                        "max_tokens": 600, "stream": i % 2 == 1,
                        "response_format": {"type": "json_schema",
                                            "json_schema": {"name": name, "strict": True,
                                                            "schema": schema}}}
                text, reason = post(base, body, body["stream"])
                try:
                    jsonschema.validate(json.loads(text), schema)
                except Exception as e:  # noqa: BLE001 - any failure is reported with the text
                    failures += 1
                    print(f"{name} #{i} ({reason}): {e}: {text!r}")
        print(f"{len(SCHEMAS) * N - failures} of {len(SCHEMAS) * N} generations valid")
        return 1 if failures else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
