#include "arc/chat_template.h"

#include "jinja_interp.h"

namespace arc {
namespace {

std::string where(const jinja::Error& e) {
  if (e.line <= 0) return std::string("chat template: ") + e.what();
  return "chat template line " + std::to_string(e.line) + ", column " + std::to_string(e.column) +
         ": " + e.what();
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  ChatTemplate t;
  t.source_ = std::string(source);
  try {
    auto tokens = jinja::tokenize(t.source_);
    t.program_ = std::make_shared<const jinja::NodeList>(jinja::parse(tokens));
  } catch (const jinja::Error& e) {
    return invalid_argument(where(e));
  } catch (const std::exception& e) {
    return internal_error(std::string("chat template: parser failure: ") + e.what());
  }
  return t;
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context,
                                         std::optional<std::time_t> now,
                                         const ChatTemplateLimits& limits) const {
  if (!program_) return failed_precondition("chat template: render() on an unparsed template");
  if (!context.is_object())
    return invalid_argument("chat template: the context must be a JSON object");
  jinja::Limits l;
  l.max_depth = limits.max_depth;
  l.max_steps = limits.max_steps;
  l.max_output_bytes = limits.max_output_bytes;
  jinja::Interpreter in(l, now ? *now : std::time(nullptr));
  try {
    return in.render(*program_, jinja::Value::from_json(context));
  } catch (const jinja::Error& e) {
    return invalid_argument(where(e));
  } catch (const std::bad_alloc&) {
    return resource_exhausted("chat template: out of memory while rendering");
  } catch (const std::exception& e) {
    return internal_error(std::string("chat template: ") + e.what());
  }
}

}  // namespace arc
