// ChatFormatter from a GGUF file's metadata: tokenizer.chat_template plus the BOS/EOS token
// strings looked up by id in tokenizer.ggml.tokens.
#include "arc/chat_template.h"
#include "arc/gguf.h"

namespace arc {
namespace {

std::string token_by_id(const gguf::File& f, std::string_view id_key) {
  auto id = f.get_int(id_key);
  if (!id || *id < 0) return "";
  const gguf::Value* tokens = f.find("tokenizer.ggml.tokens");
  const gguf::Array* arr = tokens ? tokens->as_array() : nullptr;
  if (!arr || static_cast<size_t>(*id) >= arr->items.size()) return "";
  const std::string* s = arr->items[static_cast<size_t>(*id)].as_string();
  return s ? *s : "";
}

}  // namespace

Result<ChatFormatter> ChatFormatter::from_gguf(const gguf::File& file) {
  auto source = file.get_string("tokenizer.chat_template");
  if (!source) {
    return not_found(file.path() +
                     " has no tokenizer.chat_template; give the template with --template FILE");
  }
  auto tpl = ChatTemplate::parse(*source);
  if (!tpl.ok()) return tpl.status().with_context(file.path() + ": tokenizer.chat_template");
  // Models that do not add BOS still name one; templates print bos_token only when they want it.
  return ChatFormatter(std::move(*tpl), token_by_id(file, "tokenizer.ggml.bos_token_id"),
                       token_by_id(file, "tokenizer.ggml.eos_token_id"));
}

}  // namespace arc
