<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="de_DE">
  <context>
    <name>BenchHistory</name>
    <message>
      <source>%1: not valid JSON at byte %2 (%3)</source>
      <translation>%1: kein gültiges JSON bei Byte %2 (%3)</translation>
    </message>
    <message>
      <source>(model unknown)</source>
      <translation>(Modell unbekannt)</translation>
    </message>
  </context>
  <context>
    <name>BenchResult</name>
    <message>
      <source>empty line</source>
      <translation>leere Zeile</translation>
    </message>
    <message>
      <source>no "scenario" in the line</source>
      <translation>kein "scenario" in der Zeile</translation>
    </message>
    <message>
      <source>not a JSON object: %1</source>
      <translation>kein JSON-Objekt: %1</translation>
    </message>
  </context>
  <context>
    <name>CatalogEntry</name>
    <message>
      <source>%1 layers</source>
      <translation>%1 Schichten</translation>
    </message>
    <message numerus="yes">
      <source>%n box(es)</source>
      <translation><numerusform>%n Box</numerusform><numerusform>%n Boxen</numerusform></translation>
    </message>
    <message>
      <source>GQA, %1 KV heads</source>
      <translation>GQA, %1 KV-Köpfe</translation>
    </message>
    <message>
      <source>KV layout not published</source>
      <translation>KV-Aufbau nicht veröffentlicht</translation>
    </message>
    <message>
      <source>MLA attention</source>
      <translation>MLA-Attention</translation>
    </message>
    <message>
      <source>hidden %1</source>
      <translation>Breite %1</translation>
    </message>
    <message>
      <source>the catalog is not valid JSON: %1</source>
      <translation>der Katalog ist kein gültiges JSON: %1</translation>
    </message>
  </context>
  <context>
    <name>EngineError</name>
    <message>
      <source> (needs %1, available %2)</source>
      <translation> (benötigt %1, verfügbar %2)</translation>
    </message>
    <message>
      <source>unknown error</source>
      <translation>unbekannter Fehler</translation>
    </message>
  </context>
  <context>
    <name>EngineState</name>
    <message>
      <source>error</source>
      <translation>Fehler</translation>
    </message>
    <message>
      <source>idle</source>
      <translation>bereit ohne Modell</translation>
    </message>
    <message>
      <source>loading</source>
      <translation>lädt</translation>
    </message>
    <message>
      <source>ready</source>
      <translation>bereit</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>unbekannt</translation>
    </message>
  </context>
  <context>
    <name>FitController</name>
    <message>
      <source>the fit calculator (arc_fit) is not part of this build</source>
      <translation>der Passrechner (arc_fit) ist nicht Teil dieses Builds</translation>
    </message>
  </context>
  <context>
    <name>ImageAttachment</name>
    <message>
      <source>%1 is larger than %2 MiB.</source>
      <translation>%1 ist größer als %2 MiB.</translation>
    </message>
    <message>
      <source>%1 is not an image.</source>
      <translation>%1 ist kein Bild.</translation>
    </message>
    <message>
      <source>Cannot read %1: %2</source>
      <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
  </context>
  <context>
    <name>LoadProgressTracker</name>
    <message>
      <source>%1 h %2 min</source>
      <translation>%1 h %2 min</translation>
    </message>
    <message>
      <source>%1 min %2 s</source>
      <translation>%1 min %2 s</translation>
    </message>
    <message>
      <source>%1 of %2</source>
      <translation>%1 von %2</translation>
    </message>
    <message>
      <source>%1 s</source>
      <translation>%1 s</translation>
    </message>
    <message>
      <source>, %1 left</source>
      <translation>, noch %1</translation>
    </message>
  </context>
  <context>
    <name>arc::app::AboutDialog</name>
    <message>
      <source>OK</source>
      <translation>OK</translation>
    </message>
    <message>
      <source>&lt;h2&gt;Arclight %1&lt;/h2&gt;&lt;p&gt;Mixture-of-Experts inference for DGX Spark clusters.&lt;/p&gt;&lt;table&gt;&lt;tr&gt;&lt;td&gt;Qt&lt;/td&gt;&lt;td&gt;%2 (built with %3)&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;QCustomPlot&lt;/td&gt;&lt;td&gt;%4&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Engine&lt;/td&gt;&lt;td&gt;%5&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;</source>
      <translation>&lt;h2&gt;Arclight %1&lt;/h2&gt;&lt;p&gt;Mixture-of-Experts-Inferenz für DGX-Spark-Cluster.&lt;/p&gt;&lt;table&gt;&lt;tr&gt;&lt;td&gt;Qt&lt;/td&gt;&lt;td&gt;%2 (gebaut mit %3)&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;QCustomPlot&lt;/td&gt;&lt;td&gt;%4&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Engine&lt;/td&gt;&lt;td&gt;%5&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;</translation>
    </message>
    <message>
      <source>About Arclight</source>
      <translation>Über Arclight</translation>
    </message>
    <message>
      <source>not connected</source>
      <translation>nicht verbunden</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchCompareModel</name>
    <message>
      <source>Tokens/s
%1</source>
      <translation>Token/s
%1</translation>
    </message>
    <message>
      <source>TTFT ms
%1</source>
      <translation>TTFT ms
%1</translation>
    </message>
    <message>
      <source>Change</source>
      <translation>Änderung</translation>
    </message>
    <message>
      <source>Scenario</source>
      <translation>Szenario</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchHistoryModel</name>
    <message numerus="yes">
      <source>%n scenario(s)</source>
      <translation><numerusform>%n Szenario</numerusform><numerusform>%n Szenarien</numerusform></translation>
    </message>
    <message>
      <source>Date</source>
      <translation>Datum</translation>
    </message>
    <message>
      <source>Model</source>
      <translation>Modell</translation>
    </message>
    <message>
      <source>Profile</source>
      <translation>Profil</translation>
    </message>
    <message>
      <source>Result</source>
      <translation>Ergebnis</translation>
    </message>
    <message>
      <source>Server</source>
      <translation>Server</translation>
    </message>
    <message>
      <source>stopped: %1</source>
      <translation>abgebrochen: %1</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchResultModel</name>
    <message>
      <source>%1 of %2</source>
      <translation>%1 von %2</translation>
    </message>
    <message>
      <source>%1 prefill</source>
      <translation>%1 Prefill</translation>
    </message>
    <message>
      <source>End-to-end s</source>
      <translation>Gesamtdauer s</translation>
    </message>
    <message>
      <source>Errors</source>
      <translation>Fehler</translation>
    </message>
    <message>
      <source>ITL p90 ms</source>
      <translation>ITL p90 ms</translation>
    </message>
    <message>
      <source>Scenario</source>
      <translation>Szenario</translation>
    </message>
    <message>
      <source>Streams</source>
      <translation>Streams</translation>
    </message>
    <message>
      <source>TPOT ms</source>
      <translation>TPOT ms</translation>
    </message>
    <message>
      <source>TTFT ms (min–max)</source>
      <translation>TTFT ms (min–max)</translation>
    </message>
    <message>
      <source>Tokens/s per stream (min–max)</source>
      <translation>Token/s pro Stream (min–max)</translation>
    </message>
    <message>
      <source>Total tokens/s</source>
      <translation>Token/s gesamt</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchRunner</name>
    <message numerus="yes">
      <source>%n scenario(s) measured</source>
      <translation><numerusform>%n Szenario gemessen</numerusform><numerusform>%n Szenarien gemessen</numerusform></translation>
    </message>
    <message>
      <source>bench-serve could not be started: %1 (%2)</source>
      <translation>bench-serve konnte nicht gestartet werden: %1 (%2)</translation>
    </message>
    <message>
      <source>bench-serve crashed</source>
      <translation>bench-serve ist abgestürzt</translation>
    </message>
    <message>
      <source>bench-serve exited with code %1: %2</source>
      <translation>bench-serve wurde mit Code %1 beendet: %2</translation>
    </message>
    <message>
      <source>bench-serve is not available: arclight-engine was not found next to the app</source>
      <translation>bench-serve ist nicht verfügbar: arclight-engine liegt nicht neben der App</translation>
    </message>
    <message>
      <source>cancelled</source>
      <translation>abgebrochen</translation>
    </message>
    <message>
      <source>error: %1</source>
      <translation>Fehler: %1</translation>
    </message>
    <message>
      <source>no server URL to benchmark</source>
      <translation>keine Server-URL zum Messen</translation>
    </message>
    <message>
      <source>some requests failed (exit code %1)</source>
      <translation>einige Anfragen sind fehlgeschlagen (Code %1)</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchmarkPage</name>
    <message>
      <source>decode tokens/s</source>
      <translation>Decode Token/s</translation>
    </message>
    <message>
      <source>prefill tokens/s</source>
      <translation>Prefill Token/s</translation>
    </message>
    <message>
      <source>The loaded model's context holds %L1 tokens; the prompt is capped to fit.</source>
      <translation>Der Kontext des geladenen Modells fasst %L1 Token; der Prompt wird passend gekürzt.</translation>
    </message>
    <message>
      <source>decode, measured (median)</source>
      <translation>Decode, gemessen (Median)</translation>
    </message>
    <message>
      <source>decode, published</source>
      <translation>Decode, veröffentlicht</translation>
    </message>
    <message>
      <source>prefill, measured (median, right axis)</source>
      <translation>Prefill, gemessen (Median, rechte Achse)</translation>
    </message>
    <message numerus="yes">
      <source>%1
%n stream(s)</source>
      <translation><numerusform>%1
%n Stream</numerusform><numerusform>%1
%n Streams</numerusform></translation>
    </message>
    <message>
      <source>&lt;b&gt;Published figures for %1&lt;/b&gt; (decode tokens/s):</source>
      <translation>&lt;b&gt;Veröffentlichte Werte für %1&lt;/b&gt; (Decode-Token/s):</translation>
    </message>
    <message>
      <source>API key:</source>
      <translation>API-Schlüssel:</translation>
    </message>
    <message>
      <source>Another server (vLLM, llama-server, …)</source>
      <translation>Ein anderer Server (vLLM, llama-server, …)</translation>
    </message>
    <message>
      <source>Answer tokens:</source>
      <translation>Antwort-Token:</translation>
    </message>
    <message>
      <source>CSV files (*.csv)</source>
      <translation>CSV-Dateien (*.csv)</translation>
    </message>
    <message>
      <source>Cancel</source>
      <translation>Abbrechen</translation>
    </message>
    <message>
      <source>Choose at least one prompt set.</source>
      <translation>Bitte mindestens einen Prompt-Satz wählen.</translation>
    </message>
    <message>
      <source>Compare two</source>
      <translation>Zwei vergleichen</translation>
    </message>
    <message>
      <source>Could not write %1.</source>
      <translation>%1 konnte nicht geschrieben werden.</translation>
    </message>
    <message>
      <source>Custom</source>
      <translation>Eigene</translation>
    </message>
    <message>
      <source>Delete</source>
      <translation>Löschen</translation>
    </message>
    <message>
      <source>Done: %1</source>
      <translation>Fertig: %1</translation>
    </message>
    <message>
      <source>Export</source>
      <translation>Export</translation>
    </message>
    <message>
      <source>Export CSV…</source>
      <translation>CSV exportieren…</translation>
    </message>
    <message>
      <source>Export JSON…</source>
      <translation>JSON exportieren…</translation>
    </message>
    <message>
      <source>Export results</source>
      <translation>Ergebnisse exportieren</translation>
    </message>
    <message>
      <source>History</source>
      <translation>Verlauf</translation>
    </message>
    <message>
      <source>JSON</source>
      <translation>JSON</translation>
    </message>
    <message>
      <source>JSON files (*.json)</source>
      <translation>JSON-Dateien (*.json)</translation>
    </message>
    <message>
      <source>Measured runs:</source>
      <translation>Gemessene Läufe:</translation>
    </message>
    <message>
      <source>Method</source>
      <translation>Methode</translation>
    </message>
    <message>
      <source>Model:</source>
      <translation>Modell:</translation>
    </message>
    <message>
      <source>No published figures for %1 in the catalog.</source>
      <translation>Keine veröffentlichten Werte für %1 im Katalog.</translation>
    </message>
    <message>
      <source>No results to export.</source>
      <translation>Keine Ergebnisse zum Exportieren.</translation>
    </message>
    <message>
      <source>Prefill prompt tokens:</source>
      <translation>Prompt-Token für Prefill:</translation>
    </message>
    <message>
      <source>Profile:</source>
      <translation>Profil:</translation>
    </message>
    <message>
      <source>Progress</source>
      <translation>Fortschritt</translation>
    </message>
    <message>
      <source>Prompts:</source>
      <translation>Prompts:</translation>
    </message>
    <message>
      <source>Published figures for the model appear here once it is known.</source>
      <translation>Veröffentlichte Werte für das Modell erscheinen hier, sobald es bekannt ist.</translation>
    </message>
    <message>
      <source>Results</source>
      <translation>Ergebnisse</translation>
    </message>
    <message>
      <source>Run benchmark</source>
      <translation>Benchmark starten</translation>
    </message>
    <message>
      <source>Running against %1…</source>
      <translation>Misst %1…</translation>
    </message>
    <message>
      <source>Seeds (3 warm-ups, 6 runs, 450 tokens, 1/4/6/8 streams)</source>
      <translation>Seeds (3 Aufwärmläufe, 6 Läufe, 450 Token, 1/4/6/8 Streams)</translation>
    </message>
    <message>
      <source>Select two runs to compare.</source>
      <translation>Zum Vergleichen zwei Läufe auswählen.</translation>
    </message>
    <message>
      <source>Server</source>
      <translation>Server</translation>
    </message>
    <message>
      <source>Show</source>
      <translation>Anzeigen</translation>
    </message>
    <message>
      <source>Stopped: %1</source>
      <translation>Abgebrochen: %1</translation>
    </message>
    <message>
      <source>Streams:</source>
      <translation>Streams:</translation>
    </message>
    <message>
      <source>The benchmark history cannot be read: %1</source>
      <translation>Der Benchmark-Verlauf ist nicht lesbar: %1</translation>
    </message>
    <message>
      <source>The catalog has no published figures for %1.</source>
      <translation>Der Katalog hat keine veröffentlichten Werte für %1.</translation>
    </message>
    <message>
      <source>The engine this app is connected to</source>
      <translation>Die Engine, mit der die App verbunden ist</translation>
    </message>
    <message>
      <source>The run could not be saved: %1</source>
      <translation>Der Lauf konnte nicht gespeichert werden: %1</translation>
    </message>
    <message>
      <source>URL:</source>
      <translation>URL:</translation>
    </message>
    <message>
      <source>code</source>
      <translation>Code</translation>
    </message>
    <message>
      <source>prefill</source>
      <translation>Prefill</translation>
    </message>
    <message>
      <source>prose</source>
      <translation>Prosa</translation>
    </message>
    <message>
      <source>published</source>
      <translation>veröffentlicht</translation>
    </message>
    <message>
      <source>published
%1</source>
      <translation>veröffentlicht
%1</translation>
    </message>
    <message>
      <source>skip</source>
      <translation>auslassen</translation>
    </message>
    <message>
      <source>the server's first model</source>
      <translation>das erste Modell des Servers</translation>
    </message>
    <message>
      <source>tokens/s</source>
      <translation>Token/s</translation>
    </message>
  </context>
  <context>
    <name>arc::app::BoxTableModel</name>
    <message>
      <source>%1 of %2</source>
      <translation>%1 von %2</translation>
    </message>
    <message>
      <source>%1 tok/s</source>
      <translation>%1 Token/s</translation>
    </message>
    <message>
      <source>Boxes</source>
      <translation>Boxen</translation>
    </message>
    <message>
      <source>Decode ceiling</source>
      <translation>Decode-Obergrenze</translation>
    </message>
    <message>
      <source>Largest context</source>
      <translation>Größter Kontext</translation>
    </message>
    <message>
      <source>Used per box</source>
      <translation>Belegt pro Box</translation>
    </message>
    <message>
      <source>Verdict</source>
      <translation>Ergebnis</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>unbekannt</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ChatComposer</name>
    <message>
      <source>Message (Enter sends, Shift+Enter new line, Esc stops)</source>
      <translation>Nachricht (Enter sendet, Umschalt+Enter neue Zeile, Esc stoppt)</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ChatController</name>
    <message>
      <source>The engine refused the API key. Check it in Settings.</source>
      <translation>Die Engine hat den API-Schlüssel abgelehnt. Prüfen Sie ihn in den Einstellungen.</translation>
    </message>
    <message>
      <source>No model is loaded. Pick one in the model list above the chat or on the Models page.</source>
      <translation>Es ist kein Modell geladen. Wählen Sie eines in der Modellliste über dem Chat oder auf der Seite „Modelle“.</translation>
    </message>
    <message>
      <source>The engine could not answer: %1 (HTTP %2)</source>
      <translation>Die Engine konnte nicht antworten: %1 (HTTP %2)</translation>
    </message>
    <message>
      <source>The conversation is too long for the model's context: %1. Start a new conversation or remove earlier turns.</source>
      <translation>Die Unterhaltung ist zu lang für den Kontext des Modells: %1. Beginnen Sie eine neue Unterhaltung oder entfernen Sie frühere Beiträge.</translation>
    </message>
    <message>
      <source>The engine could not be reached (%1). Is it running?</source>
      <translation>Die Engine ist nicht erreichbar (%1). Läuft sie?</translation>
    </message>
    <message>
      <source>The engine sent a malformed stream (a line over 16 MiB).</source>
      <translation>Die Engine hat einen fehlerhaften Datenstrom gesendet (eine Zeile über 16 MiB).</translation>
    </message>
    <message>
      <source>The engine stopped with an error: %1</source>
      <translation>Die Engine hat mit einem Fehler abgebrochen: %1</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ChatPage</name>
    <message>
      <source>Model:</source>
      <translation>Modell:</translation>
    </message>
    <message>
      <source>Export…</source>
      <translation>Exportieren…</translation>
    </message>
    <message>
      <source>Save this conversation as Markdown or JSON</source>
      <translation>Diese Unterhaltung als Markdown oder JSON speichern</translation>
    </message>
    <message>
      <source>The model could not be loaded: %1</source>
      <translation>Das Modell konnte nicht geladen werden: %1</translation>
    </message>
    <message>
      <source>Pick a model to load</source>
      <translation>Modell zum Laden wählen</translation>
    </message>
    <message>
      <source>No model files</source>
      <translation>Keine Modelldateien</translation>
    </message>
    <message>
      <source>Export conversation</source>
      <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
      <source>Markdown (*.md);;JSON (*.json)</source>
      <translation>Markdown (*.md);;JSON (*.json)</translation>
    </message>
    <message>
      <source>Could not export to %1: %2</source>
      <translation>Export nach %1 nicht möglich: %2</translation>
    </message>
    <message>
      <source>Attach images</source>
      <translation>Bilder anhängen</translation>
    </message>
    <message>
      <source>Attach images (or drop or paste them into the message)</source>
      <translation>Bilder anhängen (oder in die Nachricht ziehen oder einfügen)</translation>
    </message>
    <message>
      <source>Attach image…</source>
      <translation>Bild anhängen…</translation>
    </message>
    <message>
      <source>Balanced</source>
      <translation>Ausgewogen</translation>
    </message>
    <message>
      <source>Creative</source>
      <translation>Kreativ</translation>
    </message>
    <message>
      <source>Custom</source>
      <translation>Eigene</translation>
    </message>
    <message>
      <source>Delete</source>
      <translation>Löschen</translation>
    </message>
    <message>
      <source>Delete "%1"? This cannot be undone.</source>
      <translation>„%1“ löschen? Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message>
      <source>Delete conversation</source>
      <translation>Unterhaltung löschen</translation>
    </message>
    <message>
      <source>Edit message</source>
      <translation>Nachricht bearbeiten</translation>
    </message>
    <message>
      <source>Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</source>
      <translation>Bilder (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</translation>
    </message>
    <message>
      <source>Instructions the model follows in this conversation</source>
      <translation>Anweisungen, denen das Modell in dieser Unterhaltung folgt</translation>
    </message>
    <message>
      <source>Max tokens</source>
      <translation>Max. Token</translation>
    </message>
    <message>
      <source>New</source>
      <translation>Neu</translation>
    </message>
    <message>
      <source>No model is loaded.</source>
      <translation>Es ist kein Modell geladen.</translation>
    </message>
    <message>
      <source>Precise</source>
      <translation>Präzise</translation>
    </message>
    <message>
      <source>Reading prompt… %1 s</source>
      <translation>Lese Eingabe… %1 s</translation>
    </message>
    <message>
      <source>Remove</source>
      <translation>Entfernen</translation>
    </message>
    <message>
      <source>Remove this image</source>
      <translation>Dieses Bild entfernen</translation>
    </message>
    <message>
      <source>Rename</source>
      <translation>Umbenennen</translation>
    </message>
    <message>
      <source>Rename conversation</source>
      <translation>Unterhaltung umbenennen</translation>
    </message>
    <message>
      <source>Sampling:</source>
      <translation>Sampling:</translation>
    </message>
    <message>
      <source>Search conversations</source>
      <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
      <source>Send</source>
      <translation>Senden</translation>
    </message>
    <message>
      <source>Stop</source>
      <translation>Stopp</translation>
    </message>
    <message>
      <source>System prompt and sampling</source>
      <translation>Systemprompt und Sampling</translation>
    </message>
    <message>
      <source>System prompt:</source>
      <translation>Systemprompt:</translation>
    </message>
    <message>
      <source>Temperature</source>
      <translation>Temperatur</translation>
    </message>
    <message>
      <source>The later turns are replaced by a new answer.</source>
      <translation>Die späteren Beiträge werden durch eine neue Antwort ersetzt.</translation>
    </message>
    <message>
      <source>The loaded model cannot read images.</source>
      <translation>Das geladene Modell kann keine Bilder lesen.</translation>
    </message>
    <message>
      <source>Title:</source>
      <translation>Titel:</translation>
    </message>
    <message>
      <source>Top k</source>
      <translation>Top k</translation>
    </message>
    <message>
      <source>Top p</source>
      <translation>Top p</translation>
    </message>
    <message>
      <source>Writing the answer… %1 s</source>
      <translation>Schreibe die Antwort… %1 s</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ClusterBoxModel</name>
    <message>
      <source>%1 (%2 dirty)</source>
      <translation>%1 (%2 ungeschrieben)</translation>
    </message>
    <message>
      <source>%1 GiB</source>
      <translation>%1 GiB</translation>
    </message>
    <message>
      <source>%1 used of %2</source>
      <translation>%1 von %2 belegt</translation>
    </message>
    <message>
      <source>%1, %2</source>
      <translation>%1, %2</translation>
    </message>
    <message>
      <source>%1, %2 CPUs</source>
      <translation>%1, %2 CPUs</translation>
    </message>
    <message>
      <source>%1, %2 free of %3</source>
      <translation>%1, %2 von %3 frei</translation>
    </message>
    <message>
      <source>(unknown)</source>
      <translation>(unbekannt)</translation>
    </message>
    <message>
      <source>?</source>
      <translation>?</translation>
    </message>
    <message>
      <source>Box</source>
      <translation>Box</translation>
    </message>
    <message>
      <source>GPU</source>
      <translation>GPU</translation>
    </message>
    <message>
      <source>Memory</source>
      <translation>Speicher</translation>
    </message>
    <message>
      <source>Page cache</source>
      <translation>Seitencache</translation>
    </message>
    <message>
      <source>Rank</source>
      <translation>Rang</translation>
    </message>
    <message>
      <source>Swap</source>
      <translation>Swap</translation>
    </message>
    <message>
      <source>none</source>
      <translation>keine</translation>
    </message>
    <message>
      <source>none (%1)</source>
      <translation>keine (%1)</translation>
    </message>
    <message>
      <source>off</source>
      <translation>aus</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>unbekannt</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ClusterController</name>
    <message>
      <source>%1 has a small MTU: RoCE then sends packets under 4096 bytes. Set the same larger MTU (9000) on both boxes.</source>
      <translation>%1 hat eine kleine MTU: RoCE sendet dann Pakete unter 4096 Bytes. Stellen Sie auf beiden Boxen dieselbe größere MTU (9000) ein.</translation>
    </message>
    <message>
      <source>%1 is down: bring it up (ip link set %1 up).</source>
      <translation>%1 ist inaktiv: aktivieren Sie es (ip link set %1 up).</translation>
    </message>
    <message>
      <source>%1 runs below the 200 Gb/s of a DGX Spark QSFP port: check the cable.</source>
      <translation>%1 läuft unter den 200 Gb/s eines DGX-Spark-QSFP-Ports: prüfen Sie das Kabel.</translation>
    </message>
    <message>
      <source>%1: %2</source>
      <translation>%1: %2</translation>
    </message>
    <message>
      <source>%1: no link. No cable, or the other box's port is down.</source>
      <translation>%1: keine Verbindung. Kein Kabel, oder der Port der anderen Box ist aus.</translation>
    </message>
    <message>
      <source>%1: the link is up but the RDMA port is not active. Check the interface is up and configured on both boxes.</source>
      <translation>%1: die Verbindung steht, aber der RDMA-Port ist nicht aktiv. Prüfen Sie, ob die Schnittstelle auf beiden Boxen aktiv und eingerichtet ist.</translation>
    </message>
    <message>
      <source>Large page cache: on unified memory the GPU may not get it back in time. Drop it before a big load (sync; echo 3 | sudo tee /proc/sys/vm/drop_caches).</source>
      <translation>Großer Seitencache: bei gemeinsamem Speicher bekommt die GPU ihn womöglich nicht rechtzeitig zurück. Leeren Sie ihn vor einem großen Ladevorgang (sync; echo 3 | sudo tee /proc/sys/vm/drop_caches).</translation>
    </message>
    <message>
      <source>Many pages wait to be written to disk: run sync before a load.</source>
      <translation>Viele Seiten warten darauf, auf die Platte geschrieben zu werden: führen Sie vor dem Laden sync aus.</translation>
    </message>
    <message>
      <source>No RDMA device: the boxes talk over TCP, a fraction of the link's speed.</source>
      <translation>Kein RDMA-Gerät: die Boxen sprechen über TCP, mit einem Bruchteil der Verbindungsgeschwindigkeit.</translation>
    </message>
    <message>
      <source>No RDMA port is active: traffic between the boxes falls back to TCP.</source>
      <translation>Kein RDMA-Port ist aktiv: der Verkehr zwischen den Boxen fällt auf TCP zurück.</translation>
    </message>
    <message>
      <source>Swap is in use: the box is short of memory. Free memory or load a smaller model.</source>
      <translation>Swap wird genutzt: der Box fehlt Speicher. Geben Sie Speicher frei oder laden Sie ein kleineres Modell.</translation>
    </message>
    <message>
      <source>Swap is on: a box that runs out of memory pages for hours instead of failing.</source>
      <translation>Swap ist an: eine Box ohne freien Speicher lagert stundenlang aus, statt mit einem Fehler abzubrechen.</translation>
    </message>
    <message>
      <source>The ConnectX-7 has active ports on only one of its two PCIe links: one link tops out near 14 GB/s. Use both interfaces of the cable.</source>
      <translation>Die ConnectX-7 hat nur auf einer ihrer zwei PCIe-Anbindungen aktive Ports: eine Anbindung schafft höchstens etwa 14 GB/s. Nutzen Sie beide Schnittstellen des Kabels.</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ClusterPage</name>
    <message numerus="yes">
      <source>%n box(es), %1 rank(s); not saved yet (Save writes %2)</source>
      <translation><numerusform>%n Box, %1 Rang/Ränge; noch nicht gespeichert (Speichern schreibt %2)</numerusform><numerusform>%n Boxen, %1 Rang/Ränge; noch nicht gespeichert (Speichern schreibt %2)</numerusform></translation>
    </message>
    <message>
      <source> — a model is loading; the other ranks' figures are from before</source>
      <translation> — ein Modell wird geladen; die Werte der anderen Ränge sind von vorher</translation>
    </message>
    <message>
      <source>%1 KiB</source>
      <translation>%1 KiB</translation>
    </message>
    <message>
      <source>%1 MiB</source>
      <translation>%1 MiB</translation>
    </message>
    <message>
      <source>%1 ms</source>
      <translation>%1 ms</translation>
    </message>
    <message numerus="yes">
      <source>%n box(es), %1 rank(s); saved as %2</source>
      <translation><numerusform>%n Box, %1 Rang/Ränge; gespeichert als %2</numerusform><numerusform>%n Boxen, %1 Rang/Ränge; gespeichert als %2</numerusform></translation>
    </message>
    <message numerus="yes">
      <source>%n rank(s)</source>
      <translation><numerusform>%n Rang</numerusform><numerusform>%n Ränge</numerusform></translation>
    </message>
    <message numerus="yes">
      <source>%n rank(s).</source>
      <translation><numerusform>%n Rang.</numerusform><numerusform>%n Ränge.</numerusform></translation>
    </message>
    <message numerus="yes">
      <source>%n rank(s); a model was loaded and serving may have slowed it.</source>
      <translation><numerusform>%n Rang; ein Modell war geladen, seine Anfragen können den Test gebremst haben.</numerusform><numerusform>%n Ränge; ein Modell war geladen, seine Anfragen können den Test gebremst haben.</numerusform></translation>
    </message>
    <message>
      <source>A timed all-reduce between the ranks, as the model uses it.</source>
      <translation>Ein zeitgemessenes All-Reduce zwischen den Rängen, wie das Modell es nutzt.</translation>
    </message>
    <message>
      <source>Asking the engine…</source>
      <translation>Frage die Engine…</translation>
    </message>
    <message>
      <source>Bus GB/s</source>
      <translation>Bus-GB/s</translation>
    </message>
    <message>
      <source>Cannot read the cluster: %1</source>
      <translation>Cluster nicht lesbar: %1</translation>
    </message>
    <message>
      <source>Check</source>
      <translation>Prüfung</translation>
    </message>
    <message>
      <source>Copy</source>
      <translation>Kopieren</translation>
    </message>
    <message>
      <source>Hostfile</source>
      <translation>Hostdatei</translation>
    </message>
    <message>
      <source>Link test</source>
      <translation>Verbindungstest</translation>
    </message>
    <message>
      <source>No problems found.</source>
      <translation>Keine Probleme gefunden.</translation>
    </message>
    <message>
      <source>Not connected to an engine.</source>
      <translation>Nicht mit einer Engine verbunden.</translation>
    </message>
    <message>
      <source>Not saved: %1</source>
      <translation>Nicht gespeichert: %1</translation>
    </message>
    <message>
      <source>One line per box, for example:
spark-a slots=1
spark-b slots=1</source>
      <translation>Eine Zeile pro Box, zum Beispiel:
spark-a slots=1
spark-b slots=1</translation>
    </message>
    <message>
      <source>Refresh</source>
      <translation>Aktualisieren</translation>
    </message>
    <message>
      <source>Run link test</source>
      <translation>Verbindungstest starten</translation>
    </message>
    <message>
      <source>Running…</source>
      <translation>Läuft…</translation>
    </message>
    <message>
      <source>Save</source>
      <translation>Speichern</translation>
    </message>
    <message>
      <source>Saved as %1. The local engine uses it from its next start (Engine → Stop, then Start local engine).</source>
      <translation>Gespeichert als %1. Die lokale Engine nutzt sie ab dem nächsten Start (Engine → Stoppen, dann Lokale Engine starten).</translation>
    </message>
    <message>
      <source>Size</source>
      <translation>Größe</translation>
    </message>
    <message>
      <source>Time per all-reduce</source>
      <translation>Zeit pro All-Reduce</translation>
    </message>
    <message>
      <source>WRONG SUMS</source>
      <translation>FALSCHE SUMMEN</translation>
    </message>
    <message>
      <source>line %1: %2</source>
      <translation>Zeile %1: %2</translation>
    </message>
    <message>
      <source>sums correct</source>
      <translation>Summen richtig</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ClusterPortModel</name>
    <message>
      <source>%1 (%2)</source>
      <translation>%1 (%2)</translation>
    </message>
    <message>
      <source>%1 Gb/s</source>
      <translation>%1 Gb/s</translation>
    </message>
    <message>
      <source>%1 port %2</source>
      <translation>%1 Port %2</translation>
    </message>
    <message>
      <source>?</source>
      <translation>?</translation>
    </message>
    <message>
      <source>Box</source>
      <translation>Box</translation>
    </message>
    <message>
      <source>Hint</source>
      <translation>Hinweis</translation>
    </message>
    <message>
      <source>Interface</source>
      <translation>Schnittstelle</translation>
    </message>
    <message>
      <source>Interface %1 is %2: bring it up.</source>
      <translation>Schnittstelle %1 ist %2: aktivieren Sie sie.</translation>
    </message>
    <message>
      <source>Link up but RDMA not active: check the interface on both boxes.</source>
      <translation>Verbindung steht, aber RDMA ist nicht aktiv: prüfen Sie die Schnittstelle auf beiden Boxen.</translation>
    </message>
    <message>
      <source>MTU</source>
      <translation>MTU</translation>
    </message>
    <message>
      <source>MTU %1 is small for RoCE: set 9000 on both boxes.</source>
      <translation>MTU %1 ist klein für RoCE: stellen Sie auf beiden Boxen 9000 ein.</translation>
    </message>
    <message>
      <source>No link: no cable, or the other box's port is down.</source>
      <translation>Keine Verbindung: kein Kabel, oder der Port der anderen Box ist aus.</translation>
    </message>
    <message>
      <source>RDMA port</source>
      <translation>RDMA-Port</translation>
    </message>
    <message>
      <source>Rate</source>
      <translation>Rate</translation>
    </message>
    <message>
      <source>State</source>
      <translation>Zustand</translation>
    </message>
    <message>
      <source>none found</source>
      <translation>keine gefunden</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>unbekannt</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ConversationListModel</name>
    <message>
      <source>Yesterday</source>
      <translation>Gestern</translation>
    </message>
    <message>
      <source>Could not save the conversation to %1: %2</source>
      <translation>Die Unterhaltung konnte nicht in %1 gespeichert werden: %2</translation>
    </message>
    <message>
      <source>New conversation</source>
      <translation>Neue Unterhaltung</translation>
    </message>
    <message>
      <source>Skipped the conversation file %1: %2</source>
      <translation>Unterhaltungsdatei %1 übersprungen: %2</translation>
    </message>
    <message>
      <source>its id "%1" does not match the file name</source>
      <translation>ihre ID „%1“ passt nicht zum Dateinamen</translation>
    </message>
    <message>
      <source>not a conversation (%1)</source>
      <translation>keine Unterhaltung (%1)</translation>
    </message>
    <message>
      <source>not valid JSON (%1 at byte %2)</source>
      <translation>kein gültiges JSON (%1 bei Byte %2)</translation>
    </message>
    <message>
      <source>the file is larger than %1 MiB</source>
      <translation>die Datei ist größer als %1 MiB</translation>
    </message>
  </context>
  <context>
    <name>arc::app::EngineClient</name>
    <message>
      <source>loading the model</source>
      <translation>das Laden des Modells</translation>
    </message>
    <message>
      <source>cancelling the load</source>
      <translation>das Abbrechen des Ladens</translation>
    </message>
    <message>
      <source>unloading the model</source>
      <translation>das Entladen des Modells</translation>
    </message>
    <message>
      <source>asking the engine for its state</source>
      <translation>die Abfrage des Engine-Zustands</translation>
    </message>
    <message>
      <source>asking for the loaded model</source>
      <translation>die Abfrage des geladenen Modells</translation>
    </message>
    <message>
      <source>listing the model files</source>
      <translation>das Auflisten der Modelldateien</translation>
    </message>
    <message>
      <source>planning the fit</source>
      <translation>die Speicherplanung</translation>
    </message>
    <message>
      <source>reading the boxes of the cluster</source>
      <translation>das Lesen der Boxen des Clusters</translation>
    </message>
    <message>
      <source>the link test</source>
      <translation>der Verbindungstest</translation>
    </message>
    <message>
      <source>reading the engine log</source>
      <translation>das Lesen des Engine-Protokolls</translation>
    </message>
    <message>
      <source>a request to the engine</source>
      <translation>eine Anfrage an die Engine</translation>
    </message>
    <message>
      <source>%1 failed: %2 (HTTP %3)</source>
      <translation>%1 ist fehlgeschlagen: %2 (HTTP %3)</translation>
    </message>
    <message>
      <source>%1 failed: the engine's answer was not readable (%2)</source>
      <translation>%1 ist fehlgeschlagen: die Antwort der Engine war nicht lesbar (%2)</translation>
    </message>
    <message>
      <source>%1 failed (HTTP %2)</source>
      <translation>%1 ist fehlgeschlagen (HTTP %2)</translation>
    </message>
    <message>
      <source>HTTP %1</source>
      <translation>HTTP %1</translation>
    </message>
    <message>
      <source>engine not reachable at %1: %2</source>
      <translation>Engine unter %1 nicht erreichbar: %2</translation>
    </message>
    <message>
      <source>lost the connection to the engine: %1</source>
      <translation>Verbindung zur Engine verloren: %1</translation>
    </message>
    <message>
      <source>the engine refused the API key (HTTP %1); check it in Settings</source>
      <translation>die Engine hat den API-Schlüssel abgelehnt (HTTP %1); bitte in den Einstellungen prüfen</translation>
    </message>
    <message>
      <source>the engine refused the load (HTTP %1)</source>
      <translation>die Engine hat das Laden abgelehnt (HTTP %1)</translation>
    </message>
    <message>
      <source>the engine sent an unreadable event (%1)</source>
      <translation>die Engine hat ein unlesbares Ereignis gesendet (%1)</translation>
    </message>
    <message>
      <source>the engine's event stream sent an oversized event; reconnecting</source>
      <translation>der Ereignisstrom der Engine hat ein übergroßes Ereignis gesendet; verbinde neu</translation>
    </message>
  </context>
  <context>
    <name>arc::app::EngineProcess</name>
    <message>
      <source>$ %1</source>
      <translation>$ %1</translation>
    </message>
    <message>
      <source>engine not available: %1 could not be started (%2)</source>
      <translation>Engine nicht verfügbar: %1 konnte nicht gestartet werden (%2)</translation>
    </message>
    <message>
      <source>engine not available: arclight-engine was not found next to the app (%1)</source>
      <translation>Engine nicht verfügbar: arclight-engine liegt nicht neben der App (%1)</translation>
    </message>
    <message>
      <source>engine not available: it crashed</source>
      <translation>Engine nicht verfügbar: sie ist abgestürzt</translation>
    </message>
    <message>
      <source>engine not available: it exited with code %1</source>
      <translation>Engine nicht verfügbar: sie wurde mit Code %1 beendet</translation>
    </message>
    <message>
      <source>engine not available: the hostfile %1 cannot be read</source>
      <translation>Engine nicht verfügbar: die Hostdatei %1 ist nicht lesbar</translation>
    </message>
  </context>
  <context>
    <name>arc::app::EngineSession</name>
    <message>
      <source>Loading cancelled.</source>
      <translation>Laden abgebrochen.</translation>
    </message>
    <message>
      <source>CUDA (device %1)</source>
      <translation>CUDA (Gerät %1)</translation>
    </message>
    <message>
      <source>CUDA</source>
      <translation>CUDA</translation>
    </message>
    <message>
      <source>CPU</source>
      <translation>CPU</translation>
    </message>
    <message>
      <source>arclight-engine was not found next to the app, so it cannot make the demo model</source>
      <translation>arclight-engine liegt nicht neben der App, daher kann das Demo-Modell nicht erzeugt werden</translation>
    </message>
    <message>
      <source>cannot load: no engine is connected</source>
      <translation>Laden nicht möglich: keine Engine verbunden</translation>
    </message>
    <message>
      <source>loading failed: %1</source>
      <translation>Laden fehlgeschlagen: %1</translation>
    </message>
    <message>
      <source>no engine: starting a local engine is switched off in Settings</source>
      <translation>keine Engine: der Start einer lokalen Engine ist in den Einstellungen ausgeschaltet</translation>
    </message>
    <message>
      <source>the engine could not make the demo model (exit code %1): %2</source>
      <translation>die Engine konnte das Demo-Modell nicht erzeugen (Exit-Code %1): %2</translation>
    </message>
    <message>
      <source>the engine refused the load: %1</source>
      <translation>die Engine hat das Laden abgelehnt: %1</translation>
    </message>
  </context>
  <context>
    <name>arc::app::FitController</name>
    <message>
      <source>%1 GiB</source>
      <translation>%1 GiB</translation>
    </message>
    <message>
      <source>%1 (%2 GB)</source>
      <translation>%1 (%2 GB)</translation>
    </message>
    <message>
      <source>on one box</source>
      <translation>auf einer Box</translation>
    </message>
    <message>
      <source>on each of %1 boxes</source>
      <translation>auf jeder von %1 Boxen</translation>
    </message>
    <message>
      <source>uses %1 of the %2 a box has %3, leaving %4 of headroom</source>
      <translation>belegt %3 %1 der %2, die eine Box hat; %4 Spielraum bleiben</translation>
    </message>
    <message>
      <source>uses %1 of the %2 a box has %3, leaving only %4 of headroom, under the %5 margin (a GB10 that runs out of memory freezes)</source>
      <translation>belegt %3 %1 der %2, die eine Box hat; nur %4 Spielraum bleiben, unter der Sicherheitsmarge von %5 (eine GB10 ohne freien Speicher friert ein)</translation>
    </message>
    <message>
      <source>needs %1 %2, %3 more than the %4 a box has</source>
      <translation>braucht %1 %2, %3 mehr als die %4, die eine Box hat</translation>
    </message>
    <message>
      <source>; the weights alone take %1 a box</source>
      <translation>; allein die Gewichte belegen %1 pro Box</translation>
    </message>
    <message>
      <source>; the KV cache for %1 tokens x %2 sequences takes %3 a box, and the largest context that fits is %4 tokens</source>
      <translation>; der KV-Cache für %1 Token × %2 Sequenzen belegt %3 pro Box, der größte passende Kontext ist %4 Token</translation>
    </message>
    <message>
      <source>; keeping the n-gram tables on disk would free %1 a box</source>
      <translation>; die N-Gramm-Tabellen auf der Platte zu lassen, würde %1 pro Box freigeben</translation>
    </message>
    <message>
      <source>does not fit</source>
      <translation>passt nicht</translation>
    </message>
    <message>
      <source>fits</source>
      <translation>passt</translation>
    </message>
    <message>
      <source>pick a model to see how it fits</source>
      <translation>Wähle ein Modell, um zu sehen, wie es passt</translation>
    </message>
    <message>
      <source>the file is on the engine's machine, not readable here</source>
      <translation>die Datei liegt auf dem Rechner der Engine und ist hier nicht lesbar</translation>
    </message>
    <message>
      <source>the fit calculator has no numbers for this model</source>
      <translation>der Passrechner hat keine Zahlen für dieses Modell</translation>
    </message>
    <message>
      <source>this build reads no GGUF files for planning</source>
      <translation>dieser Build liest keine GGUF-Dateien zur Planung</translation>
    </message>
    <message>
      <source>tight</source>
      <translation>knapp</translation>
    </message>
  </context>
  <context>
    <name>arc::app::FitView</name>
    <message>
      <source>Box %1</source>
      <translation>Box %1</translation>
    </message>
    <message>
      <source>GiB per box</source>
      <translation>GiB pro Box</translation>
    </message>
    <message>
      <source>Headroom</source>
      <translation>Spielraum</translation>
    </message>
    <message>
      <source>KV cache</source>
      <translation>KV-Cache</translation>
    </message>
    <message>
      <source>Reserve</source>
      <translation>Reserve</translation>
    </message>
    <message>
      <source>Runtime</source>
      <translation>Laufzeit</translation>
    </message>
    <message>
      <source>Weights</source>
      <translation>Gewichte</translation>
    </message>
  </context>
  <context>
    <name>arc::app::Hostfile</name>
    <message>
      <source>%1 is listed twice</source>
      <translation>%1 steht zweimal in der Liste</translation>
    </message>
    <message>
      <source>'%1' is not a host name or address</source>
      <translation>„%1“ ist kein Hostname und keine Adresse</translation>
    </message>
    <message>
      <source>cannot write %1: %2</source>
      <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
      <source>line %1: %2</source>
      <translation>Zeile %1: %2</translation>
    </message>
    <message>
      <source>list at least one box: one line per box, HOST slots=1</source>
      <translation>geben Sie mindestens eine Box an: eine Zeile pro Box, HOST slots=1</translation>
    </message>
    <message>
      <source>slots must be a number from 1 to 64, not '%1'</source>
      <translation>slots muss eine Zahl von 1 bis 64 sein, nicht „%1“</translation>
    </message>
    <message>
      <source>the hostfile is empty</source>
      <translation>die Hostdatei ist leer</translation>
    </message>
    <message>
      <source>unknown '%1': write HOST slots=N</source>
      <translation>unbekannt: „%1“; schreiben Sie HOST slots=N</translation>
    </message>
  </context>
  <context>
    <name>arc::app::LogDialog</name>
    <message>
      <source>Close</source>
      <translation>Schließen</translation>
    </message>
    <message>
      <source>Refresh</source>
      <translation>Aktualisieren</translation>
    </message>
    <message>
      <source>(the engine has not logged anything yet)</source>
      <translation>(die Engine hat noch nichts protokolliert)</translation>
    </message>
    <message>
      <source>The engine&apos;s log is not available: %1</source>
      <translation>Das Protokoll der Engine ist nicht verfügbar: %1</translation>
    </message>
    <message>
      <source>No engine connected.</source>
      <translation>Keine Engine verbunden.</translation>
    </message>
    <message>
      <source>Asking the engine for its recent log…</source>
      <translation>Frage die Engine nach ihrem letzten Protokoll…</translation>
    </message>
    <message>
      <source>(the local engine has not written anything)</source>
      <translation>(die lokale Engine hat noch nichts ausgegeben)</translation>
    </message>
    <message>
      <source>Engine log</source>
      <translation>Engine-Protokoll</translation>
    </message>
  </context>
  <context>
    <name>arc::app::MainWindow</name>
    <message>
      <source>%1 tok/s</source>
      <translation>%1 Token/s</translation>
    </message>
    <message>
      <source>&amp;About Arclight</source>
      <translation>Ü&amp;ber Arclight</translation>
    </message>
    <message>
      <source>&amp;Engine</source>
      <translation>&amp;Engine</translation>
    </message>
    <message>
      <source>&amp;File</source>
      <translation>&amp;Datei</translation>
    </message>
    <message>
      <source>&amp;Help</source>
      <translation>&amp;Hilfe</translation>
    </message>
    <message>
      <source>&amp;Quit</source>
      <translation>&amp;Beenden</translation>
    </message>
    <message>
      <source>&amp;Reconnect</source>
      <translation>Neu &amp;verbinden</translation>
    </message>
    <message>
      <source>&amp;Settings…</source>
      <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
      <source>&amp;Start local engine</source>
      <translation>Lokale Engine &amp;starten</translation>
    </message>
    <message>
      <source>&amp;Theme</source>
      <translation>&amp;Farbschema</translation>
    </message>
    <message>
      <source>&amp;View</source>
      <translation>&amp;Ansicht</translation>
    </message>
    <message>
      <source>Arclight</source>
      <translation>Arclight</translation>
    </message>
    <message>
      <source>Benchmark</source>
      <translation>Benchmark</translation>
    </message>
    <message>
      <source>Chat</source>
      <translation>Chat</translation>
    </message>
    <message>
      <source>Cluster</source>
      <translation>Cluster</translation>
    </message>
    <message>
      <source>Ctrl+,</source>
      <translation>Ctrl+,</translation>
    </message>
    <message>
      <source>Ctrl+L</source>
      <translation>Ctrl+L</translation>
    </message>
    <message>
      <source>Ctrl+R</source>
      <translation>Ctrl+R</translation>
    </message>
    <message>
      <source>Dark</source>
      <translation>Dunkel</translation>
    </message>
    <message>
      <source>Engine &amp;log…</source>
      <translation>Engine-&amp;Protokoll…</translation>
    </message>
    <message>
      <source>Engine: %1</source>
      <translation>Engine: %1</translation>
    </message>
    <message>
      <source>Engine: connecting…</source>
      <translation>Engine: verbinde…</translation>
    </message>
    <message>
      <source>Engine: offline</source>
      <translation>Engine: offline</translation>
    </message>
    <message>
      <source>Engine: reconnecting…</source>
      <translation>Engine: verbinde erneut…</translation>
    </message>
    <message>
      <source>Language</source>
      <translation>Sprache</translation>
    </message>
    <message>
      <source>Light</source>
      <translation>Hell</translation>
    </message>
    <message>
      <source>Model: %1</source>
      <translation>Modell: %1</translation>
    </message>
    <message>
      <source>Models</source>
      <translation>Modelle</translation>
    </message>
    <message>
      <source>Monitor</source>
      <translation>Monitor</translation>
    </message>
    <message>
      <source>No model loaded</source>
      <translation>Kein Modell geladen</translation>
    </message>
    <message>
      <source>S&amp;top local engine</source>
      <translation>Lokale Engine s&amp;toppen</translation>
    </message>
    <message>
      <source>System</source>
      <translation>System</translation>
    </message>
    <message>
      <source>The new language is used when Arclight starts again.</source>
      <translation>Die neue Sprache gilt ab dem nächsten Start von Arclight.</translation>
    </message>
    <message>
      <source>box %1: %2 / %3</source>
      <translation>Box %1: %2 / %3</translation>
    </message>
  </context>
  <context>
    <name>arc::app::MessageWidget</name>
    <message>
      <source>%1 prefix tokens reused</source>
      <translation>%1 Präfix-Token wiederverwendet</translation>
    </message>
    <message>
      <source>%1% of %2 drafts accepted</source>
      <translation>%1 % von %2 Entwurfs-Token angenommen</translation>
    </message>
    <message>
      <source>%1 tok/s</source>
      <translation>%1 Token/s</translation>
    </message>
    <message>
      <source>(stopped)</source>
      <translation>(gestoppt)</translation>
    </message>
    <message>
      <source>Assistant</source>
      <translation>Assistent</translation>
    </message>
    <message>
      <source>Copy</source>
      <translation>Kopieren</translation>
    </message>
    <message>
      <source>Copy %1 code</source>
      <translation>%1-Code kopieren</translation>
    </message>
    <message>
      <source>Copy code</source>
      <translation>Code kopieren</translation>
    </message>
    <message>
      <source>Edit</source>
      <translation>Bearbeiten</translation>
    </message>
    <message>
      <source>Regenerate</source>
      <translation>Neu erzeugen</translation>
    </message>
    <message>
      <source>Retry</source>
      <translation>Erneut versuchen</translation>
    </message>
    <message>
      <source>Thinking</source>
      <translation>Überlegungen</translation>
    </message>
    <message>
      <source>Thinking…</source>
      <translation>Überlegt…</translation>
    </message>
    <message>
      <source>You</source>
      <translation>Sie</translation>
    </message>
    <message>
      <source>first token %1 s</source>
      <translation>erstes Token %1 s</translation>
    </message>
    <message>
      <source>tokens in %1 / out %2</source>
      <translation>Token ein %1 / aus %2</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ModelListModel</name>
    <message>
      <source>%1 M</source>
      <translation>%1 Mio.</translation>
    </message>
    <message>
      <source>%1 GiB</source>
      <translation>%1 GiB</translation>
    </message>
    <message>
      <source>%1 (loaded)</source>
      <translation>%1 (geladen)</translation>
    </message>
    <message>
      <source>%1 B</source>
      <translation>%1 Mrd.</translation>
    </message>
    <message>
      <source>Active</source>
      <translation>Aktiv</translation>
    </message>
    <message>
      <source>Family</source>
      <translation>Familie</translation>
    </message>
    <message>
      <source>Fit</source>
      <translation>Passt</translation>
    </message>
    <message>
      <source>Model</source>
      <translation>Modell</translation>
    </message>
    <message>
      <source>Parameters</source>
      <translation>Parameter</translation>
    </message>
    <message>
      <source>Size</source>
      <translation>Größe</translation>
    </message>
    <message>
      <source>does not fit</source>
      <translation>passt nicht</translation>
    </message>
    <message>
      <source>fits</source>
      <translation>passt</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ModelsPage</name>
    <message>
      <source>Vision</source>
      <translation>Bildverarbeitung</translation>
    </message>
    <message>
      <source>no projector made for this model beside it (put its mmproj file in the same folder)</source>
      <translation>kein für dieses Modell gemachter Projektor daneben (seine mmproj-Datei in denselben Ordner legen)</translation>
    </message>
    <message>
      <source>projector %1</source>
      <translation>Projektor %1</translation>
    </message>
    <message>
      <source>Cancel load</source>
      <translation>Laden abbrechen</translation>
    </message>
    <message>
      <source>Stop reading the weights; the model that was loaded before comes back</source>
      <translation>Das Lesen der Gewichte beenden; das vorher geladene Modell kehrt zurück</translation>
    </message>
    <message>
      <source>Cancelling…</source>
      <translation>Wird abgebrochen…</translation>
    </message>
    <message>
      <source> The engine keeps the KV cache in f16 or f32: loading with f16 (the plan used %1).</source>
      <translation> Die Engine hält den KV-Cache in f16 oder f32: Laden mit f16 (die Planung nutzte %1).</translation>
    </message>
    <message>
      <source> (The settings could not be remembered: %1.)</source>
      <translation> (Die Einstellungen konnten nicht gespeichert werden: %1.)</translation>
    </message>
    <message>
      <source>Asking the engine to load %1 with %2 tokens of context, %3 parallel sequences…</source>
      <translation>Die Engine lädt %1 mit %2 Token Kontext und %3 parallelen Sequenzen…</translation>
    </message>
    <message>
      <source>Load the demo model?</source>
      <translation>Demo-Modell laden?</translation>
    </message>
    <message>
      <source>%1 is loaded. Replace it with the demo model (random weights, for trying the app)?</source>
      <translation>%1 ist geladen. Durch das Demo-Modell ersetzen (Zufallsgewichte, zum Ausprobieren der App)?</translation>
    </message>
    <message>
      <source>Measure quality…</source>
      <translation>Qualität messen…</translation>
    </message>
    <message>
      <source>KL divergence, top-1 agreement and perplexity of this file against a reference file of the same model, on the built-in text</source>
      <translation>KL-Divergenz, Top-1-Übereinstimmung und Perplexität dieser Datei gegenüber einer Referenzdatei desselben Modells, auf dem eingebauten Text</translation>
    </message>
    <message>
      <source>Stop</source>
      <translation>Anhalten</translation>
    </message>
    <message>
      <source>Published quality</source>
      <translation>Veröffentlichte Qualität</translation>
    </message>
    <message>
      <source>Measured quality</source>
      <translation>Gemessene Qualität</translation>
    </message>
    <message>
      <source>Measured: %1</source>
      <translation>Gemessen: %1</translation>
    </message>
    <message>
      <source>Measured, but not saved (%1): %2</source>
      <translation>Gemessen, aber nicht gespeichert (%1): %2</translation>
    </message>
    <message>
      <source>Reference build of %1 (e.g. BF16 or Q8_0)</source>
      <translation>Referenz-Build von %1 (z. B. BF16 oder Q8_0)</translation>
    </message>
    <message>
      <source>GGUF models (*.gguf)</source>
      <translation>GGUF-Modelle (*.gguf)</translation>
    </message>
    <message>
      <source>Choose another build as the reference, not the file itself.</source>
      <translation>Wählen Sie einen anderen Build als Referenz, nicht die Datei selbst.</translation>
    </message>
    <message>
      <source>Measuring %1 against %2…</source>
      <translation>Messe %1 gegen %2…</translation>
    </message>
    <message>
      <source> GiB</source>
      <translation> GiB</translation>
    </message>
    <message>
      <source> tokens</source>
      <translation> Token</translation>
    </message>
    <message>
      <source>%1 B</source>
      <translation>%1 Mrd.</translation>
    </message>
    <message>
      <source>%1 tok/s</source>
      <translation>%1 Token/s</translation>
    </message>
    <message numerus="yes">
      <source>%n file(s) found by the engine.</source>
      <translation><numerusform>%n Datei von der Engine gefunden.</numerusform><numerusform>%n Dateien von der Engine gefunden.</numerusform></translation>
    </message>
    <message>
      <source>30–150 B</source>
      <translation>30–150 Mrd.</translation>
    </message>
    <message>
      <source>Active parameters</source>
      <translation>Aktive Parameter</translation>
    </message>
    <message>
      <source>All families</source>
      <translation>Alle Familien</translation>
    </message>
    <message>
      <source>Any size</source>
      <translation>Jede Größe</translation>
    </message>
    <message>
      <source>Architecture</source>
      <translation>Architektur</translation>
    </message>
    <message>
      <source>Asking the engine to load %1…</source>
      <translation>Die Engine wird gebeten, %1 zu laden…</translation>
    </message>
    <message>
      <source>Boxes:</source>
      <translation>Boxen:</translation>
    </message>
    <message>
      <source>Build:</source>
      <translation>Build:</translation>
    </message>
    <message>
      <source>Builds</source>
      <translation>Builds</translation>
    </message>
    <message>
      <source>Catalog</source>
      <translation>Katalog</translation>
    </message>
    <message>
      <source>Catalog entries are plans: put the GGUF file in a model folder and load it from Local files.</source>
      <translation>Katalogeinträge sind Pläne: lege die GGUF-Datei in einen Modellordner und lade sie unter „Lokale Dateien“.</translation>
    </message>
    <message>
      <source>Cluster and workload</source>
      <translation>Cluster und Last</translation>
    </message>
    <message>
      <source>Concurrent sequences:</source>
      <translation>Gleichzeitige Sequenzen:</translation>
    </message>
    <message>
      <source>Context length</source>
      <translation>Kontextlänge</translation>
    </message>
    <message>
      <source>Context:</source>
      <translation>Kontext:</translation>
    </message>
    <message>
      <source>Decode ceiling: %1 tokens/s (memory bandwidth bound)</source>
      <translation>Decode-Obergrenze: %1 Token/s (durch die Speicherbandbreite begrenzt)</translation>
    </message>
    <message>
      <source>Demo model unavailable: %1</source>
      <translation>Demo-Modell nicht verfügbar: %1</translation>
    </message>
    <message>
      <source>Demo model written to %1 (random weights: its answers are noise).</source>
      <translation>Demo-Modell nach %1 geschrieben (Zufallsgewichte: seine Antworten sind Rauschen).</translation>
    </message>
    <message numerus="yes">
      <source>Does not fit on %n box(es)</source>
      <translation><numerusform>Passt nicht auf %n Box</numerusform><numerusform>Passt nicht auf %n Boxen</numerusform></translation>
    </message>
    <message>
      <source>File</source>
      <translation>Datei</translation>
    </message>
    <message numerus="yes">
      <source>Fits on %n box(es)</source>
      <translation><numerusform>Passt auf %n Box</numerusform><numerusform>Passt auf %n Boxen</numerusform></translation>
    </message>
    <message>
      <source>Fits only</source>
      <translation>Nur passende</translation>
    </message>
    <message>
      <source>KV cache type:</source>
      <translation>KV-Cache-Typ:</translation>
    </message>
    <message numerus="yes">
      <source>Largest context at %n concurrent sequence(s): %1 tokens</source>
      <translation><numerusform>Größter Kontext bei %n Sequenz: %1 Token</numerusform><numerusform>Größter Kontext bei %n gleichzeitigen Sequenzen: %1 Token</numerusform></translation>
    </message>
    <message>
      <source>License</source>
      <translation>Lizenz</translation>
    </message>
    <message>
      <source>Load</source>
      <translation>Laden</translation>
    </message>
    <message>
      <source>Loaded.</source>
      <translation>Geladen.</translation>
    </message>
    <message>
      <source>Loading: %1</source>
      <translation>Lädt: %1</translation>
    </message>
    <message>
      <source>Local files</source>
      <translation>Lokale Dateien</translation>
    </message>
    <message>
      <source>Make a demo model (random weights)</source>
      <translation>Demo-Modell erzeugen (Zufallsgewichte)</translation>
    </message>
    <message>
      <source>Making a demo model with random weights…</source>
      <translation>Demo-Modell mit Zufallsgewichten wird erzeugt…</translation>
    </message>
    <message>
      <source>No GGUF files in the model folders. Add a folder in Settings, or try the demo model.</source>
      <translation>Keine GGUF-Dateien in den Modellordnern. Füge in den Einstellungen einen Ordner hinzu oder probiere das Demo-Modell.</translation>
    </message>
    <message>
      <source>No engine connected.</source>
      <translation>Keine Engine verbunden.</translation>
    </message>
    <message>
      <source>No engine connected: local files are listed by the engine.</source>
      <translation>Keine Engine verbunden: lokale Dateien listet die Engine auf.</translation>
    </message>
    <message>
      <source>No fit report</source>
      <translation>Kein Passbericht</translation>
    </message>
    <message>
      <source>Over 150 B</source>
      <translation>Über 150 Mrd.</translation>
    </message>
    <message>
      <source>Parameters</source>
      <translation>Parameter</translation>
    </message>
    <message>
      <source>Published speeds</source>
      <translation>Veröffentlichte Geschwindigkeiten</translation>
    </message>
    <message>
      <source>Refresh</source>
      <translation>Aktualisieren</translation>
    </message>
    <message>
      <source>Reserve per box (OS, apps):</source>
      <translation>Reserve pro Box (System, Apps):</translation>
    </message>
    <message>
      <source>Search models…</source>
      <translation>Modelle suchen…</translation>
    </message>
    <message>
      <source>The fit calculator cannot read the catalog: %1</source>
      <translation>Der Passrechner kann den Katalog nicht lesen: %1</translation>
    </message>
    <message>
      <source>The model catalog is not part of this build (%1).</source>
      <translation>Der Modellkatalog ist nicht Teil dieses Builds (%1).</translation>
    </message>
    <message>
      <source>Under 30 B</source>
      <translation>Unter 30 Mrd.</translation>
    </message>
    <message>
      <source>Unload</source>
      <translation>Entladen</translation>
    </message>
    <message>
      <source>Usable memory per box:</source>
      <translation>Nutzbarer Speicher pro Box:</translation>
    </message>
    <message>
      <source>Writes a small model with random weights so loading, chat and the charts can be tried at once. Its answers are noise.</source>
      <translation>Schreibt ein kleines Modell mit Zufallsgewichten, damit Laden, Chat und Diagramme sofort ausprobiert werden können. Seine Antworten sind Rauschen.</translation>
    </message>
    <message>
      <source>not recorded</source>
      <translation>nicht erfasst</translation>
    </message>
    <message>
      <source>source not recorded</source>
      <translation>Quelle nicht erfasst</translation>
    </message>
    <message>
      <source>this file</source>
      <translation>diese Datei</translation>
    </message>
    <message>
      <source>Hugging Face</source>
      <translation>Hugging Face</translation>
    </message>
  </context>
  <context>
    <name>arc::app::MonitorPage</name>
    <message>
      <source>%1 min</source>
      <translation>%1 min</translation>
    </message>
    <message>
      <source>%1 — %2</source>
      <translation>%1 — %2</translation>
    </message>
    <message>
      <source>All-reduce traffic and link utilisation</source>
      <translation>All-Reduce-Verkehr und Link-Auslastung</translation>
    </message>
    <message>
      <source>CSV files (*.csv)</source>
      <translation>CSV-Dateien (*.csv)</translation>
    </message>
    <message>
      <source>Could not write %1.</source>
      <translation>%1 konnte nicht geschrieben werden.</translation>
    </message>
    <message>
      <source>Decode tokens/s</source>
      <translation>Decode-Token/s</translation>
    </message>
    <message>
      <source>Export</source>
      <translation>Export</translation>
    </message>
    <message>
      <source>Export CSV…</source>
      <translation>CSV exportieren…</translation>
    </message>
    <message>
      <source>Export PNG…</source>
      <translation>PNG exportieren…</translation>
    </message>
    <message>
      <source>Export charts</source>
      <translation>Diagramme exportieren</translation>
    </message>
    <message>
      <source>Export visible data</source>
      <translation>Sichtbare Daten exportieren</translation>
    </message>
    <message>
      <source>GiB</source>
      <translation>GiB</translation>
    </message>
    <message>
      <source>Hover over a chart to read its values.</source>
      <translation>Mit der Maus über ein Diagramm fahren, um Werte abzulesen.</translation>
    </message>
    <message>
      <source>KV cache</source>
      <translation>KV-Cache</translation>
    </message>
    <message>
      <source>Memory per box</source>
      <translation>Speicher pro Box</translation>
    </message>
    <message>
      <source>MiB/s</source>
      <translation>MiB/s</translation>
    </message>
    <message>
      <source>No data at this time.</source>
      <translation>Keine Daten zu dieser Zeit.</translation>
    </message>
    <message>
      <source>No finished requests in this window.</source>
      <translation>Keine abgeschlossenen Anfragen in diesem Zeitfenster.</translation>
    </message>
    <message>
      <source>PNG images (*.png)</source>
      <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
      <source>Pause</source>
      <translation>Pause</translation>
    </message>
    <message>
      <source>Prefill tokens/s</source>
      <translation>Prefill-Token/s</translation>
    </message>
    <message>
      <source>Requests</source>
      <translation>Anfragen</translation>
    </message>
    <message>
      <source>Resume</source>
      <translation>Fortsetzen</translation>
    </message>
    <message numerus="yes">
      <source>TTFT p50 %1 ms, p95 %2 ms over %n request(s)</source>
      <translation><numerusform>TTFT p50 %1 ms, p95 %2 ms über %n Anfrage</numerusform><numerusform>TTFT p50 %1 ms, p95 %2 ms über %n Anfragen</numerusform></translation>
    </message>
    <message>
      <source>Time to first token per request</source>
      <translation>Zeit bis zum ersten Token pro Anfrage</translation>
    </message>
    <message>
      <source>Window:</source>
      <translation>Zeitfenster:</translation>
    </message>
    <message>
      <source>all requests</source>
      <translation>alle Anfragen</translation>
    </message>
    <message>
      <source>all-reduce</source>
      <translation>All-Reduce</translation>
    </message>
    <message>
      <source>blocks</source>
      <translation>Blöcke</translation>
    </message>
    <message>
      <source>blocks cached</source>
      <translation>Blöcke im Cache</translation>
    </message>
    <message>
      <source>blocks in use</source>
      <translation>Blöcke belegt</translation>
    </message>
    <message>
      <source>box %1</source>
      <translation>Box %1</translation>
    </message>
    <message>
      <source>hit rate %</source>
      <translation>Trefferquote %</translation>
    </message>
    <message>
      <source>drafts accepted (%)</source>
      <translation>Entwürfe angenommen (%)</translation>
    </message>
    <message>
      <source>accepted %</source>
      <translation>angenommen %</translation>
    </message>
    <message>
      <source>link utilisation (%)</source>
      <translation>Link-Auslastung (%)</translation>
    </message>
    <message>
      <source>ms</source>
      <translation>ms</translation>
    </message>
    <message>
      <source>no data</source>
      <translation>keine Daten</translation>
    </message>
    <message>
      <source>p50</source>
      <translation>p50</translation>
    </message>
    <message>
      <source>p50 %1 ms</source>
      <translation>p50 %1 ms</translation>
    </message>
    <message>
      <source>p95</source>
      <translation>p95</translation>
    </message>
    <message>
      <source>p95 %1 ms</source>
      <translation>p95 %1 ms</translation>
    </message>
    <message>
      <source>per request</source>
      <translation>pro Anfrage</translation>
    </message>
    <message>
      <source>prefill</source>
      <translation>Prefill</translation>
    </message>
    <message>
      <source>prefix-cache hit rate (%)</source>
      <translation>Präfix-Cache-Trefferquote (%)</translation>
    </message>
    <message>
      <source>request</source>
      <translation>Anfrage</translation>
    </message>
    <message>
      <source>requests</source>
      <translation>Anfragen</translation>
    </message>
    <message>
      <source>running</source>
      <translation>laufend</translation>
    </message>
    <message>
      <source>tokens/s</source>
      <translation>Token/s</translation>
    </message>
    <message>
      <source>utilisation %</source>
      <translation>Auslastung %</translation>
    </message>
    <message>
      <source>waiting</source>
      <translation>wartend</translation>
    </message>
  </context>
  <context>
    <name>arc::app::SettingsDialog</name>
    <message>
      <source>OK</source>
      <translation>OK</translation>
    </message>
    <message>
      <source>Cancel</source>
      <translation>Abbrechen</translation>
    </message>
    <message>
      <source>An attached engine reads the model folders it was started with; set them where it runs.</source>
      <translation>Eine angebundene Engine liest die Modellordner, mit denen sie gestartet wurde; legen Sie sie dort fest, wo sie läuft.</translation>
    </message>
    <message>
      <source>Test connection</source>
      <translation>Verbindung testen</translation>
    </message>
    <message>
      <source>Enter the engine&apos;s URL, e.g. http://spark-1:8080</source>
      <translation>Die URL der Engine eingeben, z. B. http://spark-1:8080</translation>
    </message>
    <message>
      <source>Asking %1…</source>
      <translation>Frage %1…</translation>
    </message>
    <message>
      <source>no model loaded</source>
      <translation>kein Modell geladen</translation>
    </message>
    <message>
      <source>serving %1</source>
      <translation>stellt %1 bereit</translation>
    </message>
    <message>
      <source>Connected: engine %1, %2, %3.</source>
      <translation>Verbunden: Engine %1, %2, %3.</translation>
    </message>
    <message>
      <source>(version unknown)</source>
      <translation>(Version unbekannt)</translation>
    </message>
    <message>
      <source>Not connected: %1</source>
      <translation>Nicht verbunden: %1</translation>
    </message>
    <message>
      <source>Automatic (GPU when there is one)</source>
      <translation>Automatisch (GPU, wenn vorhanden)</translation>
    </message>
    <message>
      <source>CUDA GPU</source>
      <translation>CUDA-GPU</translation>
    </message>
    <message>
      <source>CPU</source>
      <translation>CPU</translation>
    </message>
    <message>
      <source>Compute:</source>
      <translation>Rechnen auf:</translation>
    </message>
    <message>
      <source>API key:</source>
      <translation>API-Schlüssel:</translation>
    </message>
    <message>
      <source>Appearance</source>
      <translation>Darstellung</translation>
    </message>
    <message>
      <source>Attach to a running engine</source>
      <translation>Mit einer laufenden Engine verbinden</translation>
    </message>
    <message>
      <source>Browse…</source>
      <translation>Durchsuchen…</translation>
    </message>
    <message>
      <source>Dark</source>
      <translation>Dunkel</translation>
    </message>
    <message>
      <source>Engine</source>
      <translation>Engine</translation>
    </message>
    <message>
      <source>Language:</source>
      <translation>Sprache:</translation>
    </message>
    <message>
      <source>Light</source>
      <translation>Hell</translation>
    </message>
    <message>
      <source>MPI hostfile</source>
      <translation>MPI-Hostdatei</translation>
    </message>
    <message>
      <source>MPI hostfile:</source>
      <translation>MPI-Hostdatei:</translation>
    </message>
    <message>
      <source>Model folders:</source>
      <translation>Modellordner:</translation>
    </message>
    <message>
      <source>One folder per line</source>
      <translation>Ein Ordner pro Zeile</translation>
    </message>
    <message>
      <source>Port:</source>
      <translation>Port:</translation>
    </message>
    <message>
      <source>Processes (boxes):</source>
      <translation>Prozesse (Boxen):</translation>
    </message>
    <message>
      <source>Run a local engine</source>
      <translation>Lokale Engine ausführen</translation>
    </message>
    <message>
      <source>Settings</source>
      <translation>Einstellungen</translation>
    </message>
    <message>
      <source>Start it when the app starts</source>
      <translation>Beim Start der App starten</translation>
    </message>
    <message>
      <source>System</source>
      <translation>System</translation>
    </message>
    <message>
      <source>System language</source>
      <translation>Systemsprache</translation>
    </message>
    <message>
      <source>Theme:</source>
      <translation>Farbschema:</translation>
    </message>
    <message>
      <source>URL:</source>
      <translation>URL:</translation>
    </message>
    <message>
      <source>none: one box</source>
      <translation>keine: eine Box</translation>
    </message>
    <message>
      <source>Hugging Face</source>
      <translation>Hugging Face</translation>
    </message>
    <message>
      <source>Hub URL:</source>
      <translation>Hub-URL:</translation>
    </message>
  </context>
  <context>
    <name>main</name>
    <message>
      <source>Control panel for Mixture-of-Experts language models on DGX Spark boxes</source>
      <translation>Steuerzentrale für Mixture-of-Experts-Sprachmodelle auf DGX-Spark-Boxen</translation>
    </message>
    <message>
      <source>Attach to the running engine at &lt;url&gt; (remembered).</source>
      <translation>Mit der laufenden Engine unter &lt;url&gt; verbinden (wird gemerkt).</translation>
    </message>
    <message>
      <source>Save a PNG of every page into &lt;folder&gt;, then quit.</source>
      <translation>Jede Seite als PNG in &lt;folder&gt; speichern, dann beenden.</translation>
    </message>
  </context>
  <context>
    <name>QualityRecord</name>
    <message>
      <source>KL %1 (95%: %2-%3, p99 %4) against %5</source>
      <translation>KL %1 (95 %: %2–%3, p99 %4) gegen %5</translation>
    </message>
    <message>
      <source>top-1 %1%</source>
      <translation>Top-1 %1 %</translation>
    </message>
    <message>
      <source>perplexity %1 (reference %2)</source>
      <translation>Perplexität %1 (Referenz %2)</translation>
    </message>
    <message>
      <source>perplexity %1</source>
      <translation>Perplexität %1</translation>
    </message>
    <message>
      <source>%1 tokens of %2, %3</source>
      <translation>%1 Tokens aus %2, %3</translation>
    </message>
    <message>
      <source>the built-in text</source>
      <translation>dem eingebauten Text</translation>
    </message>
    <message>
      <source>stopped early</source>
      <translation>vorzeitig angehalten</translation>
    </message>
  </context>
  <context>
    <name>arc::app::QualityRunner</name>
    <message>
      <source>arclight-engine was not found next to the app, so it cannot measure</source>
      <translation>arclight-engine wurde nicht neben der App gefunden, daher kann nicht gemessen werden</translation>
    </message>
    <message>
      <source>the measurement failed (exit code %1): %2</source>
      <translation>die Messung ist fehlgeschlagen (Exit-Code %1): %2</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ConversationExport</name>
    <message>
      <source>New conversation</source>
      <translation>Neue Unterhaltung</translation>
    </message>
    <message>
      <source>Last changed %1</source>
      <translation>Zuletzt geändert %1</translation>
    </message>
    <message>
      <source>System prompt</source>
      <translation>Systemprompt</translation>
    </message>
    <message>
      <source>You</source>
      <translation>Sie</translation>
    </message>
    <message>
      <source>Assistant</source>
      <translation>Assistent</translation>
    </message>
    <message>
      <source>Thinking</source>
      <translation>Überlegungen</translation>
    </message>
    <message>
      <source>(stopped)</source>
      <translation>(gestoppt)</translation>
    </message>
    <message>
      <source>Failed: %1</source>
      <translation>Fehlgeschlagen: %1</translation>
    </message>
    <message numerus="yes">
      <source>%n image(s) attached</source>
      <translation><numerusform>%n Bild angehängt</numerusform><numerusform>%n Bilder angehängt</numerusform></translation>
    </message>
  </context>
  <context>
    <name>arc::app::HubBrowser</name>
    <message>
      <source>time left unknown</source>
      <translation>Restzeit unbekannt</translation>
    </message>
    <message>
      <source>%1 s left</source>
      <translation>noch %1 s</translation>
    </message>
    <message>
      <source>%1 min left</source>
      <translation>noch %1 min</translation>
    </message>
    <message>
      <source>%1 h %2 min left</source>
      <translation>noch %1 h %2 min</translation>
    </message>
    <message>
      <source>Search GGUF models on Hugging Face…</source>
      <translation>GGUF-Modelle auf Hugging Face suchen…</translation>
    </message>
    <message>
      <source>Search</source>
      <translation>Suchen</translation>
    </message>
    <message>
      <source>Token…</source>
      <translation>Token…</translation>
    </message>
    <message>
      <source>A Hugging Face token for gated repositories, kept in the desktop&apos;s keyring</source>
      <translation>Ein Hugging-Face-Token für zugangsbeschränkte Repositorys, im Schlüsselbund des Desktops gespeichert</translation>
    </message>
    <message>
      <source>Repository</source>
      <translation>Repository</translation>
    </message>
    <message>
      <source>Downloads</source>
      <translation>Downloads</translation>
    </message>
    <message>
      <source>File</source>
      <translation>Datei</translation>
    </message>
    <message>
      <source>Quant</source>
      <translation>Quant.</translation>
    </message>
    <message>
      <source>Size</source>
      <translation>Größe</translation>
    </message>
    <message>
      <source>Fit (from the file&apos;s header)</source>
      <translation>Passt (aus dem Dateikopf)</translation>
    </message>
    <message>
      <source>Catalog</source>
      <translation>Katalog</translation>
    </message>
    <message>
      <source>Download</source>
      <translation>Herunterladen</translation>
    </message>
    <message>
      <source>Pause</source>
      <translation>Pausieren</translation>
    </message>
    <message>
      <source>Cancel download</source>
      <translation>Download abbrechen</translation>
    </message>
    <message>
      <source>Hugging Face token</source>
      <translation>Hugging-Face-Token</translation>
    </message>
    <message>
      <source>Token for gated repositories (kept in the desktop keyring; empty removes it):</source>
      <translation>Token für zugangsbeschränkte Repositorys (im Schlüsselbund des Desktops gespeichert; leer entfernt ihn):</translation>
    </message>
    <message>
      <source>Searching %1…</source>
      <translation>Suche auf %1…</translation>
    </message>
    <message>
      <source>Search failed: %1</source>
      <translation>Suche fehlgeschlagen: %1</translation>
    </message>
    <message>
      <source>No GGUF repositories found.</source>
      <translation>Keine GGUF-Repositorys gefunden.</translation>
    </message>
    <message>
      <source>gated: needs a token</source>
      <translation>zugangsbeschränkt: braucht einen Token</translation>
    </message>
    <message>
      <source>Listing %1…</source>
      <translation>Liste %1 auf…</translation>
    </message>
    <message>
      <source>Cannot list %1: %2</source>
      <translation>%1 kann nicht aufgelistet werden: %2</translation>
    </message>
    <message>
      <source>reading header…</source>
      <translation>lese Dateikopf…</translation>
    </message>
    <message>
      <source>parts missing</source>
      <translation>Teile fehlen</translation>
    </message>
    <message>
      <source>the listing lacks some parts of this split model</source>
      <translation>der Liste fehlen Teile dieses geteilten Modells</translation>
    </message>
    <message>
      <source>%1 holds no GGUF models.</source>
      <translation>%1 enthält keine GGUF-Modelle.</translation>
    </message>
    <message>
      <source>no verdict: %1</source>
      <translation>kein Urteil: %1</translation>
    </message>
    <message>
      <source>not in the catalog</source>
      <translation>nicht im Katalog</translation>
    </message>
    <message>
      <source>%1 (catalog has no %2 build)</source>
      <translation>%1 (der Katalog hat keinen Build %2)</translation>
    </message>
    <message>
      <source>%1 %2: %3%4</source>
      <translation>%1 %2: %3%4</translation>
    </message>
    <message>
      <source>no figures</source>
      <translation>keine Zahlen</translation>
    </message>
    <message>
      <source>A download is running; pause or cancel it first.</source>
      <translation>Ein Download läuft; pausieren oder brechen Sie ihn zuerst ab.</translation>
    </message>
    <message>
      <source>The listing lacks some parts of this model; it cannot be downloaded.</source>
      <translation>Der Liste fehlen Teile dieses Modells; es kann nicht heruntergeladen werden.</translation>
    </message>
    <message>
      <source>Downloading %1 to %2…</source>
      <translation>Lade %1 nach %2 herunter…</translation>
    </message>
    <message>
      <source>%1 of %2 · %3/s · %4</source>
      <translation>%1 von %2 · %3/s · %4</translation>
    </message>
    <message>
      <source>Resume</source>
      <translation>Fortsetzen</translation>
    </message>
    <message>
      <source>Checking SHA-256…</source>
      <translation>Prüfe SHA-256…</translation>
    </message>
    <message>
      <source>Paused.</source>
      <translation>Pausiert.</translation>
    </message>
    <message>
      <source>Repositories found: %1</source>
      <translation>Gefundene Repositorys: %1</translation>
    </message>
    <message>
      <source> (%1 parts)</source>
      <translation> (%1 Teile)</translation>
    </message>
    <message>
      <source>%1: GGUF models: %2; reading their headers (no weights are downloaded)…</source>
      <translation>%1: GGUF-Modelle: %2; lese ihre Dateiköpfe (keine Gewichte werden heruntergeladen)…</translation>
    </message>
    <message>
      <source>%1: GGUF models: %2. Each verdict comes from the file&apos;s own header; nothing was downloaded.</source>
      <translation>%1: GGUF-Modelle: %2. Jedes Urteil stammt aus dem Kopf der Datei selbst; nichts wurde heruntergeladen.</translation>
    </message>
    <message>
      <source>%1 on 1 box · up to %2 tokens context</source>
      <translation>%1 auf 1 Box · bis %2 Token Kontext</translation>
    </message>
    <message>
      <source>%1 on %3 boxes · up to %2 tokens context</source>
      <translation>%1 auf %3 Boxen · bis %2 Token Kontext</translation>
    </message>
  </context>
  <context>
    <name>arc::app::HubClient</name>
    <message>
      <source>the hub refused access (HTTP %1): the repository is gated or private; accept its terms on the hub and set a token in Settings</source>
      <translation>der Hub verweigert den Zugriff (HTTP %1): das Repository ist zugangsbeschränkt oder privat; akzeptieren Sie seine Bedingungen auf dem Hub und tragen Sie einen Token ein</translation>
    </message>
    <message>
      <source>not found on the hub (HTTP 404)</source>
      <translation>auf dem Hub nicht gefunden (HTTP 404)</translation>
    </message>
    <message>
      <source>the hub answered HTTP %1</source>
      <translation>der Hub antwortete mit HTTP %1</translation>
    </message>
    <message>
      <source>cannot reach %1: %2</source>
      <translation>%1 ist nicht erreichbar: %2</translation>
    </message>
    <message>
      <source>the hub&apos;s answer is not a list of models (%1)</source>
      <translation>die Antwort des Hubs ist keine Modellliste (%1)</translation>
    </message>
    <message>
      <source>the hub&apos;s answer is not a file list (%1)</source>
      <translation>die Antwort des Hubs ist keine Dateiliste (%1)</translation>
    </message>
  </context>
  <context>
    <name>arc::app::ModelDownload</name>
    <message>
      <source>cannot create the model folder %1</source>
      <translation>der Modellordner %1 kann nicht angelegt werden</translation>
    </message>
    <message>
      <source>not enough free disk space in %1: the download needs %2, %3 are free</source>
      <translation>nicht genug freier Speicherplatz in %1: der Download braucht %2, frei sind %3</translation>
    </message>
    <message>
      <source>Downloaded to %1.</source>
      <translation>Heruntergeladen nach %1.</translation>
    </message>
    <message>
      <source>cannot write %1: %2</source>
      <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
      <source>the server answered a different range than asked; try again later</source>
      <translation>der Server lieferte einen anderen Bereich als angefragt; versuchen Sie es später erneut</translation>
    </message>
    <message>
      <source>the hub refused the download (HTTP %1): the repository is gated; accept its terms on the hub and set a token in Settings</source>
      <translation>der Hub verweigert den Download (HTTP %1): das Repository ist zugangsbeschränkt; akzeptieren Sie seine Bedingungen auf dem Hub und tragen Sie einen Token ein</translation>
    </message>
    <message>
      <source>the hub answered HTTP %1 for %2</source>
      <translation>der Hub antwortete mit HTTP %1 für %2</translation>
    </message>
    <message>
      <source>the download of %1 was interrupted (%2); Resume continues from %3</source>
      <translation>der Download von %1 wurde unterbrochen (%2); Fortsetzen macht bei %3 weiter</translation>
    </message>
    <message>
      <source>%1 is corrupt: its SHA-256 is %2 but the hub publishes %3; the partial file was removed, download it again</source>
      <translation>%1 ist beschädigt: sein SHA-256 ist %2, der Hub veröffentlicht aber %3; die Teildatei wurde entfernt, laden Sie sie erneut herunter</translation>
    </message>
    <message>
      <source>unreadable</source>
      <translation>nicht lesbar</translation>
    </message>
    <message>
      <source>cannot rename %1 to %2</source>
      <translation>%1 kann nicht in %2 umbenannt werden</translation>
    </message>
    <message>
      <source>Download cancelled; the partial files were removed.</source>
      <translation>Download abgebrochen; die Teildateien wurden entfernt.</translation>
    </message>
    <message>
      <source>the hub&apos;s redirects for %1 lead nowhere usable</source>
      <translation>die Weiterleitungen des Hubs für %1 führen zu nichts Brauchbarem</translation>
    </message>
  </context>
  <context>
    <name>arc::app::HubTokenStore</name>
    <message>
      <source>No keyring service is available (%1): the token is kept for this session only.</source>
      <translation>Kein Schlüsselbund-Dienst verfügbar (%1): der Token gilt nur für diese Sitzung.</translation>
    </message>
  </context>
</TS>