// Writer -> reader round trips for every metadata value type and every tensor type, and the
// writer's byte layout against a file assembled by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "arc/gguf.h"
#include "gguf_test_util.h"

namespace arc::gguf {
namespace {

using testing::pattern_bytes;
using testing::tensor_bytes;

Array make_array(ValueType t, std::vector<Value> items) {
  Array a;
  a.elem_type = t;
  a.items = std::move(items);
  return a;
}

File parse_ok(const std::vector<uint8_t>& bytes) {
  auto r = File::parse(bytes);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

TEST(GgufRoundTrip, EveryScalarTypeKeepsTypeAndValue) {
  Writer w;
  w.set("u8", Value::u8(255));
  w.set("i8", Value::i8(-128));
  w.set("u16", Value::u16(65535));
  w.set("i16", Value::i16(-32768));
  w.set("u32", Value::u32(4294967295u));
  w.set("i32", Value::i32(-2147483647 - 1));
  w.set("u64", Value::u64(18446744073709551615ull));
  w.set("i64", Value::i64(-9223372036854775807ll - 1));
  w.set("f32", Value::f32(1.5f));
  w.set("f64", Value::f64(-2.25e300));
  w.set("t", Value::boolean(true));
  w.set("f", Value::boolean(false));
  w.set("s", Value::str("hello"));
  w.set("empty", Value::str(""));
  w.set("unicode", Value::str("h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x98\x80"));
  const auto bytes = w.to_bytes();
  File f = parse_ok(bytes);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 15u);
  EXPECT_EQ(f.find("u8")->type, ValueType::kUint8);
  EXPECT_EQ(f.get_int("u8"), 255);
  EXPECT_EQ(f.find("i8")->type, ValueType::kInt8);
  EXPECT_EQ(f.get_int("i8"), -128);
  EXPECT_EQ(f.find("u16")->type, ValueType::kUint16);
  EXPECT_EQ(f.get_int("u16"), 65535);
  EXPECT_EQ(f.find("i16")->type, ValueType::kInt16);
  EXPECT_EQ(f.get_int("i16"), -32768);
  EXPECT_EQ(f.find("u32")->type, ValueType::kUint32);
  EXPECT_EQ(f.get_int("u32"), 4294967295ll);
  EXPECT_EQ(f.find("i32")->type, ValueType::kInt32);
  EXPECT_EQ(f.get_int("i32"), -2147483648ll);
  EXPECT_EQ(f.find("u64")->type, ValueType::kUint64);
  EXPECT_EQ(f.find("u64")->as_uint(), 18446744073709551615ull);
  EXPECT_EQ(f.get_int("u64"), std::nullopt);  // does not fit int64
  EXPECT_EQ(f.find("i64")->type, ValueType::kInt64);
  EXPECT_EQ(f.get_int("i64"), -9223372036854775807ll - 1);
  EXPECT_EQ(f.find("i64")->as_uint(), std::nullopt);
  EXPECT_EQ(f.find("f32")->type, ValueType::kFloat32);
  EXPECT_EQ(f.get_float("f32"), 1.5);
  EXPECT_EQ(f.find("f64")->type, ValueType::kFloat64);
  EXPECT_EQ(f.get_float("f64"), -2.25e300);
  EXPECT_EQ(f.get_int("f64"), std::nullopt);
  EXPECT_EQ(f.get_bool("t"), true);
  EXPECT_EQ(f.get_bool("f"), false);
  EXPECT_EQ(f.get_bool("u8"), std::nullopt);
  EXPECT_EQ(f.get_string("s"), "hello");
  EXPECT_EQ(f.get_string("empty"), "");
  EXPECT_EQ(f.get_string("unicode"), "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x98\x80");
  EXPECT_EQ(f.get_string("u8"), std::nullopt);
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_TRUE(f.tensors().empty());
  // Writing what was read gives the same bytes (types kept exactly).
  Writer again;
  for (const char* k : {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "t",
                        "f", "s", "empty", "unicode"}) {
    again.set(k, *f.find(k));
  }
  EXPECT_EQ(again.to_bytes(), bytes);
}

TEST(GgufRoundTrip, ArraysNestedEmptyAndTyped) {
  Writer w;
  w.set("ints", Value::array(make_array(ValueType::kInt32, {Value::i32(-1), Value::i32(7)})));
  w.set("u8s", Value::array(make_array(ValueType::kUint8, {Value::u8(0), Value::u8(200)})));
  w.set("floats", Value::array(make_array(ValueType::kFloat32, {Value::f32(0.5f)})));
  w.set("bools", Value::array(make_array(ValueType::kBool, {Value::boolean(true)})));
  w.set("strs",
        Value::array(make_array(ValueType::kString, {Value::str(""), Value::str("\xc4\xa0the")})));
  w.set("empty", Value::array(make_array(ValueType::kUint64, {})));
  Array inner1 = make_array(ValueType::kInt64, {Value::i64(1), Value::i64(2)});
  Array inner2 = make_array(ValueType::kString, {Value::str("x")});
  Array inner3 = make_array(ValueType::kFloat64, {});
  w.set("nested",
        Value::array(make_array(ValueType::kArray, {Value::array(inner1), Value::array(inner2),
                                                    Value::array(inner3)})));
  Array deep = make_array(ValueType::kArray,
                          {Value::array(make_array(ValueType::kArray, {Value::array(inner1)}))});
  w.set("deep", Value::array(deep));
  const auto bytes = w.to_bytes();
  File f = parse_ok(bytes);
  EXPECT_EQ(f.get_int_array("ints"), (std::vector<int64_t>{-1, 7}));
  EXPECT_EQ(f.get_int_array("u8s"), (std::vector<int64_t>{0, 200}));
  EXPECT_EQ(f.get_float_array("floats"), (std::vector<double>{0.5}));
  EXPECT_EQ(f.get_float_array("ints"), (std::vector<double>{-1.0, 7.0}));
  EXPECT_EQ(f.get_int_array("floats"), std::nullopt);
  EXPECT_EQ(f.get_string_array("strs"), (std::vector<std::string>{"", "\xc4\xa0the"}));
  EXPECT_EQ(f.get_string_array("ints"), std::nullopt);
  EXPECT_EQ(f.find("bools")->as_array()->items.at(0).as_bool(), true);
  const Array* e = f.find("empty")->as_array();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->elem_type, ValueType::kUint64);
  EXPECT_TRUE(e->items.empty());
  const Array* n = f.find("nested")->as_array();
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->elem_type, ValueType::kArray);
  ASSERT_EQ(n->items.size(), 3u);
  EXPECT_EQ(n->items[0].as_array()->elem_type, ValueType::kInt64);
  EXPECT_EQ(n->items[0].as_array()->items[1].as_int(), 2);
  EXPECT_EQ(*n->items[1].as_array()->items[0].as_string(), "x");
  EXPECT_EQ(n->items[2].as_array()->elem_type, ValueType::kFloat64);
  EXPECT_TRUE(n->items[2].as_array()->items.empty());
  const Array* d = f.find("deep")->as_array()->items[0].as_array()->items[0].as_array();
  EXPECT_EQ(d->items[0].as_int(), 1);
  Writer again;
  for (const char* k : {"ints", "u8s", "floats", "bools", "strs", "empty", "nested", "deep"}) {
    again.set(k, *f.find(k));
  }
  EXPECT_EQ(again.to_bytes(), bytes);
}

TEST(GgufRoundTrip, EveryTensorTypeWithItsBytes) {
  Writer w;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> expected;
  int n_types = 0;
  for (uint32_t id = 0; id < 64; ++id) {
    const DTypeInfo* info = dtype_info(id);
    if (info == nullptr) continue;
    ++n_types;
    std::vector<int64_t> shape = {2 * static_cast<int64_t>(info->block_elems), 3};
    auto data = pattern_bytes(tensor_bytes(info->type, shape), id);
    // 2 blocks per row, 3 rows.
    ASSERT_EQ(data.size(), size_t{6} * info->block_bytes);
    std::string name = "t." + std::string(info->name);
    ASSERT_TRUE(w.add_tensor(name, info->type, shape, data).ok());
    expected.emplace_back(name, data);
  }
  EXPECT_EQ(n_types, 32);  // every type dtype.h lists
  w.set_alignment(64);
  const auto bytes = w.to_bytes();  // File::parse keeps pointing into these
  File f = parse_ok(bytes);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.get_int("general.alignment"), 64);
  ASSERT_EQ(f.tensors().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const TensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, expected[i].first);
    EXPECT_EQ(t.n_bytes, expected[i].second.size());
    EXPECT_EQ(f.absolute_offset(t) % 64, 0u);
    EXPECT_EQ(t.shape[1], 3);
    EXPECT_EQ(t.n_rows(), 3);
    EXPECT_EQ(t.n_elements(), t.shape[0] * 3);
    EXPECT_EQ(f.find_tensor(t.name), &t);
    auto got = f.tensor_data(t);
    EXPECT_TRUE(
        std::equal(got.begin(), got.end(), expected[i].second.begin(), expected[i].second.end()))
        << t.name;
  }
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

// The writer's bytes against a file assembled by hand from the GGUF specification.
TEST(GgufRoundTrip, WriterLayoutMatchesHandBuiltFile) {
  Writer w;
  w.set("k", Value::u16(0x1234));
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(w.add_tensor("w", DType::F32, {2}, data).ok());
  std::vector<uint8_t> expect = {'G',  'G',  'U', 'F', 3, 0, 0, 0,   // magic, version 3
                                 1,    0,    0,   0,   0, 0, 0, 0,   // 1 tensor
                                 1,    0,    0,   0,   0, 0, 0, 0,   // 1 key/value
                                 1,    0,    0,   0,   0, 0, 0, 0,   // key length 1
                                 'k',  2,    0,   0,   0,            // "k", type uint16
                                 0x34, 0x12,                         // value
                                 1,    0,    0,   0,   0, 0, 0, 0,   // name length 1
                                 'w',  1,    0,   0,   0,            // "w", n_dims 1
                                 2,    0,    0,   0,   0, 0, 0, 0,   // ne0 = 2
                                 0,    0,    0,   0,                 // F32
                                 0,    0,    0,   0,   0, 0, 0, 0};  // offset 0
  expect.resize(96, 0);  // 72 bytes of header padded to 32
  expect.insert(expect.end(), data.begin(), data.end());
  expect.resize(128, 0);
  EXPECT_EQ(w.to_bytes(), expect);
  File f = parse_ok(expect);
  ASSERT_EQ(f.tensors().size(), 1u);
  EXPECT_EQ(f.absolute_offset(f.tensors()[0]), 96u);
  EXPECT_EQ(f.file_bytes(), 128u);
}

TEST(GgufRoundTrip, WriteAndOpenFromDisk) {
  auto dir = testing::temp_dir("disk");
  auto path = (dir / "m.gguf").string();
  const auto bytes = testing::small_valid_file();
  Writer w;
  w.set("general.architecture", Value::str("qwen3moe"));
  auto data = pattern_bytes(4 * 3 * 4, 9);
  ASSERT_TRUE(w.add_tensor("x", DType::F32, {4, 3}, data).ok());
  ASSERT_TRUE(w.write(path).ok());
  auto r = File::open(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->architecture(), "qwen3moe");
  EXPECT_EQ(r->n_files(), 1u);
  ASSERT_NE(r->mapping(0), nullptr);
  EXPECT_EQ(r->mapping(0)->size(), r->file_bytes());
  auto got = r->tensor_data(r->tensors()[0]);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin(), data.end()));
  std::filesystem::remove_all(dir);
}

TEST(GgufWriter, RejectsBadTensors) {
  Writer w;
  std::vector<uint8_t> four(4);
  EXPECT_FALSE(w.add_tensor("", DType::F32, {1}, four).ok());
  EXPECT_FALSE(w.add_tensor("a", DType::F32, {}, four).ok());
  EXPECT_FALSE(w.add_tensor("a", DType::F32, {1, 1, 1, 1, 1}, four).ok());
  EXPECT_FALSE(w.add_tensor("a", DType::F32, {0}, {}).ok());
  EXPECT_FALSE(w.add_tensor("a", DType::F32, {2}, four).ok());    // wrong byte count
  EXPECT_FALSE(w.add_tensor("a", DType::Q8_0, {16}, four).ok());  // not a block multiple
  EXPECT_TRUE(w.add_tensor("a", DType::F32, {1}, four).ok());
  EXPECT_FALSE(w.add_tensor("a", DType::F32, {1}, four).ok());  // duplicate
}

}  // namespace
}  // namespace arc::gguf
