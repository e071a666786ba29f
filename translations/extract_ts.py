#!/usr/bin/env python3
"""Writes translations/arclight_de.ts from the tr()/translate() calls in app/ (a light stand-in for
lupdate, whose C++ parser is very slow on a loaded build box; `update_translations` still works).

Contexts follow Qt: tr() in a class gives "arc::app::<Class>" (files are named after their class);
Class::tr() names it; QCoreApplication::translate("Ctx", ...) gives "Ctx". Existing translations
are kept; fill_de.py fills the rest.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
STR = r'"(?:[^"\\]|\\.)*"'
CALL = re.compile(r'(?:(\w+)::)?\b(tr|translate)\s*\(\s*(?:"(\w+)"\s*,\s*)?((?:' + STR + r'\s*)+)')
FILE_CLASS = {"FitBackend": "FitController"}


def unescape(lits):
    parts = re.findall(STR, lits)
    return "".join(bytes(p[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
                   for p in parts)


def extract():
    messages = {}  # context -> {source: numerus}
    for path in sorted((ROOT / "app").rglob("*.cpp")) + sorted((ROOT / "app").rglob("*.h")):
        text = path.read_text(encoding="utf-8")
        cls = FILE_CLASS.get(path.stem, path.stem)
        for m in CALL.finditer(text):
            qual, fn, ctx, lits = m.groups()
            if fn == "translate":
                if not ctx:
                    continue
                context = ctx
            else:
                if qual in ("QObject", "QCoreApplication"):
                    continue
                context = "arc::app::" + (qual or cls)
            src = unescape(lits)
            messages.setdefault(context, {})[src] = "%n" in src
    return messages


def main(path):
    old = {}
    if pathlib.Path(path).exists() and pathlib.Path(path).stat().st_size > 0:
        for ctx in ET.parse(path).getroot().iter("context"):
            name = ctx.findtext("name")
            for msg in ctx.iter("message"):
                old[(name, msg.findtext("source"))] = msg.find("translation")
    root = ET.Element("TS", version="2.1", language="de_DE")
    for context, msgs in sorted(extract().items()):
        c = ET.SubElement(root, "context")
        ET.SubElement(c, "name").text = context
        for src, numerus in sorted(msgs.items()):
            m = ET.SubElement(c, "message")
            if numerus:
                m.set("numerus", "yes")
            ET.SubElement(m, "source").text = src
            prev = old.get((context, src))
            if prev is not None:
                m.append(prev)
            else:
                ET.SubElement(m, "translation", type="unfinished")
    ET.indent(root)
    tree = ET.ElementTree(root)
    with open(path, "wb") as f:
        f.write(b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n')
        tree.write(f, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "translations/arclight_de.ts")))
