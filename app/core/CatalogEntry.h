// One model of the catalog (resources/catalog/models.json) or one GGUF file the engine found, as
// the Models page shows it. The reader is lenient about field names so catalog revisions do not
// break the app; unknown fields are ignored.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

#include "QualityStore.h"

#include <memory>

namespace arc::app {

// The fit library's view of an entry (one model spec per build); defined in FitBackend.cpp.
struct FitModel;

struct CatalogBuild {
  QString name;  // quantization, e.g. "Q4_K_M", "MXFP4"
  double bitsPerWeight = 0;
  qint64 sizeBytes = 0;  // the file size, when published
};

struct PublishedSpeed {
  QString what;  // e.g. "decode, 1 box, Q4_K_M"
  double tokensPerSec = 0;
  QString source;  // where the figure comes from (a seed, a URL)
};

struct CatalogEntry {
  QString id;
  QString name;
  QString family;            // e.g. "qwen3moe"
  QString architecture;      // human description
  double paramsB = 0;        // total parameters, billions
  double activeParamsB = 0;  // active per token, billions (== paramsB for dense models)
  qint64 contextLength = 0;
  QString license;
  QList<CatalogBuild> builds;
  QList<PublishedSpeed> speeds;
  QList<PublishedQuality> quality;           // published checks against full precision, per build
  QJsonObject raw;                           // the entry as read, for the fit library
  std::shared_ptr<const FitModel> fitModel;  // set by FitController::attachFitModels

  // Local files only.
  QString path;
  qint64 fileBytes = 0;
  QString quant;
  bool projector = false;    // a vision projector (mmproj): the vision part of a model, not one
  bool visionModel = false;  // takes images (with a projector)
  QString visionProjector;   // vision models: the projector the engine pairs (empty: none fits)

  bool isLocal() const { return !path.isEmpty(); }
  qint64 sizeBytes() const;  // the file, or the smallest published build

  static CatalogEntry fromCatalogJson(const QJsonObject& o);
  static CatalogEntry fromLocalJson(const QJsonObject& o);
};

// Reads a catalog document ({"models":[...]} or a bare array). Entries without an id or name are
// skipped; error (when given) says why the document as a whole was unreadable.
QList<CatalogEntry> parseCatalog(const QByteArray& json, QString* error = nullptr);

// Size buckets for the filter.
enum class SizeClass { Any = 0, Small = 1, Medium = 2, Large = 3 };  // <30B, 30-150B, >150B
SizeClass sizeClassOf(double paramsB);

}  // namespace arc::app
