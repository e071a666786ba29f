#include "AboutDialog.h"

#include <qcustomplot.h>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace arc::app {

AboutDialog::AboutDialog(const QString& engineVersion, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("About Arclight"));
  auto* layout = new QVBoxLayout(this);
  auto* text = new QLabel(this);
  text->setTextFormat(Qt::RichText);
  const QString engine =
      engineVersion.isEmpty() ? tr("not connected") : engineVersion.toHtmlEscaped();
  text->setText(tr("<h2>Arclight %1</h2>"
                   "<p>Mixture-of-Experts inference for DGX Spark clusters.</p>"
                   "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
                   "<tr><td>QCustomPlot</td><td>%4</td></tr>"
                   "<tr><td>Engine</td><td>%5</td></tr></table>")
                    .arg(QStringLiteral(ARC_APP_VERSION), QString::fromLatin1(qVersion()),
                         QStringLiteral(QT_VERSION_STR), QStringLiteral(QCUSTOMPLOT_VERSION_STR),
                         engine));
  layout->addWidget(text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok, this);
  // Named here, not by Qt: the labels are translated even without Qt's own translations.
  buttons->button(QDialogButtonBox::Ok)->setText(tr("OK"));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  layout->addWidget(buttons);
}

}  // namespace arc::app
