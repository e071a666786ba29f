#include "EngineSession.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>

namespace arc::app {

EngineSession::EngineSession(QObject* parent) : QObject(parent) {
  m_clock.start();
  EngineClient* c = &m_client;
  connect(c, &EngineClient::connectionChanged, this, [this](EngineClient::Connection conn) {
    if (conn == EngineClient::Connection::Connected) setMessage({});
    if (conn != EngineClient::Connection::Connected) m_stats = StatsSnapshot{};
    emit changed();
  });
  connect(c, &EngineClient::healthReceived, this, [this](EngineState s) {
    m_state = s;
    emit changed();
  });
  connect(c, &EngineClient::statusReceived, this, [this](const EngineStatus& s) {
    m_state = s.state;
    m_version = s.version;
    m_backend = s.backend;
    m_backendReason = s.backendReason;
    m_device = s.device;
    if (!s.memory.isEmpty()) m_stats.memory = s.memory;
    setLoaded(s.model.id, s.model.path);
  });
  connect(c, &EngineClient::stateChanged, this, [this](EngineState s, const QString&) {
    m_state = s;
    emit changed();
  });
  connect(c, &EngineClient::statsReceived, this, [this](const StatsSnapshot& s) {
    m_stats = s;
    emit changed();
  });
  connect(c, &EngineClient::loadProgress, this, [this](const LoadProgress& p) {
    m_loading = true;
    m_load.update(p, m_clock.elapsed());
    emit loadProgressChanged();
  });
  connect(c, &EngineClient::loadDone, this, [this](const QString&) {
    m_loading = false;
    setMessage({});  // an earlier failure is over: the banner goes without a reconnect
    emit loadFinished(true, {});
  });
  connect(c, &EngineClient::loadCancelled, this, [this](const QString&) {
    m_loading = false;
    setMessage({});
    emit loadFinished(false, tr("Loading cancelled."));
  });
  connect(c, &EngineClient::loadFailed, this, [this](const EngineError& e) {
    m_loading = false;
    const QString msg = tr("loading failed: %1").arg(e.describe());
    setMessage(msg);
    emit loadFinished(false, msg);
  });
  connect(c, &EngineClient::loadRefused, this, [this](const EngineError& e) {
    m_loading = false;
    const QString msg = tr("the engine refused the load: %1").arg(e.describe());
    setMessage(msg);
    emit loadFinished(false, msg);
  });
  connect(c, &EngineClient::unloaded, this, [this] { setLoaded({}, {}); });
  connect(c, &EngineClient::unloadDone, this, [this] { setLoaded({}, {}); });
  connect(c, &EngineClient::engineError, this, [this](const QString& m) { setMessage(m); });
  connect(c, &EngineClient::requestFailed, this, [this](const QString& route, const QString& m) {
    if (m_loading && route == QLatin1String("/engine/load")) {
      m_loading = false;
      emit loadFinished(false, m);
    }
    setMessage(m);
  });
  connect(&m_process, &EngineProcess::failed, this, [this](const QString& m) {
    m_client.disconnectFromEngine();
    m_state = EngineState::Unknown;
    setMessage(m);
    emit changed();
  });
}

EngineSession::~EngineSession() {
  m_client.disconnectFromEngine();
  m_process.stop();
}

void EngineSession::start(const AppSettings& settings, bool forceLocal) {
  m_client.setApiKey(settings.apiKey());
  m_client.setBaseUrl(settings.effectiveUrl());
  const bool local = settings.engineMode() == AppSettings::EngineMode::Local;
  if (local && (settings.startLocalEngine() || forceLocal)) {
    EngineLaunch launch;
    launch.enginePath = EngineProcess::findEngineBinary();
    launch.port = settings.localPort();
    launch.apiKey = settings.apiKey();
    launch.modelDirs = settings.engineModelDirs();
    launch.hostfile = settings.hostfile();
    launch.ranks = settings.ranks();
    launch.backend = settings.localBackend();
    if (!m_process.start(launch)) return;  // failed() already set the message
  } else if (local) {
    setMessage(tr("no engine: starting a local engine is switched off in Settings"));
    return;
  }
  m_client.connectToEngine();
  emit changed();
}

void EngineSession::stopLocalEngine() {
  m_client.disconnectFromEngine();
  m_process.stop();
  m_state = EngineState::Unknown;
  emit changed();
}

void EngineSession::load(const QString& path, qint64 contextSize) {
  LoadSettings s;
  s.contextTokens = contextSize;
  load(path, s);
}

void EngineSession::load(const QString& path, const LoadSettings& settings) {
  if (m_client.connection() != EngineClient::Connection::Connected) {
    const QString msg = tr("cannot load: no engine is connected");
    setMessage(msg);
    emit loadFinished(false, msg);
    return;
  }
  m_load.reset();
  m_loading = true;
  emit loadProgressChanged();
  m_client.loadModel(path, settings);
}

void EngineSession::cancelLoad() {
  if (m_loading) m_client.cancelLoad();
}

void EngineSession::unload() {
  m_client.unloadModel();
}

void EngineSession::makeDemoModel(const QString& outFile) {
  const QString engine = EngineProcess::findEngineBinary();
  if (engine.isEmpty()) {
    emit demoModelFailed(
        tr("arclight-engine was not found next to the app, so it cannot make "
           "the demo model"));
    return;
  }
  QDir().mkpath(QFileInfo(outFile).absolutePath());
  auto* proc = new QProcess(this);
  proc->setProcessChannelMode(QProcess::MergedChannels);
  connect(proc, &QProcess::finished, this, [this, proc, outFile](int code, QProcess::ExitStatus) {
    proc->deleteLater();
    const QString out = QString::fromUtf8(proc->readAll()).trimmed();
    if (code == 0 && QFileInfo::exists(outFile)) {
      emit demoModelReady(outFile);
      return;
    }
    emit demoModelFailed(tr("the engine could not make the demo model (exit code %1): %2")
                             .arg(code)
                             .arg(out.section(QLatin1Char('\n'), -1)));
  });
  connect(proc, &QProcess::errorOccurred, this, [this, proc](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    proc->deleteLater();
    emit demoModelFailed(proc->errorString());
  });
  proc->start(engine, {QStringLiteral("make-test-model"), QStringLiteral("--out"), outFile});
}

void EngineSession::setMessage(const QString& m) {
  if (m == m_message) return;
  m_message = m;
  emit messageChanged(m);
}

void EngineSession::setLoaded(const QString& model, const QString& path) {
  m_loadedModel = model;
  m_loadedPath = path;
  emit changed();
}

QString EngineSession::backendText() const {
  if (m_backend == QLatin1String("cuda")) {
    return m_device >= 0 ? tr("CUDA (device %1)").arg(m_device) : tr("CUDA");
  }
  if (m_backend == QLatin1String("cpu")) return tr("CPU");
  return m_backend;
}

}  // namespace arc::app
