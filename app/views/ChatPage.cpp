#include "ChatPage.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "ChatComposer.h"
#include "ChatController.h"
#include "ConversationDelegate.h"
#include "ConversationExport.h"
#include "ConversationListModel.h"
#include "EngineSession.h"
#include "ImageAttachment.h"
#include "MessageWidget.h"
#include "NumberFormat.h"

namespace arc::app {

namespace {
constexpr int kRenderIntervalMs = 50;  // re-render the streamed message at most this often
}

ChatPage::ChatPage(EngineSession* session, QWidget* parent, const QString& directory)
    : QWidget(parent),
      m_session(session),
      m_model(new ConversationListModel(this)),
      m_proxy(new QSortFilterProxyModel(this)),
      m_controller(new ChatController(m_model, this)) {
  setObjectName(QStringLiteral("ChatPage"));
  setAcceptDrops(true);
  m_model->load(directory.isEmpty() ? ConversationListModel::defaultDirectory() : directory);
  m_proxy->setSourceModel(m_model);
  m_proxy->setFilterRole(ConversationListModel::SearchTextRole);
  m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

  auto* splitter = new QSplitter(this);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(splitter);

  // Left: conversations.
  auto* left = new QWidget(splitter);
  auto* lv = new QVBoxLayout(left);
  m_search = new QLineEdit(left);
  m_search->setPlaceholderText(tr("Search conversations"));
  m_search->setClearButtonEnabled(true);
  m_list = new QListView(left);
  m_list->setModel(m_proxy);
  m_list->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_list->setItemDelegate(new ConversationDelegate(m_list));
  auto* buttons = new QHBoxLayout;
  auto* newBtn = new QPushButton(tr("New"), left);
  auto* renameBtn = new QPushButton(tr("Rename"), left);
  auto* deleteBtn = new QPushButton(tr("Delete"), left);
  buttons->addWidget(newBtn);
  buttons->addWidget(renameBtn);
  buttons->addWidget(deleteBtn);
  lv->addWidget(m_search);
  lv->addWidget(m_list, 1);
  lv->addLayout(buttons);
  connect(m_search, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
  connect(newBtn, &QPushButton::clicked, this, &ChatPage::newConversation);
  connect(renameBtn, &QPushButton::clicked, this, &ChatPage::renameConversation);
  connect(deleteBtn, &QPushButton::clicked, this, &ChatPage::deleteConversation);
  connect(m_list->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& idx) {
            if (idx.isValid())
              selectConversation(idx.data(ConversationListModel::IdRole).toString());
          });

  // Right: settings, messages, composer.
  auto* right = new QWidget(splitter);
  auto* rv = new QVBoxLayout(right);
  // Header: which model answers (switching loads it as the Models page does), and export.
  auto* header = new QHBoxLayout;
  auto* modelLabel = new QLabel(tr("Model:"), right);
  m_modelPicker = new QComboBox(right);
  m_modelPicker->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_modelPicker->setMinimumContentsLength(24);
  modelLabel->setBuddy(m_modelPicker);
  m_export = new QPushButton(tr("Export…"), right);
  m_export->setToolTip(tr("Save this conversation as Markdown or JSON"));
  header->addWidget(modelLabel);
  header->addWidget(m_modelPicker);
  header->addStretch(1);
  header->addWidget(m_export);
  rv->addLayout(header);
  connect(m_export, &QPushButton::clicked, this, &ChatPage::exportFromDialog);
  connect(m_modelPicker, &QComboBox::activated, this, [this](int i) {
    const QString path = m_modelPicker->itemData(i).toString();
    if (path.isEmpty() || !m_session || path == m_session->loadedPath()) return;
    m_pickerLoad = true;
    showNotice({});
    emit loadModelRequested(path);
  });
  m_notice = new QLabel(right);
  m_notice->setWordWrap(true);
  m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_notice->setStyleSheet(QStringLiteral("background: #f8d7a8; color: #402800; padding: 6px;"));
  m_notice->hide();
  rv->addWidget(m_notice);
  m_settingsToggle = new QToolButton(right);
  m_settingsToggle->setText(tr("System prompt and sampling"));
  m_settingsToggle->setCheckable(true);
  m_settingsToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_settingsToggle->setArrowType(Qt::RightArrow);
  m_settingsToggle->setAutoRaise(true);
  rv->addWidget(m_settingsToggle);
  m_settingsPanel = new QWidget(right);
  auto* form = new QFormLayout(m_settingsPanel);
  m_systemPrompt = new QPlainTextEdit(m_settingsPanel);
  m_systemPrompt->setPlaceholderText(tr("Instructions the model follows in this conversation"));
  m_systemPrompt->setMaximumHeight(80);
  m_preset = new QComboBox(m_settingsPanel);
  m_preset->addItems({tr("Precise"), tr("Balanced"), tr("Creative"), tr("Custom")});
  m_temperature = new QDoubleSpinBox(m_settingsPanel);
  m_temperature->setRange(0, 2);
  m_temperature->setSingleStep(0.05);
  m_topP = new QDoubleSpinBox(m_settingsPanel);
  m_topP->setRange(0, 1);
  m_topP->setSingleStep(0.05);
  m_topK = new QSpinBox(m_settingsPanel);
  m_topK->setRange(0, 1000);
  m_maxTokens = new QSpinBox(m_settingsPanel);
  m_maxTokens->setRange(1, 1 << 20);
  auto* samplingRow = new QHBoxLayout;
  samplingRow->addWidget(m_preset);
  for (auto [label, w] : {std::pair<QString, QWidget*>{tr("Temperature"), m_temperature},
                          {tr("Top p"), m_topP},
                          {tr("Top k"), m_topK},
                          {tr("Max tokens"), m_maxTokens}}) {
    samplingRow->addWidget(new QLabel(label, m_settingsPanel));
    samplingRow->addWidget(w);
  }
  samplingRow->addStretch(1);
  form->addRow(tr("System prompt:"), m_systemPrompt);
  form->addRow(tr("Sampling:"), samplingRow);
  m_settingsPanel->hide();
  rv->addWidget(m_settingsPanel);
  connect(m_settingsToggle, &QToolButton::toggled, this, [this](bool on) {
    m_settingsToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    m_settingsPanel->setVisible(on);
  });
  connect(m_preset, &QComboBox::activated, this, [this](int i) {
    if (i > int(SamplingSettings::Preset::Creative)) return;
    const SamplingSettings s = SamplingSettings::preset(SamplingSettings::Preset(i));
    m_loadingPanel = true;
    m_temperature->setValue(s.temperature);
    m_topP->setValue(s.topP);
    m_topK->setValue(s.topK);
    m_loadingPanel = false;
    storeSettings();
  });
  connect(m_systemPrompt, &QPlainTextEdit::textChanged, this, &ChatPage::storeSettings);
  for (QDoubleSpinBox* s : {m_temperature, m_topP})
    connect(s, &QDoubleSpinBox::valueChanged, this, &ChatPage::storeSettings);
  for (QSpinBox* s : {m_topK, m_maxTokens})
    connect(s, &QSpinBox::valueChanged, this, &ChatPage::storeSettings);

  m_scroll = new QScrollArea(right);
  m_scroll->setWidgetResizable(true);
  m_messagesHost = new QWidget(m_scroll);
  m_messagesLayout = new QVBoxLayout(m_messagesHost);
  m_messagesLayout->addStretch(1);
  m_scroll->setWidget(m_messagesHost);
  rv->addWidget(m_scroll, 1);
  // Follow new content while the view is at the end; a user who scrolled up stays where they are
  // until they scroll back down (or send).
  QScrollBar* bar = m_scroll->verticalScrollBar();
  connect(bar, &QScrollBar::valueChanged, this,
          [this, bar](int v) { m_follow = v >= bar->maximum() - 40; });
  connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int max) {
    if (m_follow) bar->setValue(max);
  });

  m_status = new QLabel(right);
  m_status->hide();
  rv->addWidget(m_status);
  m_attachStrip = new QWidget(right);
  m_attachLayout = new QHBoxLayout(m_attachStrip);
  m_attachLayout->setContentsMargins(0, 0, 0, 0);
  m_attachStrip->hide();
  rv->addWidget(m_attachStrip);
  auto* inputRow = new QHBoxLayout;
  m_attach = new QToolButton(right);
  m_attach->setText(tr("Attach image…"));
  m_composer = new ChatComposer(right);
  m_composer->setMaximumHeight(110);
  m_send = new QPushButton(tr("Send"), right);
  m_send->setDefault(true);
  m_stop = new QPushButton(tr("Stop"), right);
  inputRow->addWidget(m_attach, 0, Qt::AlignBottom);
  inputRow->addWidget(m_composer, 1);
  auto* sendCol = new QVBoxLayout;
  sendCol->addWidget(m_send);
  sendCol->addWidget(m_stop);
  inputRow->addLayout(sendCol);
  rv->addLayout(inputRow);
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({240, 900});

  connect(m_attach, &QToolButton::clicked, this, &ChatPage::attachFromDialog);
  connect(m_send, &QPushButton::clicked, this, &ChatPage::sendDraft);
  connect(m_stop, &QPushButton::clicked, m_controller, &ChatController::stop);
  connect(m_composer, &ChatComposer::sendRequested, this, &ChatPage::sendDraft);
  connect(m_composer, &ChatComposer::stopRequested, m_controller, &ChatController::stop);
  connect(m_composer, &ChatComposer::imagePasted, this, &ChatPage::addAttachmentImage);
  connect(m_composer, &ChatComposer::filesDropped, this, &ChatPage::addAttachmentFiles);

  connect(m_controller, &ChatController::messagesReset, this, &ChatPage::rebuildMessages);
  connect(m_controller, &ChatController::messageUpdated, this, [this](int i) {
    m_dirty.insert(i);
    if (!m_renderTimer.isActive()) m_renderTimer.start();
  });
  connect(m_controller, &ChatController::stateChanged, this, &ChatPage::updateState);
  connect(m_controller, &ChatController::draftReturned, this,
          [this](const QString& text, const QStringList& images) {
            // Only put it back when the user has not started typing something new.
            if (m_composer->toPlainText().isEmpty()) {
              m_composer->setPlainText(text);
              m_returnedDraft = text;
            }
            if (m_attachments.isEmpty()) {
              m_attachments = images;
              updateAttachments();
            }
          });
  connect(m_controller, &ChatController::answerFinished, this, [this](ChatMessage::Status st) {
    if (st == ChatMessage::Status::Error) {
      // The error sits under the last message: bring it into view wherever the user was.
      m_follow = true;
      scrollToEnd();
      return;
    }
    // A Retry that worked sent the text a failed send put back: the composer empties, unless
    // the user has changed it since.
    if (st == ChatMessage::Status::Complete && !m_returnedDraft.isNull() &&
        m_composer->toPlainText() == m_returnedDraft) {
      m_composer->clear();
      m_attachments.clear();
      updateAttachments();
    }
    m_returnedDraft = QString();
  });
  connect(m_model, &ConversationListModel::saveFailed, this, &ChatPage::showNotice);
  m_renderTimer.setSingleShot(true);
  m_renderTimer.setInterval(kRenderIntervalMs);
  connect(&m_renderTimer, &QTimer::timeout, this, &ChatPage::flushDirty);
  m_elapsedTimer.setInterval(100);
  connect(&m_elapsedTimer, &QTimer::timeout, this, &ChatPage::updateState);
  m_saveTimer.setSingleShot(true);
  m_saveTimer.setInterval(400);
  connect(&m_saveTimer, &QTimer::timeout, this,
          [this] { m_model->save(m_controller->conversationId()); });

  if (m_session) {
    connect(m_session->client(), &EngineClient::modelsReceived, this, &ChatPage::onModels);
    connect(m_session->client(), &EngineClient::localModelsReceived, this,
            &ChatPage::onLocalModels);
    connect(m_session, &EngineSession::changed, this, &ChatPage::updateModelPicker);
    connect(m_session, &EngineSession::loadFinished, this, [this](bool ok, const QString& msg) {
      if (m_pickerLoad && !ok) showNotice(tr("The model could not be loaded: %1").arg(msg));
      m_pickerLoad = false;
      updateModelPicker();
    });
    connect(m_session, &EngineSession::changed, this, [this] {
      const QString model = m_session->loadedModel();
      if (model == m_modelsFor) return;
      m_modelsFor = model;
      if (model.isEmpty())
        setVisionAvailable(false, tr("No model is loaded."));
      else
        m_session->client()->fetchModels();
    });
  }
  setVisionAvailable(false, tr("No model is loaded."));

  if (!m_model->loadErrors().isEmpty()) showNotice(m_model->loadErrors().join(QLatin1Char('\n')));
  if (m_model->rowCount() == 0) m_model->create();
  m_list->setCurrentIndex(m_proxy->index(0, 0));
  updateState();
}

void ChatPage::showNotice(const QString& text) {
  m_notice->setText(text);
  m_notice->setVisible(!text.isEmpty());
}

QString ChatPage::noticeText() const {
  return m_notice->isVisibleTo(this) ? m_notice->text() : QString();
}

void ChatPage::selectConversation(const QString& id) {
  m_controller->setConversation(id);
  loadSettingsPanel();
}

void ChatPage::newConversation() {
  const QString id = m_model->create();
  m_search->clear();
  m_composer->clear();
  m_returnedDraft = QString();
  m_attachments.clear();
  updateAttachments();
  m_list->setCurrentIndex(m_proxy->mapFromSource(m_model->index(m_model->rowOf(id))));
  m_composer->setFocus();
}

void ChatPage::renameConversation() {
  const QString id = m_controller->conversationId();
  const Conversation* c = m_model->find(id);
  if (!c) return;
  bool ok = false;
  const QString title = QInputDialog::getText(this, tr("Rename conversation"), tr("Title:"),
                                              QLineEdit::Normal, c->title, &ok);
  if (ok) m_model->rename(id, title);
}

void ChatPage::deleteConversation() {
  const QString id = m_controller->conversationId();
  const Conversation* c = m_model->find(id);
  if (!c) return;
  if (QMessageBox::question(
          this, tr("Delete conversation"),
          tr("Delete \"%1\"? This cannot be undone.")
              .arg(m_model->data(m_model->index(m_model->rowOf(id))).toString())) !=
      QMessageBox::Yes)
    return;
  m_controller->setConversation({});
  m_model->remove(id);
  if (m_model->rowCount() == 0) m_model->create();
  m_list->setCurrentIndex(m_proxy->index(0, 0));
}

void ChatPage::loadSettingsPanel() {
  const Conversation* c = m_controller->conversation();
  if (!c) return;
  m_loadingPanel = true;
  m_systemPrompt->setPlainText(c->systemPrompt);
  m_temperature->setValue(c->sampling.temperature);
  m_topP->setValue(c->sampling.topP);
  m_topK->setValue(c->sampling.topK);
  m_maxTokens->setValue(c->sampling.maxTokens);
  m_preset->setCurrentIndex(int(c->sampling.matchingPreset()));
  m_loadingPanel = false;
}

void ChatPage::storeSettings() {
  if (m_loadingPanel) return;
  Conversation* c = m_controller->conversation();
  if (!c) return;
  c->systemPrompt = m_systemPrompt->toPlainText();
  c->sampling.temperature = m_temperature->value();
  c->sampling.topP = m_topP->value();
  c->sampling.topK = m_topK->value();
  c->sampling.maxTokens = m_maxTokens->value();
  m_preset->setCurrentIndex(int(c->sampling.matchingPreset()));
  m_saveTimer.start();
}

void ChatPage::rebuildMessages() {
  m_dirty.clear();
  qDeleteAll(m_widgets);
  m_widgets.clear();
  const Conversation* c = m_controller->conversation();
  if (!c) return;
  for (int i = 0; i < c->messages.size(); ++i) {
    auto* w = new MessageWidget(i, m_messagesHost);
    connect(w, &MessageWidget::copyRequested, this, [this](int idx) {
      if (const Conversation* conv = m_controller->conversation())
        QApplication::clipboard()->setText(conv->messages.value(idx).content);
    });
    connect(w, &MessageWidget::editRequested, this, [this](int idx) {
      const Conversation* conv = m_controller->conversation();
      if (!conv || m_controller->isBusy()) return;
      bool ok = false;
      const QString text = QInputDialog::getMultiLineText(
          this, tr("Edit message"), tr("The later turns are replaced by a new answer."),
          conv->messages.value(idx).content, &ok);
      if (ok) m_controller->editAndResend(idx, text);
    });
    connect(w, &MessageWidget::regenerateRequested, m_controller, &ChatController::regenerate);
    connect(w, &MessageWidget::retryRequested, m_controller, &ChatController::retry);
    m_messagesLayout->insertWidget(m_messagesLayout->count() - 1, w);
    m_widgets.append(w);
  }
  for (int i = 0; i < m_widgets.size(); ++i) m_dirty.insert(i);
  m_follow = true;  // another conversation, or a new question: show its end
  flushDirty();
  scrollToEnd();
}

void ChatPage::scrollToEnd() {
  // Now, and once the layout has caught up (rangeChanged follows while m_follow holds).
  m_scroll->verticalScrollBar()->setValue(m_scroll->verticalScrollBar()->maximum());
  QTimer::singleShot(0, this, [this] {
    if (m_follow) m_scroll->verticalScrollBar()->setValue(m_scroll->verticalScrollBar()->maximum());
  });
}

void ChatPage::flushDirty() {
  const Conversation* c = m_controller->conversation();
  if (!c) return;
  const int last = int(c->messages.size()) - 1;
  for (int i : std::as_const(m_dirty))
    if (i >= 0 && i < m_widgets.size() && i <= last)
      m_widgets[i]->setMessage(c->messages[i], i == last, m_controller->isBusy());
  m_dirty.clear();
}

void ChatPage::sendDraft() {
  if (m_controller->isBusy()) return;
  if (m_session) {
    m_controller->setEndpoint(m_session->client()->baseUrl(), m_session->client()->apiKey());
    m_controller->setModel(m_session->loadedModel());
  }
  const QString text = m_composer->toPlainText();
  if (!m_controller->send(text, m_attachments)) return;
  m_composer->clear();
  m_attachments.clear();
  updateAttachments();
}

QString ChatPage::statusText() const {
  return m_status->isVisibleTo(this) ? m_status->text() : QString();
}

void ChatPage::updateState() {
  const ChatController::State s = m_controller->state();
  const double secs = m_controller->elapsedMs() / 1000.0;
  switch (s) {
    case ChatController::State::Idle:
      m_status->hide();
      m_elapsedTimer.stop();
      break;
    case ChatController::State::ReadingPrompt:
      m_status->setText(tr("Reading prompt… %1 s").arg(decimal(secs, 1)));
      m_status->show();
      if (!m_elapsedTimer.isActive()) m_elapsedTimer.start();
      break;
    case ChatController::State::Streaming:
      m_status->setText(tr("Writing the answer… %1 s").arg(decimal(secs, 1)));
      m_status->show();
      if (!m_elapsedTimer.isActive()) m_elapsedTimer.start();
      break;
  }
  const bool busy = m_controller->isBusy();
  m_send->setEnabled(!busy);
  m_stop->setEnabled(busy);
  // Busy changed: the per-message actions (edit, regenerate, retry) follow.
  if (sender() == m_controller) {
    for (int i = 0; i < m_widgets.size(); ++i) m_dirty.insert(i);
    flushDirty();
  }
}

void ChatPage::onModels(const QJsonArray& models) {
  const QString loaded = m_session ? m_session->loadedModel() : QString();
  for (const QJsonValue& v : models) {
    const QJsonObject m = v.toObject();
    if (!loaded.isEmpty() && m.value(QStringLiteral("id")).toString() != loaded &&
        models.size() > 1)
      continue;
    const bool vision = m.value(QStringLiteral("meta"))
                            .toObject()
                            .value(QStringLiteral("capabilities"))
                            .toObject()
                            .value(QStringLiteral("vision"))
                            .toBool();
    setVisionAvailable(vision, tr("The loaded model cannot read images."));
    return;
  }
}

bool ChatPage::attachEnabled() const {
  return m_attach->isEnabled();
}

void ChatPage::setVisionAvailable(bool available, const QString& reason) {
  m_vision = available;
  m_visionReason = reason;
  m_attach->setEnabled(available);
  m_attach->setToolTip(available ? tr("Attach images (or drop or paste them into the message)")
                                 : reason);
  m_composer->setImagesAccepted(available);
}

void ChatPage::attachFromDialog() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Attach images"), {}, tr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"));
  addAttachmentFiles(files);
}

void ChatPage::addAttachmentFiles(const QStringList& paths) {
  if (!m_vision) {
    showNotice(m_visionReason);
    return;
  }
  QStringList problems;
  for (const QString& p : paths) {
    QString error;
    const QString uri = ImageAttachment::fromFile(p, &error);
    if (uri.isEmpty())
      problems << error;
    else
      m_attachments << uri;
  }
  showNotice(problems.join(QLatin1Char('\n')));
  updateAttachments();
}

void ChatPage::addAttachmentImage(const QImage& image) {
  if (!m_vision || image.isNull()) return;
  m_attachments << ImageAttachment::fromImage(image);
  updateAttachments();
}

void ChatPage::updateAttachments() {
  while (QLayoutItem* it = m_attachLayout->takeAt(0)) {
    delete it->widget();
    delete it;
  }
  for (int i = 0; i < m_attachments.size(); ++i) {
    auto* b = new QToolButton(m_attachStrip);
    b->setIcon(
        QPixmap::fromImage(ImageAttachment::toImage(m_attachments[i])
                               .scaled(64, 64, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
    b->setIconSize(QSize(64, 64));
    b->setText(tr("Remove"));
    b->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
    b->setToolTip(tr("Remove this image"));
    connect(b, &QToolButton::clicked, this, [this, i] {
      m_attachments.removeAt(i);
      QTimer::singleShot(0, this, &ChatPage::updateAttachments);  // not while in b's handler
    });
    m_attachLayout->addWidget(b);
  }
  m_attachLayout->addStretch(1);
  m_attachStrip->setVisible(!m_attachments.isEmpty());
}

void ChatPage::dragEnterEvent(QDragEnterEvent* e) {
  if (m_vision && (e->mimeData()->hasUrls() || e->mimeData()->hasImage()))
    e->acceptProposedAction();
}

void ChatPage::dropEvent(QDropEvent* e) {
  const QMimeData* md = e->mimeData();
  if (md->hasImage()) {
    addAttachmentImage(qvariant_cast<QImage>(md->imageData()));
  } else {
    QStringList paths;
    for (const QUrl& u : md->urls())
      if (u.isLocalFile()) paths << u.toLocalFile();
    addAttachmentFiles(paths);
  }
  e->acceptProposedAction();
}

}  // namespace arc::app

namespace arc::app {

void ChatPage::onLocalModels(const QJsonArray& models) {
  m_modelPicker->clear();
  for (const QJsonValue& v : models) {
    const QJsonObject o = v.toObject();
    if (o.value(QStringLiteral("mmproj")).toBool()) continue;  // the vision part of a model
    const QString path = o.value(QStringLiteral("path")).toString();
    if (path.isEmpty()) continue;
    QString name = o.value(QStringLiteral("name")).toString();
    if (name.isEmpty()) name = QFileInfo(path).fileName();
    m_modelPicker->addItem(name, path);
    m_modelPicker->setItemData(m_modelPicker->count() - 1, path, Qt::ToolTipRole);
  }
  updateModelPicker();
}

void ChatPage::updateModelPicker() {
  if (!m_session) return;
  const QString loaded = m_session->loadedPath();
  int i = loaded.isEmpty() ? -1 : m_modelPicker->findData(loaded);
  if (i < 0 && !m_session->loadedModel().isEmpty())
    i = m_modelPicker->findText(m_session->loadedModel());
  if (i < 0 && !m_session->loadedModel().isEmpty()) {
    // Loaded from a file the list does not hold (attached engine, another folder).
    m_modelPicker->addItem(m_session->loadedModel(), loaded);
    i = m_modelPicker->count() - 1;
  }
  m_modelPicker->setPlaceholderText(m_modelPicker->count() ? tr("Pick a model to load")
                                                           : tr("No model files"));
  m_modelPicker->setCurrentIndex(i);
  m_modelPicker->setEnabled(!m_session->isLoading() && m_modelPicker->count() > 0);
}

void ChatPage::exportFromDialog() {
  const Conversation* c = m_controller->conversation();
  if (!c) return;
  QString base = c->title.simplified();
  base.replace(QRegularExpression(QStringLiteral("[^\\w\\- ]")), QString());
  if (base.isEmpty()) base = QStringLiteral("conversation");
  QString filter;
  const QString file =
      QFileDialog::getSaveFileName(this, tr("Export conversation"), base + QStringLiteral(".md"),
                                   tr("Markdown (*.md);;JSON (*.json)"), &filter);
  if (file.isEmpty()) return;
  QString name = file;
  if (QFileInfo(name).suffix().isEmpty())
    name +=
        filter.contains(QStringLiteral("json")) ? QStringLiteral(".json") : QStringLiteral(".md");
  exportConversation(name);
}

bool ChatPage::exportConversation(const QString& fileName) {
  const Conversation* c = m_controller->conversation();
  if (!c) return false;
  const bool json =
      QFileInfo(fileName).suffix().compare(QStringLiteral("json"), Qt::CaseInsensitive) == 0;
  QSaveFile f(fileName);
  if (f.open(QIODevice::WriteOnly)) {
    f.write(json ? ConversationExport::toJson(*c) : ConversationExport::toMarkdown(*c).toUtf8());
    if (f.commit()) return true;
  }
  showNotice(tr("Could not export to %1: %2").arg(fileName, f.errorString()));
  return false;
}

}  // namespace arc::app
