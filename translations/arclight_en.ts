<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
  <context>
    <name>CatalogEntry</name>
    <message numerus="yes">
      <source>%n box(es)</source>
      <translation>
        <numerusform>%n box</numerusform>
        <numerusform>%n boxes</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::ModelsPage</name>
    <message numerus="yes">
      <source>%n file(s) found by the engine.</source>
      <translation>
        <numerusform>%n file found by the engine.</numerusform>
        <numerusform>%n files found by the engine.</numerusform>
      </translation>
    </message>
    <message numerus="yes">
      <source>Does not fit on %n box(es)</source>
      <translation>
        <numerusform>Does not fit on %n box</numerusform>
        <numerusform>Does not fit on %n boxes</numerusform>
      </translation>
    </message>
    <message numerus="yes">
      <source>Fits on %n box(es)</source>
      <translation>
        <numerusform>Fits on %n box</numerusform>
        <numerusform>Fits on %n boxes</numerusform>
      </translation>
    </message>
    <message numerus="yes">
      <source>Largest context at %n concurrent sequence(s): %1 tokens</source>
      <translation>
        <numerusform>Largest context at %n sequence: %1 tokens</numerusform>
        <numerusform>Largest context at %n concurrent sequences: %1 tokens</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchHistoryModel</name>
    <message numerus="yes">
      <source>%n scenario(s)</source>
      <translation>
        <numerusform>%n scenario</numerusform>
        <numerusform>%n scenarios</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchRunner</name>
    <message numerus="yes">
      <source>%n scenario(s) measured</source>
      <translation>
        <numerusform>%n scenario measured</numerusform>
        <numerusform>%n scenarios measured</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::BenchmarkPage</name>
    <message numerus="yes">
      <source>%1
%n stream(s)</source>
      <translation>
        <numerusform>%1
%n stream</numerusform>
        <numerusform>%1
%n streams</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::MonitorPage</name>
    <message numerus="yes">
      <source>TTFT p50 %1 ms, p95 %2 ms over %n request(s)</source>
      <translation>
        <numerusform>TTFT p50 %1 ms, p95 %2 ms over %n request</numerusform>
        <numerusform>TTFT p50 %1 ms, p95 %2 ms over %n requests</numerusform>
      </translation>
    </message>
  </context>
  <context>
    <name>arc::app::ConversationExport</name>
    <message numerus="yes">
      <source>%n image(s) attached</source>
      <translation><numerusform>%n image attached</numerusform><numerusform>%n images attached</numerusform></translation>
    </message>
  </context>
  <context>
    <name>arc::app::ClusterPage</name>
    <message numerus="yes">
      <source>%n box(es), %1 rank(s); not saved yet (Save writes %2)</source>
      <translation><numerusform>%n box, %1 rank(s); not saved yet (Save writes %2)</numerusform><numerusform>%n boxes, %1 rank(s); not saved yet (Save writes %2)</numerusform></translation>
    </message>
  </context>
</TS>