// The Jinja subset feature by feature. Expected strings are what Jinja means (checked against
// @huggingface/jinja where the two agree; where the reference differs from Python Jinja, as for
// "abc".strip("x"), Python's documented meaning is used and noted).
#include <gtest/gtest.h>

#include "arc/chat_template.h"

namespace {

using json = nlohmann::ordered_json;

json ctx() {
  return json::parse(R"({"x": {"a": 1, "b": "s"}, "n": null, "xs": [3, 1, 2],
    "s": "  Hello World  ", "f": 2.5, "t": true,
    "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})");
}

std::string render(const std::string& tpl, const json& c = ctx()) {
  auto t = arc::ChatTemplate::parse(tpl);
  if (!t.ok()) return "PARSE ERROR: " + t.status().message();
  auto r = t->render(c, /*now=*/0);
  if (!r.ok()) return "ERROR: " + r.status().message();
  return *r;
}

bool fails(const std::string& tpl, const std::string& needle, const json& c = ctx()) {
  std::string r = render(tpl, c);
  return r.find("ERROR") != std::string::npos && r.find(needle) != std::string::npos;
}

TEST(Jinja, LiteralsAndPrinting) {
  EXPECT_EQ(render("{{ [1,\"a\",none,true,1.5] }}"), "[1, \"a\", null, true, 1.5]");
  EXPECT_EQ(render("{{ {\"a\":1,\"b\":[1,2]} }}"), "{\"a\": 1, \"b\": [1, 2]}");
  EXPECT_EQ(render("{{ u }}|{{ none }}|{{ true }}|{{ false }}"), "||true|false");
  EXPECT_EQ(render("{{ 'a' 'b' }} {{ \"it's\" }} {{ 'q\\'q' }} {{ '\\u00e9\\n' }}"),
            "ab it's q'q é\n");
}

TEST(Jinja, Arithmetic) {
  EXPECT_EQ(
      render("{{ 1.0 }} {{ 3/2 }} {{ 4/2 }} {{ 7//2 }} {{ 2**10 }} {{ 7 % 3 }} {{ -7 // 2 }}"),
      "1.0 1.5 2.0 3 1024 1 -4");
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ f * 2 }} {{ 10 - 4 - 3 }} {{ -f }}"),
            "7 9 5.0 3 -2.5");
  EXPECT_EQ(render("{{ \"a\" + true }}|{{ \"a\" ~ 1.5 }}|{{ \"a\" ~ 2 }}|{{ [1] + [2] }}"),
            "atrue|a1.5|a2|[1, 2]");
  EXPECT_TRUE(fails("{{ 1 / 0 }}", "division by zero"));
  EXPECT_TRUE(fails("{{ \"x\" + u }}", "undefined"));
}

TEST(Jinja, AttributeSubscriptSlice) {
  EXPECT_EQ(render("{{ x.a }}{{ x['b'] }}{{ xs[0] }}{{ xs[-1] }}{{ msgs[1].content }}"), "1s32yo");
  EXPECT_EQ(render("[{{ x.y }}{{ u.y }}{{ n.y }}{{ xs[9] }}]"), "[]");
  EXPECT_EQ(
      render("{{ \"abc\"[::-1] }} {{ xs[1:] }} {{ xs[::2] }} {{ \"hello\"[1:3] }} {{ xs[:-1] }}"),
      "cba [1, 2] [3, 2] el [3, 1]");
  EXPECT_EQ(render("{{ \"aé\"[::-1] }} {{ \"zażółć\"[2:5] }} {{ \"é\"|length }}"), "éa żół 1");
  EXPECT_EQ(render("{% for m in msgs[::-1] %}{{ m.role }} {% endfor %}"), "assistant user ");
}

TEST(Jinja, ComparisonsLogicMembership) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 2 >= 2 }} {{ 1 == 1.0 }} {{ [1] == [1] }} {{ \"a\" != \"a\" }}"),
            "true true true true false");
  EXPECT_EQ(
      render("{{ not true }} {{ not u }} {{ true and false }} {{ 0 or \"x\" }} {{ x.z or [] }}"),
      "false true false x []");
  EXPECT_EQ(render("{{ \"a\" in \"cat\" }} {{ 1 in xs }} {{ \"a\" in x }} {{ \"z\" not in x }} {{ "
                   "5 not in xs }}"),
            "true true true true true");
  EXPECT_EQ(render("{{ 'yes' if t else 'no' }} {{ 'yes' if n else 'no' }} [{{ 1 if false }}]"),
            "yes no []");
}

TEST(Jinja, Tests) {
  EXPECT_EQ(
      render("{{ none is none }}|{{ u is undefined }}|{{ u is defined }}|{{ 3 is odd }}|"
             "{{ 4 is even }}|{{ [] is iterable }}|{{ {} is mapping }}|{{ 's' is string }}|"
             "{{ 1 is number }}|{{ t is boolean }}|{{ false is false }}|{{ t is true }}|"
             "{{ xs is sequence }}|{{ n is not none }}|{{ 1 is string }}|{{ x is not mapping }}"),
      "true|true|false|true|true|true|true|true|true|true|true|true|true|false|false|false");
  EXPECT_EQ(render("{{ 6 is divisibleby 3 }} {{ 2 is eq(2) }}"), "true true");
  EXPECT_TRUE(fails("{{ 1 is frobnicated }}", "unknown test 'frobnicated'"));
}

TEST(Jinja, Filters) {
  EXPECT_EQ(render("{{ s|trim }}|{{ xs|length }}|{{ xs|join('-') }}|{{ u|default('d') }}|"
                   "{{ n|default('d') }}|{{ ''|default('d', true) }}"),
            "Hello World|3|3-1-2|d||d");
  EXPECT_EQ(render("{{ 'Hello World'|upper }} {{ 'Hello'|lower }} {{ 'hello world'|title }} "
                   "{{ 'hELLO'|capitalize }} {{ 'abc'|replace('b', 'X') }}"),
            "HELLO WORLD hello Hello World Hello aXc");
  EXPECT_EQ(render("{{ xs|first }}{{ xs|last }} {{ '3'|int + 1 }} {{ 2|float }} {{ -3|abs }} "
                   "{{ 2.567|round(2) }} {{ 1|string ~ 2 }}"),
            "32 4 2.0 -3 2.57 12");
  EXPECT_EQ(
      render("{{ x|items|list }} {{ xs|sort }} {{ xs|sort(reverse=true) }} {{ xs|reverse|list }}"),
      "[[\"a\", 1], [\"b\", \"s\"]] [1, 2, 3] [3, 2, 1] [2, 1, 3]");
  EXPECT_EQ(
      render("{{ msgs|map(attribute='role')|join(', ') }} "
             "{{ msgs|selectattr('role', 'equalto', 'user')|list|length }} "
             "{{ msgs|rejectattr('role', 'equalto', 'user')|map(attribute='content')|first }} "
             "{{ xs|select('odd')|list }} {{ [1, 1, 2]|unique|list }} {{ xs|sum }} "
             "{{ xs|min }}{{ xs|max }} {{ xs|batch(2)|list }}"),
      "user, assistant 1 yo [3, 1] [1, 2] 6 13 [[3, 1], [2]]");
  EXPECT_EQ(
      render("{{ 'a\\nb'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ '%s=%s'|format('k', 1) }}"),
      "a\n  b|  a\n  b|k=1");
  EXPECT_TRUE(fails("{{ xs|bogus }}", "unknown filter 'bogus'"));
}

TEST(Jinja, ToJson) {
  EXPECT_EQ(render("{{ x|tojson }}"), "{\"a\": 1, \"b\": \"s\"}");
  EXPECT_EQ(render("{{ x|tojson(indent=2) }}"), "{\n  \"a\": 1,\n  \"b\": \"s\"\n}");
  EXPECT_EQ(render("{{ {'l': [1, {}], 'e': []}|tojson(indent=2) }}"),
            "{\n  \"l\": [\n    1,\n    {}\n  ],\n  \"e\": []\n}");
  EXPECT_EQ(render("{{ 'é\"\\t\\u0001'|tojson }} {{ 'é'|tojson(ensure_ascii=true) }}"),
            "\"é\\\"\\t\\u0001\" \"\\u00e9\"");
  EXPECT_EQ(
      render("{{ x|tojson(separators=[',', ':']) }} {{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}"),
      "{\"a\":1,\"b\":\"s\"} {\"a\": 2, \"b\": 1}");
}

TEST(Jinja, StringMethods) {
  EXPECT_EQ(
      render(
          "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.split() }}|"
          "{{ 'a,b,,c'.split(',') }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\nx\\n'.lstrip('\\n') }}"),
      "Hello World|Hello World  |  Hello World|[\"Hello\", \"World\"]|[\"a\", \"b\", \"\", "
      "\"c\"]|hi|x\n");
  EXPECT_EQ(
      render(
          "{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith('bc') }}{{ 'abc'.startswith(('x', 'a')) }}"
          "{{ 'a</think>b'.split('</think>')[-1] }}{{ ', '.join(['a', 'b']) }}{{ 'ab'.upper() }}"),
      "truetruetrueba, bAB");
  EXPECT_EQ(
      render("{{ x.keys()|list }} {{ x.values()|list }} {{ x.get('a') }} {{ x.get('z', 9) }}"),
      "[\"a\", \"b\"] [1, \"s\"] 1 9");
  EXPECT_TRUE(fails("{{ xs.frob() }}", "no method 'frob'"));
}

TEST(Jinja, ForLoops) {
  EXPECT_EQ(
      render("{% for m in msgs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
             "{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }};{% endfor %}"),
      "10truefalse221;21falsetrue210;");
  EXPECT_EQ(render("{% for m in msgs if m.role == 'assistant' %}{{ m.content }}{{ loop.length }}{% "
                   "endfor %}"),
            "yo1");
  EXPECT_EQ(render("{% for m in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in x.items() %}{{ k }}={{ v }};{% endfor %}{% for k in x %}{{ k "
                   "}}{% endfor %}"),
            "a=1;b=s;ab");
  EXPECT_EQ(
      render("{% for i in xs %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 2 %}{% break %}"
             "{% endif %}{{ i }}{% endfor %}"),
      "3");
  EXPECT_EQ(render("{% for i in xs %}{{ loop.previtem }}>{{ loop.nextitem }} {% endfor %}"),
            ">1 3>2 1> ");
  EXPECT_EQ(render("{{ range(3)|list }} {{ range(1, 7, 2)|list }}"), "[0, 1, 2] [1, 3, 5]");
  EXPECT_TRUE(fails("{% for i in 5 %}{% endfor %}", "cannot loop"));
}

TEST(Jinja, SetScopingAndNamespace) {
  EXPECT_EQ(render("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}"), "2");
  EXPECT_EQ(render("{% for i in [1, 2] %}{% set y = i %}{% endfor %}[{{ y }}]"), "[]");
  EXPECT_EQ(
      render("{% set ns = namespace(a=1) %}{% for i in xs %}{% set ns.a = ns.a + i %}{% endfor %}"
             "{{ ns.a }}"),
      "7");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ a }}{{ b }}{% set blk %}in {{ 1 + 1 }}{% endset "
                   "%}[{{ blk }}]"),
            "12[in 2]");
  EXPECT_TRUE(fails("{% set xs.a = 1 %}", "cannot set attribute"));
}

TEST(Jinja, Macros) {
  EXPECT_EQ(render("{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(1, b=3) }} "
                   "{{ m(a=5) }}"),
            "1-2 1-3 5-2");
  EXPECT_EQ(
      render("{% macro rec(n) %}{% if n > 0 %}{{ n }}{{ rec(n - 1) }}{% endif %}{% endmacro %}"
             "{{ rec(5) }} {{ rec(3)|length }}"),
      "54321 3");
  EXPECT_EQ(render("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}body{% endcall %}"),
            "<body>");
  EXPECT_TRUE(fails("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "takes 1 arguments"));
}

TEST(Jinja, WhitespaceControlAsTheReference) {
  // trim_blocks and lstrip_blocks are on, as in @huggingface/jinja and transformers.
  EXPECT_EQ(render("  {% if true %}\n  yes\n  {% endif %}\nend"), "  yes\nend");
  EXPECT_EQ(render("{% for i in xs %}\n  {{ i }}\n{% endfor %}\n"), "  3\n  1\n  2\n");
  EXPECT_EQ(render("{%- if true -%}\n  a  \n{%- endif -%}\n  b"), "ab");
  EXPECT_EQ(render("text {# comment #} more {#- trimmed -#} end"), "text  moreend");
  EXPECT_EQ(render("a  {{- 'b' -}}  c"), "abc");
  EXPECT_EQ(render("line\n"), "line");  // one trailing newline is dropped
  EXPECT_EQ(render("{% generation %}x{% endgeneration %}"), "x");
}

TEST(Jinja, GlobalsAndErrors) {
  EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d') }}"), "1970-01-01");
  EXPECT_EQ(render("{{ raise_exception('Roles must alternate') }}"),
            "ERROR: chat template: Roles must alternate");
  EXPECT_TRUE(fails("{{ foo(1) }}", "'foo' is not callable"));
  // Positions: line and column of the failing expression.
  EXPECT_EQ(render("a\n  {{ xs|bogus }}"),
            "ERROR: chat template line 2, column 8: unknown filter 'bogus'");
  EXPECT_EQ(render("{% if true %}never closed"),
            "PARSE ERROR: chat template line 1, column 26: template ended inside a block: missing "
            "'{% endif %}'");
  EXPECT_EQ(render("{{ 1 + }}").substr(0, 41), "PARSE ERROR: chat template line 1, column");
  EXPECT_TRUE(fails("{% endfor %}", "no block to close"));
  EXPECT_TRUE(fails("{% frob %}", "unknown statement"));
  EXPECT_TRUE(fails("{{ 'open", "never closed"));
}

TEST(Jinja, RunawayTemplatesAreBounded) {
  EXPECT_TRUE(
      fails("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", "recursion too deep"));
  EXPECT_TRUE(fails("{% for i in range(100000000) %}{% endfor %}", "range() is too long"));
  {
    arc::ChatTemplateLimits small;
    small.max_output_bytes = 1u << 20;
    auto t = arc::ChatTemplate::parse(
        "{% set s = namespace(v='x') %}{% for i in range(40) %}{% set s.v = s.v ~ s.v %}{% endfor "
        "%}");
    ASSERT_TRUE(t.ok());
    auto r = t->render(json::object(), 0, small);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("MiB limit"), std::string::npos) << r.status().message();
    small.max_steps = 1000;
    auto loop = arc::ChatTemplate::parse(
        "{% for i in range(10) %}{% for j in range(1000) %}{% endfor %}{% endfor %}");
    ASSERT_TRUE(loop.ok());
    auto r2 = loop->render(json::object(), 0, small);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.status().message().find("step limit"), std::string::npos);
  }
  std::string deep(5000, '(');
  EXPECT_TRUE(fails("{{ " + deep + "1" + std::string(5000, ')') + " }}", "nested too deeply"));
  std::string nested;
  for (int i = 0; i < 2000; ++i) nested += "{% if true %}";
  EXPECT_TRUE(fails(nested, "nested too deeply"));
}

TEST(Jinja, GarbageNeverCrashes) {
  // Every prefix of a real template and a few byte soups: each must parse or fail cleanly.
  const std::string tpl =
      "{%- for m in messages %}{{ '<|' + m['role'] + '|>' }}{% if m.content is string %}"
      "{{ m.content|trim }}{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
      "{% endfor %}{{ x[1:-1:2] }}{# c #}{{ {'a': [1, 2]}|tojson(indent=2) }}";
  for (size_t n = 0; n <= tpl.size(); ++n) {
    auto t = arc::ChatTemplate::parse(tpl.substr(0, n));
    if (t.ok()) (void)t->render(ctx(), 0);
  }
  const char* soups[] = {"{{",
                         "{%",
                         "}}{{}}",
                         "{{ [ }}",
                         "{{ {{ }} }}",
                         "{% for %}",
                         "{{ a.b.c.d( }}",
                         "{% set %}",
                         "{{ 'a'|}}",
                         "{{ -- - 1 }}",
                         "\xff\xfe{{ '\xff' }}"};
  for (const char* s : soups) {
    auto t = arc::ChatTemplate::parse(s);
    if (t.ok()) (void)t->render(ctx(), 0);
  }
}

}  // namespace
