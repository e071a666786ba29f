// The Chat page: conversations on the left (search, new/rename/delete), the messages of the
// current one in a scroll area (one MessageWidget each; only the message being streamed is
// re-rendered, at most every 50 ms), the sampling settings panel, and the composer with image
// attachments (file dialog, drag-and-drop, paste) that are disabled when the model has no vision.
#pragma once

#include <QSet>
#include <QStringList>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QListView;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSortFilterProxyModel;
class QSpinBox;
class QToolButton;
class QVBoxLayout;

namespace arc::app {

class ChatComposer;
class ChatController;
class ConversationListModel;
class EngineSession;
class MessageWidget;

class ChatPage : public QWidget {
  Q_OBJECT
 public:
  // `directory`: where conversations live; empty for the default XDG data folder.
  explicit ChatPage(EngineSession* session, QWidget* parent = nullptr,
                    const QString& directory = {});

  ChatController* controller() const { return m_controller; }
  ConversationListModel* conversations() const { return m_model; }
  ChatComposer* composer() const { return m_composer; }
  QStringList attachments() const { return m_attachments; }
  bool attachEnabled() const;
  QString statusText() const;
  QString noticeText() const;
  QList<MessageWidget*> messageWidgets() const { return m_widgets; }
  QScrollArea* scrollArea() const { return m_scroll; }
  // True while the view keeps the newest content in sight (the user has not scrolled up).
  bool followsNewContent() const { return m_follow; }
  QComboBox* modelPicker() const { return m_modelPicker; }
  // Writes the current conversation as Markdown (.md) or JSON (.json, by the suffix); false with
  // a notice on the page when the file cannot be written.
  bool exportConversation(const QString& fileName);

 signals:
  // The user picked a model file in the chat header: load it the way the Models page does.
  void loadModelRequested(const QString& path);

 public:
  // What the loaded model can do, from /v1/models (tests set it directly).
  void setVisionAvailable(bool available, const QString& reason = {});
  void addAttachmentFiles(const QStringList& paths);
  void addAttachmentImage(const QImage& image);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void selectConversation(const QString& id);
  void newConversation();
  void renameConversation();
  void deleteConversation();
  void rebuildMessages();
  void flushDirty();
  void sendDraft();
  void updateState();
  void updateAttachments();
  void loadSettingsPanel();
  void storeSettings();
  void onModels(const QJsonArray& models);
  void attachFromDialog();
  void showNotice(const QString& text);
  void exportFromDialog();
  void onLocalModels(const QJsonArray& models);
  void updateModelPicker();
  void scrollToEnd();

  EngineSession* m_session;
  ConversationListModel* m_model;
  QSortFilterProxyModel* m_proxy;
  ChatController* m_controller;
  QLineEdit* m_search;
  QListView* m_list;
  QLabel* m_notice;
  QComboBox* m_modelPicker;
  QPushButton* m_export;
  QToolButton* m_settingsToggle;
  QWidget* m_settingsPanel;
  QPlainTextEdit* m_systemPrompt;
  QComboBox* m_preset;
  QDoubleSpinBox* m_temperature;
  QDoubleSpinBox* m_topP;
  QSpinBox* m_topK;
  QSpinBox* m_maxTokens;
  QScrollArea* m_scroll;
  QWidget* m_messagesHost;
  QVBoxLayout* m_messagesLayout;
  QList<MessageWidget*> m_widgets;
  QLabel* m_status;
  QWidget* m_attachStrip;
  QHBoxLayout* m_attachLayout;
  ChatComposer* m_composer;
  QToolButton* m_attach;
  QPushButton* m_send;
  QPushButton* m_stop;
  QStringList m_attachments;
  bool m_vision = false;
  QString m_visionReason;
  QString m_modelsFor;  // the loaded model /v1/models was last asked for
  QSet<int> m_dirty;
  QTimer m_renderTimer;
  QTimer m_elapsedTimer;
  QTimer m_saveTimer;
  bool m_loadingPanel = false;
  bool m_follow = true;
  bool m_pickerLoad = false;  // a load the picker started: its failure shows on this page
  QString m_returnedDraft;    // text a failed send put back in the composer
};

}  // namespace arc::app
