#!/usr/bin/env python3
"""Structured output end to end: a generated model (random weights, the real qwen3 vocabulary and
chat template) served by arclight-engine, sampled at temperature 1.0; every generation must parse
and validate against its schema with an independent validator (python3-jsonschema), streamed or
not, batched (concurrent requests), for response_format json_schema and json_object, forced
strict tool calls and /v1/completions. Exit 77 (skipped) without jsonschema or the fixtures.

usage: structured_output_test.py ENGINE FIXTURES_DIR [GENERATIONS]
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (packaging/setup-deps.sh installs it)")
    sys.exit(77)

ENGINE, FIXTURES = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 200
if not os.path.exists(os.path.join(FIXTURES, "tokenizers", "qwen3", "tokenizer.json")):
    print(f"SKIP: shared fixtures not found at {FIXTURES}")
    sys.exit(77)

# Bounded schemas (lengths, item counts) so that every generation ends within max_tokens; the
# recursion ends where the model writes a string instead of a nested object, which a random
# model (many tokens open a string) does soon enough.
SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 12},
            "age": {"type": "integer"},
            "email": {"type": ["string", "null"], "maxLength": 10},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string", "maxLength": 8},
                               "since": {"type": "string", "format": "date"}},
                "required": ["city", "since"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "age", "email", "tags", "address"],
        "additionalProperties": False,
    },
    "tree": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"value": {"type": "string", "maxLength": 4},
                               "next": {"anyOf": [{"type": "string", "maxLength": 6},
                                                  {"$ref": "#/$defs/node"}]}},
                "required": ["value", "next"],
                "additionalProperties": False,
            },
        },
        "$ref": "#/$defs/node",
    },
    "shape": {
        "type": "object",
        "properties": {
            "kind": {"const": "point"},
            "xy": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
            "label": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
            "visible": {"type": "boolean"},
            "id": {"type": "string", "format": "uuid"},
        },
        "required": ["kind", "xy", "label", "visible", "id"],
        "additionalProperties": False,
    },
}

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 10},
                   "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}


def post(base, path, body, stream=False):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            if not stream:
                return r.status, json.loads(r.read())
            content, finish = "", None
            for line in r:
                line = line.decode().strip()
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                for c in chunk.get("choices", []):
                    content += (c.get("delta") or {}).get("content") or ""
                    finish = c.get("finish_reason") or finish
            return 200, {"content": content, "finish_reason": finish}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def chat(base, i, schema=None, json_object=False, stream=False):
    body = {"model": "m", "temperature": 1.0, "seed": i, "max_tokens": 900, "stream": stream,
            "messages": [{"role": "user", "content": f"Answer {i} in JSON"}],
            "chat_template_kwargs": {"enable_thinking": False}}
    if json_object:
        body["response_format"] = {"type": "json_object"}
    else:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "s", "strict": True, "schema": schema}}
    status, r = post(base, "/v1/chat/completions", body, stream)
    assert status == 200, r
    if stream:
        return r["content"], r["finish_reason"]
    return r["choices"][0]["message"]["content"], r["choices"][0]["finish_reason"]


def check(name, schema, text, finish):
    assert finish == "stop", f"{name}: finish_reason {finish} for {text!r}"
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise AssertionError(f"{name}: not JSON ({e}): {text!r}")
    if schema is None:
        assert isinstance(doc, dict), f"{name}: not an object: {text!r}"
    else:
        jsonschema.validate(doc, schema, format_checker=jsonschema.FormatChecker())


def serve(family, fixture):
    """A generated model with a real vocabulary and chat template, served; returns (proc, url)."""
    model = os.path.join(tempfile.mkdtemp(prefix="arc_structured_"), "m.gguf")
    subprocess.run([ENGINE, "--log-level", "warn", "make-test-model", "--family", family,
                    "--tokenizer-fixture", fixture, "--fixtures-dir", FIXTURES, "--out", model],
                   check=True)
    server = subprocess.Popen([ENGINE, "--log-level", "warn", "serve", "--port", "0", "--model",
                               model, "--threads", "2", "--ctx-size", "2048", "--parallel", "16"],
                              stdout=subprocess.PIPE, text=True)
    base = None
    for line in server.stdout:
        if "listening on " in line:
            base = line.split("listening on ")[1].split()[0]
            break
    assert base, "the engine did not start"
    for _ in range(300):
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                if json.loads(r.read()).get("status") == "ready":
                    break
        except OSError:
            pass
        time.sleep(0.1)
    return server, base, model


def stop(server, model):
    server.terminate()
    server.wait(timeout=30)
    shutil.rmtree(os.path.dirname(model), ignore_errors=True)


def main():
    server, base, model = serve("qwen3moe", "qwen3")
    try:
        run(base)
    finally:
        stop(server, model)
    # Llama 3 writes a call as a bare {"name": ..., "parameters": ...}.
    server, base, model = serve("llama", "llama3")
    try:
        forced_calls(base, 10)
    finally:
        stop(server, model)
    print("ok")


def forced_calls(base, n):
    """Forced strict tool calls: the arguments validate."""
    tools = [{"type": "function", "function": {"name": "get_weather", "strict": True,
                                               "parameters": WEATHER}},
             {"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}]
    for i in range(n):
        choice = "required" if i % 2 else {"type": "function", "function": {"name": "get_weather"}}
        status, r = post(base, "/v1/chat/completions", {
            "model": "m", "temperature": 1.0, "seed": i, "max_tokens": 400, "tools": tools,
            "tool_choice": choice, "messages": [{"role": "user", "content": "Weather?"}],
            "chat_template_kwargs": {"enable_thinking": False}})
        assert status == 200, r
        assert r["choices"][0]["finish_reason"] == "tool_calls", r
        calls = r["choices"][0]["message"].get("tool_calls")
        assert calls and len(calls) == 1, r
        fn = calls[0]["function"]
        args = json.loads(fn["arguments"])
        if fn["name"] == "get_weather":
            jsonschema.validate(args, WEATHER)
        else:
            assert i % 2 == 1 and isinstance(args, dict), r
    print(f"tool calls: {n} valid")


def run(base):
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=16)
    # N generations per schema, batched; every tenth streamed.
    for name, schema in SCHEMAS.items():
        futures = [pool.submit(chat, base, i, schema, False, i % 10 == 0) for i in range(N)]
        for f in futures:
            check(name, schema, *f.result())
        print(f"{name}: {N} generations valid")
    # json_object bounds nothing (a string may go on forever, and a random model repeating one
    # token does): what ends must be an object, and most must end.
    futures = [pool.submit(chat, base, i, None, True, i % 10 == 0) for i in range(N // 4)]
    ended = 0
    for f in futures:
        text, finish = f.result()
        if finish == "length":
            continue
        check("json_object", None, text, finish)
        ended += 1
    assert ended >= 0.75 * (N // 4), f"json_object: only {ended} of {N // 4} ended"
    print(f"json_object: {ended} of {N // 4} generations ended, all valid objects")

    forced_calls(base, 20)
    # tool_choice auto with a strict tool: free text, and whatever call is made validates.
    for i in range(6):
        status, r = post(base, "/v1/chat/completions", {
            "model": "m", "temperature": 1.0, "seed": i, "max_tokens": 64,
            "tools": [{"type": "function", "function": {"name": "get_weather", "strict": True,
                                                        "parameters": WEATHER}}],
            "messages": [{"role": "user", "content": "Weather?"}]})
        assert status == 200, r
        for call in r["choices"][0]["message"].get("tool_calls") or []:
            jsonschema.validate(json.loads(call["function"]["arguments"]), WEATHER)
    print("tool_choice auto: 6 answered")
    # Anthropic: tool_choice {"type": "tool"} constrains the input to the tool's schema.
    for i in range(6):
        status, r = post(base, "/v1/messages", {
            "model": "m", "max_tokens": 400, "temperature": 1.0,
            "messages": [{"role": "user", "content": "Weather?"}],
            "tools": [{"name": "get_weather", "input_schema": WEATHER}],
            "tool_choice": {"type": "tool", "name": "get_weather"}})
        assert status == 200, r
        uses = [b for b in r["content"] if b["type"] == "tool_use"]
        assert len(uses) == 1, r
        jsonschema.validate(uses[0]["input"], WEATHER)
    print("anthropic tool_use: 6 valid")

    # /v1/completions with response_format (an extension).
    for i in range(10):
        status, r = post(base, "/v1/completions", {
            "model": "m", "prompt": "JSON:", "temperature": 1.0, "seed": i, "max_tokens": 400,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "s", "schema": SCHEMAS["shape"]}}})
        assert status == 200, r
        check("completions", SCHEMAS["shape"], r["choices"][0]["text"],
              r["choices"][0]["finish_reason"])
    print("completions: 10 valid")

    # A keyword that cannot be enforced: 400 naming it.
    status, r = post(base, "/v1/chat/completions", {
        "model": "m", "messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "s", "schema": {"type": "object", "properties": {
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}}}})
    assert status == 400 and "'pattern'" in r["error"]["message"], (status, r)
    print("unsupported keyword: 400")


if __name__ == "__main__":
    main()
