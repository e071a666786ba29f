#!/usr/bin/env python3
"""Fills translations/arclight_de.ts from the German table below (run after `update_translations`).

Every source string the app shows must have an entry; the script lists the ones missing and exits
non-zero so a new string cannot ship untranslated. Plural forms (%n) give [singular, plural].
"""
import sys
import xml.etree.ElementTree as ET

DE = {
    " (needs %1, available %2)": " (benötigt %1, verfügbar %2)",
    " GiB": " GiB",
    " tokens": " Token",
    "$ %1": "$ %1",
    "%1 (loaded)": "%1 (geladen)",
    "%1 B": "%1 Mrd.",
    "%1 h %2 min": "%1 h %2 min",
    "%1 layers": "%1 Schichten",
    "%1 min %2 s": "%1 min %2 s",
    "%1 of %2": "%1 von %2",
    "%1 s": "%1 s",
    "%1 tok/s": "%1 Token/s",
    "%n box(es)": ["%n Box", "%n Boxen"],
    "%n file(s) found by the engine.": ["%n Datei von der Engine gefunden.",
                                        "%n Dateien von der Engine gefunden."],
    "&About Arclight": "Ü&ber Arclight",
    "&Engine": "&Engine",
    "&File": "&Datei",
    "&Help": "&Hilfe",
    "&Quit": "&Beenden",
    "&Reconnect": "Neu &verbinden",
    "&Settings…": "&Einstellungen…",
    "&Start local engine": "Lokale Engine &starten",
    "&Theme": "&Farbschema",
    "&View": "&Ansicht",
    "(the local engine has not written anything)": "(die lokale Engine hat noch nichts ausgegeben)",
    ", %1 left": ", noch %1",
    "30–150 B": "30–150 Mrd.",
    "API key:": "API-Schlüssel:",
    "About Arclight": "Über Arclight",
    "Active parameters": "Aktive Parameter",
    "Active": "Aktiv",
    "All families": "Alle Familien",
    "Any size": "Jede Größe",
    "Appearance": "Darstellung",
    "Architecture": "Architektur",
    "Arclight": "Arclight",
    "Asking the engine to load %1…": "Die Engine wird gebeten, %1 zu laden…",
    "Attach to a running engine": "Mit einer laufenden Engine verbinden",
    "Benchmark": "Benchmark",
    "Box %1": "Box %1",
    "Boxes": "Boxen",
    "Boxes:": "Boxen:",
    "Browse…": "Durchsuchen…",
    "Build:": "Build:",
    "Builds": "Builds",
    "Catalog": "Katalog",
    "Chat": "Chat",
    "Cluster and workload": "Cluster und Last",
    "Cluster": "Cluster",
    "Coming with the %1 work: this page is not built yet.":
        "Kommt mit der Arbeit an %1: diese Seite ist noch nicht fertig.",
    "Concurrent sequences:": "Gleichzeitige Sequenzen:",
    "Context length": "Kontextlänge",
    "Context:": "Kontext:",
    "Ctrl+,": "Ctrl+,",
    "Ctrl+L": "Ctrl+L",
    "Ctrl+R": "Ctrl+R",
    "Dark": "Dunkel",
    "Decode ceiling": "Decode-Obergrenze",
    "Decode ceiling: %1 tokens/s (memory bandwidth bound)":
        "Decode-Obergrenze: %1 Token/s (durch die Speicherbandbreite begrenzt)",
    "Demo model unavailable: %1": "Demo-Modell nicht verfügbar: %1",
    "Does not fit on %n box(es)": ["Passt nicht auf %n Box", "Passt nicht auf %n Boxen"],
    "Engine &log…": "Engine-&Protokoll…",
    "Engine log": "Engine-Protokoll",
    "Engine": "Engine",
    "Engine: %1": "Engine: %1",
    "Engine: connecting…": "Engine: verbinde…",
    "Engine: offline": "Engine: offline",
    "Engine: reconnecting…": "Engine: verbinde erneut…",
    "Family": "Familie",
    "File": "Datei",
    "Fit": "Passt",
    "Fits on %n box(es)": ["Passt auf %n Box", "Passt auf %n Boxen"],
    "Fits only": "Nur passende",
    "GQA, %1 KV heads": "GQA, %1 KV-Köpfe",
    "GiB per box": "GiB pro Box",
    "HTTP %1 from %2: %3": "HTTP %1 von %2: %3",
    "HTTP %1": "HTTP %1",
    "Headroom": "Spielraum",
    "KV cache type:": "KV-Cache-Typ:",
    "KV cache": "KV-Cache",
    "KV layout not published": "KV-Aufbau nicht veröffentlicht",
    "Language": "Sprache",
    "Language:": "Sprache:",
    "Largest context at %n concurrent sequence(s): %1 tokens":
        ["Größter Kontext bei %n Sequenz: %1 Token",
         "Größter Kontext bei %n gleichzeitigen Sequenzen: %1 Token"],
    "Largest context": "Größter Kontext",
    "License": "Lizenz",
    "Light": "Hell",
    "Load": "Laden",
    "Loaded.": "Geladen.",
    "Loading: %1": "Lädt: %1",
    "Local files": "Lokale Dateien",
    "MLA attention": "MLA-Attention",
    "MPI hostfile": "MPI-Hostdatei",
    "MPI hostfile:": "MPI-Hostdatei:",
    "Make a demo model (random weights)": "Demo-Modell erzeugen (Zufallsgewichte)",
    "Making a demo model with random weights…": "Demo-Modell mit Zufallsgewichten wird erzeugt…",
    "Model folders:": "Modellordner:",
    "Model": "Modell",
    "Model: %1": "Modell: %1",
    "Models": "Modelle",
    "Monitor": "Monitor",
    "No engine connected.": "Keine Engine verbunden.",
    "No engine connected: local files are listed by the engine.":
        "Keine Engine verbunden: lokale Dateien listet die Engine auf.",
    "No fit report": "Kein Passbericht",
    "No model loaded": "Kein Modell geladen",
    "One folder per line": "Ein Ordner pro Zeile",
    "Over 150 B": "Über 150 Mrd.",
    "Parameters": "Parameter",
    "Port:": "Port:",
    "Processes (boxes):": "Prozesse (Boxen):",
    "Published speeds": "Veröffentlichte Geschwindigkeiten",
    "Refresh": "Aktualisieren",
    "Reserve per box (OS, apps):": "Reserve pro Box (System, Apps):",
    "Reserve": "Reserve",
    "Run a local engine": "Lokale Engine ausführen",
    "Runtime": "Laufzeit",
    "S&top local engine": "Lokale Engine s&toppen",
    "Search models…": "Modelle suchen…",
    "Settings": "Einstellungen",
    "Size": "Größe",
    "Start it when the app starts": "Beim Start der App starten",
    "System language": "Systemsprache",
    "System": "System",
    "The fit calculator cannot read the catalog: %1":
        "Der Passrechner kann den Katalog nicht lesen: %1",
    "The model catalog is not part of this build (%1).":
        "Der Modellkatalog ist nicht Teil dieses Builds (%1).",
    "The new language is used when Arclight starts again.":
        "Die neue Sprache gilt ab dem nächsten Start von Arclight.",
    "Theme:": "Farbschema:",
    "URL:": "URL:",
    "Under 30 B": "Unter 30 Mrd.",
    "Unload": "Entladen",
    "Usable memory per box:": "Nutzbarer Speicher pro Box:",
    "Used per box": "Belegt pro Box",
    "Verdict": "Ergebnis",
    "Weights": "Gewichte",
    "benchmark": "Benchmark",
    "box %1: %2 / %3": "Box %1: %2 / %3",
    "cannot load: no engine is connected": "Laden nicht möglich: keine Engine verbunden",
    "chat": "Chat",
    "cluster": "Cluster",
    "does not fit": "passt nicht",
    "engine not available: %1 could not be started (%2)":
        "Engine nicht verfügbar: %1 konnte nicht gestartet werden (%2)",
    "engine not available: arclight-engine was not found next to the app (%1)":
        "Engine nicht verfügbar: arclight-engine liegt nicht neben der App (%1)",
    "engine not available: it crashed": "Engine nicht verfügbar: sie ist abgestürzt",
    "engine not available: it exited with code %1":
        "Engine nicht verfügbar: sie wurde mit Code %1 beendet",
    "engine not available: the hostfile %1 cannot be read":
        "Engine nicht verfügbar: die Hostdatei %1 ist nicht lesbar",
    "engine not reachable at %1: %2": "Engine unter %1 nicht erreichbar: %2",
    "error": "Fehler",
    "fits": "passt",
    "hidden %1": "Breite %1",
    "idle": "bereit ohne Modell",
    "loading failed: %1": "Laden fehlgeschlagen: %1",
    "loading": "lädt",
    "lost the connection to the engine: %1": "Verbindung zur Engine verloren: %1",
    "monitor": "Monitor",
    "no engine: starting a local engine is switched off in Settings":
        "keine Engine: der Start einer lokalen Engine ist in den Einstellungen ausgeschaltet",
    "none: one box": "keine: eine Box",
    "not connected": "nicht verbunden",
    "not recorded": "nicht erfasst",
    "pick a model to see how it fits": "Wähle ein Modell, um zu sehen, wie es passt",
    "ready": "bereit",
    "source not recorded": "Quelle nicht erfasst",
    "the catalog is not valid JSON: %1": "der Katalog ist kein gültiges JSON: %1",
    "the engine could not make the demo model (exit code %1): %2":
        "die Engine konnte das Demo-Modell nicht erzeugen (Exit-Code %1): %2",
    "the engine refused the API key (HTTP %1); check it in Settings":
        "die Engine hat den API-Schlüssel abgelehnt (HTTP %1); bitte in den Einstellungen prüfen",
    "the engine refused the load (HTTP %1)": "die Engine hat das Laden abgelehnt (HTTP %1)",
    "the engine refused the load: %1": "die Engine hat das Laden abgelehnt: %1",
    "the engine sent an unreadable event (%1)": "die Engine hat ein unlesbares Ereignis gesendet (%1)",
    "the engine sent malformed JSON for %1: %2": "die Engine hat fehlerhaftes JSON für %1 gesendet: %2",
    "the engine's event stream sent an oversized event; reconnecting":
        "der Ereignisstrom der Engine hat ein übergroßes Ereignis gesendet; verbinde neu",
    "the file is on the engine's machine, not readable here":
        "die Datei liegt auf dem Rechner der Engine und ist hier nicht lesbar",
    "the fit calculator has no numbers for this model":
        "der Passrechner hat keine Zahlen für dieses Modell",
    "the fit calculator (arc_fit) is not part of this build":
        "der Passrechner (arc_fit) ist nicht Teil dieses Builds",
    "this build reads no GGUF files for planning": "dieser Build liest keine GGUF-Dateien zur Planung",
    "this file": "diese Datei",
    "tight": "knapp",
    "unknown error": "unbekannter Fehler",
    "unknown": "unbekannt",
    # Long strings (written across several literals in the sources).
    "Catalog entries are plans: put the GGUF file in a model folder and load it from Local files.":
        "Katalogeinträge sind Pläne: lege die GGUF-Datei in einen Modellordner und lade sie unter "
        "„Lokale Dateien“.",
    "Demo model written to %1 (random weights: its answers are noise).":
        "Demo-Modell nach %1 geschrieben (Zufallsgewichte: seine Antworten sind Rauschen).",
    "No GGUF files in the model folders. Add a folder in Settings, or try the demo model.":
        "Keine GGUF-Dateien in den Modellordnern. Füge in den Einstellungen einen Ordner hinzu "
        "oder probiere das Demo-Modell.",
    "Writes a small model with random weights so loading, chat and the charts can be tried at "
    "once. Its answers are noise.":
        "Schreibt ein kleines Modell mit Zufallsgewichten, damit Laden, Chat und Diagramme sofort "
        "ausprobiert werden können. Seine Antworten sind Rauschen.",
    "arclight-engine was not found next to the app, so it cannot make the demo model":
        "arclight-engine liegt nicht neben der App, daher kann das Demo-Modell nicht erzeugt werden",
    "<h2>Arclight %1</h2><p>Mixture-of-Experts inference for DGX Spark clusters.</p>"
    "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
    "<tr><td>QCustomPlot</td><td>%4</td></tr><tr><td>Engine</td><td>%5</td></tr></table>":
        "<h2>Arclight %1</h2><p>Mixture-of-Experts-Inferenz für DGX-Spark-Cluster.</p>"
        "<table><tr><td>Qt</td><td>%2 (gebaut mit %3)</td></tr>"
        "<tr><td>QCustomPlot</td><td>%4</td></tr><tr><td>Engine</td><td>%5</td></tr></table>",
    # Chat page
    "%1 is larger than %2 MiB.": "%1 ist größer als %2 MiB.",
    "%1 is not an image.": "%1 ist kein Bild.",
    "Cannot read %1: %2": "%1 kann nicht gelesen werden: %2",
    "Message (Enter sends, Shift+Enter new line, Esc stops)":
        "Nachricht (Enter sendet, Umschalt+Enter neue Zeile, Esc stoppt)",
    "The conversation is too long for the model's context: %1. Start a new conversation or remove earlier turns.":
        "Die Unterhaltung ist zu lang für den Kontext des Modells: %1. Beginnen Sie eine neue "
        "Unterhaltung oder entfernen Sie frühere Beiträge.",
    "The engine could not be reached (%1). Is it running?":
        "Die Engine ist nicht erreichbar (%1). Läuft sie?",
    "The engine refused the request (HTTP %1): %2": "Die Engine hat die Anfrage abgelehnt (HTTP %1): %2",
    "The engine sent a malformed stream (a line over 16 MiB).":
        "Die Engine hat einen fehlerhaften Datenstrom gesendet (eine Zeile über 16 MiB).",
    "The engine stopped with an error: %1": "Die Engine hat mit einem Fehler abgebrochen: %1",
    "Attach images": "Bilder anhängen",
    "Attach images (or drop or paste them into the message)":
        "Bilder anhängen (oder in die Nachricht ziehen oder einfügen)",
    "Attach image…": "Bild anhängen…",
    "Balanced": "Ausgewogen",
    "Creative": "Kreativ",
    "Custom": "Eigene",
    "Delete": "Löschen",
    "Delete \"%1\"? This cannot be undone.": "„%1“ löschen? Das lässt sich nicht rückgängig machen.",
    "Delete conversation": "Unterhaltung löschen",
    "Edit message": "Nachricht bearbeiten",
    "Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)": "Bilder (*.png *.jpg *.jpeg *.webp *.gif *.bmp)",
    "Instructions the model follows in this conversation":
        "Anweisungen, denen das Modell in dieser Unterhaltung folgt",
    "Max tokens": "Max. Token",
    "New": "Neu",
    "No model is loaded.": "Es ist kein Modell geladen.",
    "Precise": "Präzise",
    "Reading prompt… %1 s": "Lese Eingabe… %1 s",
    "Remove": "Entfernen",
    "Remove this image": "Dieses Bild entfernen",
    "Rename": "Umbenennen",
    "Rename conversation": "Unterhaltung umbenennen",
    "Sampling:": "Sampling:",
    "Search conversations": "Unterhaltungen durchsuchen",
    "Send": "Senden",
    "Stop": "Stopp",
    "System prompt and sampling": "Systemprompt und Sampling",
    "System prompt:": "Systemprompt:",
    "Temperature": "Temperatur",
    "The later turns are replaced by a new answer.":
        "Die späteren Beiträge werden durch eine neue Antwort ersetzt.",
    "The loaded model cannot read images.": "Das geladene Modell kann keine Bilder lesen.",
    "Title:": "Titel:",
    "Top k": "Top k",
    "Top p": "Top p",
    "Writing the answer… %1 s": "Schreibe die Antwort… %1 s",
    "Could not save the conversation to %1: %2":
        "Die Unterhaltung konnte nicht in %1 gespeichert werden: %2",
    "New conversation": "Neue Unterhaltung",
    "Skipped the conversation file %1: %2": "Unterhaltungsdatei %1 übersprungen: %2",
    "its id \"%1\" does not match the file name": "ihre ID „%1“ passt nicht zum Dateinamen",
    "not a conversation (%1)": "keine Unterhaltung (%1)",
    "not valid JSON (%1 at byte %2)": "kein gültiges JSON (%1 bei Byte %2)",
    "the file is larger than %1 MiB": "die Datei ist größer als %1 MiB",
    "%1 prefix tokens reused": "%1 Präfix-Token wiederverwendet",
    "(stopped)": "(gestoppt)",
    "Assistant": "Assistent",
    "Copy": "Kopieren",
    "Copy %1 code": "%1-Code kopieren",
    "Copy code": "Code kopieren",
    "Edit": "Bearbeiten",
    "Regenerate": "Neu erzeugen",
    "Retry": "Erneut versuchen",
    "Thinking": "Überlegungen",
    "Thinking…": "Überlegt…",
    "You": "Sie",
    "first token %1 s": "erstes Token %1 s",
    "tokens in %1 / out %2": "Token ein %1 / aus %2",
}


# Monitor and Benchmark pages.
DE_MONITOR = {
    "%1: not valid JSON at byte %2 (%3)": "%1: kein gültiges JSON bei Byte %2 (%3)",
    "(model unknown)": "(Modell unbekannt)",
    "empty line": "leere Zeile",
    "no \"scenario\" in the line": "kein \"scenario\" in der Zeile",
    "not a JSON object: %1": "kein JSON-Objekt: %1",
    "Change": "Änderung",
    "Scenario": "Szenario",
    "TTFT ms A": "TTFT ms A",
    "TTFT ms B": "TTFT ms B",
    "Tokens/s A (%1)": "Token/s A (%1)",
    "Tokens/s B (%1)": "Token/s B (%1)",
    "%n scenario(s)": ["%n Szenario", "%n Szenarien"],
    "Date": "Datum",
    "Profile": "Profil",
    "Result": "Ergebnis",
    "Server": "Server",
    "stopped: %1": "abgebrochen: %1",
    "%1 prefill": "%1 Prefill",
    "End-to-end s": "Gesamtdauer s",
    "Errors": "Fehler",
    "ITL p90 ms": "ITL p90 ms",
    "Streams": "Streams",
    "TPOT ms": "TPOT ms",
    "TTFT ms (min–max)": "TTFT ms (min–max)",
    "Tokens/s per stream (min–max)": "Token/s pro Stream (min–max)",
    "Total tokens/s": "Token/s gesamt",
    "%n scenario(s) measured": ["%n Szenario gemessen", "%n Szenarien gemessen"],
    "bench-serve could not be started: %1 (%2)": "bench-serve konnte nicht gestartet werden: %1 (%2)",
    "bench-serve crashed": "bench-serve ist abgestürzt",
    "bench-serve exited with code %1: %2": "bench-serve wurde mit Code %1 beendet: %2",
    "bench-serve is not available: arclight-engine was not found next to the app":
        "bench-serve ist nicht verfügbar: arclight-engine liegt nicht neben der App",
    "cancelled": "abgebrochen",
    "error: %1": "Fehler: %1",
    "no server URL to benchmark": "keine Server-URL zum Messen",
    "some requests failed (exit code %1)": "einige Anfragen sind fehlgeschlagen (Code %1)",
    "%1\n%n stream(s)": ["%1\n%n Stream", "%1\n%n Streams"],
    "<b>Published figures for %1</b> (decode tokens/s):":
        "<b>Veröffentlichte Werte für %1</b> (Decode-Token/s):",
    "Another server (vLLM, llama-server, …)": "Ein anderer Server (vLLM, llama-server, …)",
    "Answer tokens:": "Antwort-Token:",
    "CSV files (*.csv)": "CSV-Dateien (*.csv)",
    "Cancel": "Abbrechen",
    "Choose at least one prompt set.": "Bitte mindestens einen Prompt-Satz wählen.",
    "Compare two": "Zwei vergleichen",
    "Could not write %1.": "%1 konnte nicht geschrieben werden.",
    "Custom": "Eigene",
    "Delete": "Löschen",
    "Done: %1": "Fertig: %1",
    "Export": "Export",
    "Export CSV…": "CSV exportieren…",
    "Export JSON…": "JSON exportieren…",
    "Export results": "Ergebnisse exportieren",
    "History": "Verlauf",
    "JSON": "JSON",
    "JSON files (*.json)": "JSON-Dateien (*.json)",
    "Measured runs:": "Gemessene Läufe:",
    "Method": "Methode",
    "No published figures for %1 in the catalog.": "Keine veröffentlichten Werte für %1 im Katalog.",
    "No results to export.": "Keine Ergebnisse zum Exportieren.",
    "Prefill prompt tokens:": "Prompt-Token für Prefill:",
    "Profile:": "Profil:",
    "Progress": "Fortschritt",
    "Prompts:": "Prompts:",
    "Published figures for the model appear here once it is known.":
        "Veröffentlichte Werte für das Modell erscheinen hier, sobald es bekannt ist.",
    "Results": "Ergebnisse",
    "Run benchmark": "Benchmark starten",
    "Running against %1…": "Misst %1…",
    "Seeds (3 warm-ups, 6 runs, 450 tokens, 1/4/6/8 streams)":
        "Seeds (3 Aufwärmläufe, 6 Läufe, 450 Token, 1/4/6/8 Streams)",
    "Select two runs to compare.": "Zum Vergleichen zwei Läufe auswählen.",
    "Show": "Anzeigen",
    "Stopped: %1": "Abgebrochen: %1",
    "Streams:": "Streams:",
    "The benchmark history cannot be read: %1": "Der Benchmark-Verlauf ist nicht lesbar: %1",
    "The catalog has no published figures for %1.": "Der Katalog hat keine veröffentlichten Werte für %1.",
    "The engine this app is connected to": "Die Engine, mit der die App verbunden ist",
    "The run could not be saved: %1": "Der Lauf konnte nicht gespeichert werden: %1",
    "code": "Code",
    "measured (median)": "gemessen (Median)",
    "prefill": "Prefill",
    "prose": "Prosa",
    "published": "veröffentlicht",
    "published\n%1": "veröffentlicht\n%1",
    "skip": "auslassen",
    "the server's first model": "das erste Modell des Servers",
    "tokens/s": "Token/s",
    "%1 — %2": "%1 — %2",
    "%1 min": "%1 min",
    "All-reduce traffic and link utilisation": "All-Reduce-Verkehr und Link-Auslastung",
    "Decode tokens/s": "Decode-Token/s",
    "Export PNG…": "PNG exportieren…",
    "Export charts": "Diagramme exportieren",
    "Export visible data": "Sichtbare Daten exportieren",
    "GiB": "GiB",
    "Hover over a chart to read its values.": "Mit der Maus über ein Diagramm fahren, um Werte abzulesen.",
    "Memory per box": "Speicher pro Box",
    "MiB/s": "MiB/s",
    "No data at this time.": "Keine Daten zu dieser Zeit.",
    "No finished requests in this window.": "Keine abgeschlossenen Anfragen in diesem Zeitfenster.",
    "PNG images (*.png)": "PNG-Bilder (*.png)",
    "Pause": "Pause",
    "Prefill tokens/s": "Prefill-Token/s",
    "Requests": "Anfragen",
    "Resume": "Fortsetzen",
    "TTFT p50 %1 ms, p95 %2 ms over %n request(s)":
        ["TTFT p50 %1 ms, p95 %2 ms über %n Anfrage", "TTFT p50 %1 ms, p95 %2 ms über %n Anfragen"],
    "Time to first token per request": "Zeit bis zum ersten Token pro Anfrage",
    "Window:": "Zeitfenster:",
    "all requests": "alle Anfragen",
    "all-reduce": "All-Reduce",
    "blocks": "Blöcke",
    "blocks cached": "Blöcke im Cache",
    "blocks in use": "Blöcke belegt",
    "hit rate %": "Trefferquote %",
    "link utilisation (%)": "Link-Auslastung (%)",
    "ms": "ms",
    "no data": "keine Daten",
    "p50": "p50",
    "p50 %1 ms": "p50 %1 ms",
    "p95": "p95",
    "p95 %1 ms": "p95 %1 ms",
    "per request": "pro Anfrage",
    "prefix-cache hit rate (%)": "Präfix-Cache-Trefferquote (%)",
    "request": "Anfrage",
    "requests": "Anfragen",
    "running": "laufend",
    "utilisation %": "Auslastung %",
    "waiting": "wartend",
    "Model:": "Modell:",
    "box %1": "Box %1",
}
DE.update(DE_MONITOR)


def main(path):
    tree = ET.parse(path)
    missing = []
    for msg in tree.iter("message"):
        src = msg.findtext("source")
        tr = msg.find("translation")
        if tr is None:
            tr = ET.SubElement(msg, "translation")
        de = DE.get(src)
        if de is None:
            missing.append(src)
            continue
        tr.attrib.pop("type", None)
        for child in list(tr):
            tr.remove(child)
        if msg.get("numerus") == "yes":
            forms = de if isinstance(de, list) else [de, de]
            tr.text = None
            for f in forms:
                ET.SubElement(tr, "numerusform").text = f
        else:
            tr.text = de if isinstance(de, str) else de[0]
    tree.write(path, encoding="utf-8", xml_declaration=True)
    if missing:
        print("untranslated:", *missing, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "translations/arclight_de.ts"))
