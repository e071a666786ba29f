// The Models page's Hugging Face tab: search GGUF repositories, list a repository's models (split
// files as one row) with their quantization and size, and for each the fit verdict for the
// planner's boxes computed from the file's remote GGUF header (range requests, nothing of the
// weights downloaded) next to the catalog's figures for the same build. Download into the model
// folder with progress, time left, pause, resume and cancel (ModelDownload).
#pragma once

#include <QList>
#include <QPointer>
#include <QUrl>
#include <QWidget>

#include "CatalogEntry.h"
#include "FitController.h"
#include "HubClient.h"
#include "ModelDownload.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace arc::app {

class HubTokenStore;

class HubBrowser : public QWidget {
  Q_OBJECT
 public:
  enum Column { ColFile = 0, ColQuant, ColSize, ColFit, ColCatalog, ColCount };

  explicit HubBrowser(QWidget* parent = nullptr);

  void setBaseUrl(const QUrl& url);
  void setDownloadDir(const QString& dir) { m_downloadDir = dir; }
  QString downloadDir() const { return m_downloadDir; }
  void setFitInputs(const FitInputs& inputs);
  void setCatalog(const QList<CatalogEntry>& entries);

  HubClient* client() const { return m_client; }
  // The token store; MainWindow loads it from the keyring at startup (tokens()->load()).
  HubTokenStore* tokens() const { return m_tokens; }
  QTableWidget* repoTable() const { return m_repos; }
  QTableWidget* fileTable() const { return m_files; }
  QString message() const;

  void search(const QString& text);
  void openRepo(const QString& repo);
  // The remote-header entry of a row (its fitModel set once the header was read).
  const CatalogEntry* remoteEntry(int row) const;
  FitSummary fitOf(int row) const;
  bool fitsPending() const { return m_fitRunning; }
  ModelDownload* download() const { return m_download; }
  void downloadRow(int row);

 signals:
  void remoteFitsDone();
  void downloadFinished(bool ok, const QString& pathOrMessage);

 private:
  struct Row {
    HubModelFile file;
    CatalogEntry entry;  // remote header spec (entry.fitModel)
    QString fitError;
    bool fitDone = false;
  };

  void onSearch(const QList<HubRepoInfo>& repos, const QString& error);
  void onFiles(const QString& repo, const QList<HubModelFile>& files, const QString& error);
  void startNextFit();
  void updateFitCells();
  void updateDownloadControls();
  void onDownloadProgress(qint64 done, qint64 total);
  void askToken();
  const CatalogEntry* catalogMatch(const QString& repo) const;

  HubClient* m_client;
  HubTokenStore* m_tokens;
  QString m_downloadDir;
  FitInputs m_inputs;
  QList<CatalogEntry> m_catalog;
  QString m_repo;
  QList<Row> m_rows;
  int m_generation = 0;  // a new listing drops the answers for the old one
  bool m_fitRunning = false;
  QPointer<ModelDownload> m_download;

  QLineEdit* m_search = nullptr;
  QPushButton* m_token = nullptr;
  QTableWidget* m_repos = nullptr;
  QTableWidget* m_files = nullptr;
  QLabel* m_message = nullptr;
  QPushButton* m_downloadButton = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_progressText = nullptr;
};

}  // namespace arc::app
