#!/usr/bin/env python3
"""Assembles resources/eval/eval-text.txt, the built-in evaluation text of `arclight-engine eval`.

Run once; the output is committed and frozen: every figure measured on the built-in text depends
on its exact bytes, so it is never regenerated as a side effect of a build (the sources below
change with the system and the project). README.md lists each part, its source and its licence.

    python3 resources/eval/assemble.py REPO_ROOT > resources/eval/eval-text.txt
"""
import re
import sys
from pathlib import Path

repo = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
pylib = Path("/usr/lib/python3.11")
sys.path.insert(0, str(pylib))
from pydoc_data import topics as pydoc_topics  # noqa: E402  (PSF-2.0, the Python docs)

CHUNK = 6000  # bytes; parts are interleaved in chunks of about this size


def python_reference():
    # Python Language Reference and library-reference topics as plain text (pydoc's help()).
    names = ["execmodel", "import", "typesseq", "string-methods", "customization",
             "numeric-types", "comparisons", "assignment", "function", "class", "calls",
             "exceptions", "truth", "typesmapping", "with", "context-managers"]
    out, seen = [], set()
    for n in names:
        if n in pydoc_topics.topics and n not in seen:
            seen.add(n)
            out.append(pydoc_topics.topics[n].strip())
    return out


def files(paths):
    return [Path(p).read_text(encoding="utf-8").strip() for p in paths]


def project_prose():
    return files([repo / "README.md"] + sorted((repo / "docs").glob("*.md")))


def python_code():
    return files(pylib / f for f in ["heapq.py", "textwrap.py", "graphlib.py", "colorsys.py",
                                     "bisect.py"])


def project_code():
    return files([repo / p for p in [
        "engine/tokenizer/bpe.cpp", "engine/kv/kv_cache.cpp", "kernels/ref/attention_ref.cpp",
        "kernels/ref/moe_ref.cpp", "kernels/ref/ops_ref.cpp", "kernels/ref/rope_ref.cpp",
        "kernels/ref/candidates_ref.cpp", "engine/CMakeLists.txt", "packaging/setup-deps.sh"]])


def german_ui_strings():
    # The app's German translations (translations/arclight_de.ts), one string a line.
    ts = (repo / "translations/arclight_de.ts").read_text(encoding="utf-8")
    lines = []
    for m in re.finditer(r"<translation>(.*?)</translation>", ts, re.S):
        t = (m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
             .replace("&apos;", "'").replace("&amp;", "&").strip())
        if t and t not in lines:
            lines.append(t)
    return ["\n".join(lines)]


def languages():
    return files([Path(__file__).parent / "sources/languages.txt"])


def chunks(texts):
    """Splits texts at blank lines into pieces of about CHUNK bytes."""
    out = []
    for text in texts:
        cur = ""
        for para in text.split("\n\n"):
            if cur and len((cur + para).encode()) > CHUNK:
                out.append(cur.strip())
                cur = ""
            cur += para + "\n\n"
        if cur.strip():
            out.append(cur.strip())
    return out


parts = [chunks(python_reference()), chunks(project_prose()), chunks(python_code()),
         chunks(project_code()), chunks(languages() + german_ui_strings())]
# Round-robin: any prefix of the text (eval --max-windows) mixes prose, code and languages.
pieces = []
while any(parts):
    for p in parts:
        if p:
            pieces.append(p.pop(0))
text = "\n\n".join(pieces) + "\n"
text = text.replace("\r\n", "\n")
assert ")arceval\"" not in text
sys.stdout.write(text)
