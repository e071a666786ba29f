// The tool-call syntaxes of the newer families through `arclight-engine serve` and the official
// clients. Each model is generated (random weights, sampled at temperature 1) with a real
// vocabulary and a family's real chat template (tests/data/chat_templates): a forced call is
// valid only because the engine constrains it in the family's own syntax and parses it back.
// - GLM-4.6 and Qwen3-Coder templates on the real qwen3 vocabulary (their own tokenizers are not
//   among the fixtures; their markers are plain text there, several tokens each).
// - gpt-oss: its template on its real vocabulary (the Harmony markers are control tokens).
// - MiniMax-M2: its template opens <think> in every generation prompt; a random model never
//   closes it, so the reply must arrive as reasoning in both APIs, and forced calls follow a
//   reasoning budget. The GLM and MiniMax cases also run on models of their own families.
// Run by run_clients_test.sh with ARC_FIXTURES (the shared fixtures) and ARC_TEMPLATES
// (tests/data/chat_templates).
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startEngine as startEngineWith } from './engine.mjs';

const bin = process.env.ARC_ENGINE;
const fixtures = process.env.ARC_FIXTURES || '';
const templates = process.env.ARC_TEMPLATES || '';
const key = 'test-key-123';
const haveFixtures = fixtures !== '' && templates !== '' &&
  fs.existsSync(path.join(fixtures, 'tokenizers', 'qwen3', 'tokenizer.json'));

function startEngine(modelPath) {
  return startEngineWith(bin, modelPath, { ctx: '2048', key });
}

// A test model (qwen3moe unless named) with a real vocabulary and a family's real template.
async function withModel(tokenizer, template, body, family = 'qwen3moe') {
  const file = path.join(os.tmpdir(), `arc_syntax_${template}_${process.pid}.gguf`);
  const made = spawnSync(bin, ['--log-level', 'warn', 'make-test-model', '--family', family,
                               '--tokenizer-fixture', tokenizer, '--fixtures-dir', fixtures,
                               '--chat-template', path.join(templates, template, 'chat_template.jinja'),
                               '--out', file]);
  assert.equal(made.status, 0, String(made.stderr));
  const { proc, url } = await startEngine(file);
  try {
    await body(url);
  } finally {
    proc.kill('SIGTERM');
    fs.rmSync(file, { force: true });
  }
}

// city: bare text of at most 10 characters; days: an integer (typed by the schema: the XML
// formats write it as text); unit: one of two words.
const weather = {
  type: 'object',
  properties: {
    city: { type: 'string', maxLength: 10 },
    days: { type: 'integer' },
    unit: { enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
};
const isWeather = (a) => typeof a.city === 'string' && [...a.city].length <= 10 && Number.isInteger(a.days) &&
  (a.unit === 'celsius' || a.unit === 'fahrenheit') && Object.keys(a).length === 3;

// extra: request fields added in each API ({ openai, anthropic }); reasoning: the (seeded)
// OpenAI reply must carry reasoning before the call (a template that opens <think> in every
// generation prompt; Anthropic requests take no seed, and a random model's reasoning may be
// only layout, which is dropped).
async function checkForcedCalls(url, syntax, extra = {}, reasoning = false) {
  const status = await fetch(`${url}/engine/status`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json());
  assert.equal(status.model.tool_call_syntax, syntax);

  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
  // (gpt-oss's template needs every tool's description; get_time takes no arguments: with extra
  // properties allowed, a random model writes a key forever.)
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', strict: true, parameters: weather } },
                 { type: 'function', function: { name: 'get_time', description: 'Time', parameters: { type: 'object', properties: {}, additionalProperties: false } } }];
  const base = {
    model: 'any', temperature: 1, max_tokens: 300, tools, reasoning_effort: 'low',
    messages: [{ role: 'user', content: 'Weather in Oslo for three days?' }],
    chat_template_kwargs: { enable_thinking: false },
    ...(extra.openai ?? {}),
  };
  const forced = { type: 'function', function: { name: 'get_weather' } };
  for (let i = 0; i < 2; i++) {
    const r = await openai.chat.completions.create({ ...base, seed: i, tool_choice: forced });
    assert.equal(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r.choices[0].message));
    const call = r.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_weather');
    assert.ok(isWeather(JSON.parse(call.function.arguments)), call.function.arguments);
    if (reasoning) assert.ok(r.choices[0].message.reasoning_content.length > 0, JSON.stringify(r.choices[0].message));
    const s = openai.beta.chat.completions.stream({ ...base, seed: 100 + i, tool_choice: 'required' });
    const final = await s.finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    const streamed = final.choices[0].message.tool_calls[0];
    assert.ok(['get_weather', 'get_time'].includes(streamed.function.name));
    const args = JSON.parse(streamed.function.arguments);
    if (streamed.function.name === 'get_weather') assert.ok(isWeather(args), streamed.function.arguments);
  }

  const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
  const params = {
    model: 'any', max_tokens: 300, temperature: 1,
    messages: [{ role: 'user', content: 'Weather in Oslo for three days?' }],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: weather }],
    output_config: { effort: 'high' },
    ...(extra.anthropic ?? {}),
  };
  for (const tool_choice of [{ type: 'tool', name: 'get_weather' }, { type: 'any' }]) {
    const msg = await anthropic.messages.create({ ...params, tool_choice });
    assert.equal(msg.stop_reason, 'tool_use', JSON.stringify(msg.content));
    const use = msg.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_weather');
    assert.ok(isWeather(use.input), JSON.stringify(use.input));
    const final = await anthropic.messages.stream({ ...params, tool_choice }).finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.ok(isWeather(final.content.find((b) => b.type === 'tool_use').input));
  }
}

test('GLM-4.6 template: forced calls in <tool_call>/<arg_key> form, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('qwen3', 'glm46', (url) => checkForcedCalls(url, 'glm-4.5'));
});

test('glm4moe model with the GLM-4.6 template: forced calls, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('qwen3', 'glm46', (url) => checkForcedCalls(url, 'glm-4.5'), 'glm4moe');
});

// The MiniMax-M2 template opens <think> in every generation prompt and a random model never
// closes it: a reasoning budget (llama-server's thinking_budget_tokens, Anthropic's
// thinking.budget_tokens) makes the engine close it after 8 tokens, then the forced call follows.
test('minimax-m2 model with its template: forced <minimax:tool_call> calls after a reasoning budget, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('qwen3', 'minimax_m2', (url) => checkForcedCalls(url, 'minimax-m2', {
    openai: { thinking_budget_tokens: 8 },
    anthropic: { thinking: { type: 'enabled', budget_tokens: 8 } },
  }, true), 'minimax-m2');
});

test('Qwen3-Coder template: forced calls in <function=...> form, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('qwen3', 'qwen3_coder', (url) => checkForcedCalls(url, 'qwen3-coder'));
});

test('gpt-oss template and vocabulary: forced Harmony calls, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('gptoss', 'gptoss', (url) => checkForcedCalls(url, 'harmony'));
});

test('MiniMax-M2 template: the reply after the opened <think> is reasoning, both APIs', { skip: !haveFixtures && 'no fixtures' }, async () => {
  await withModel('qwen3', 'minimax_m2', async (url) => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
    // No tools: the reply is still read in MiniMax's syntax (its reasoning is marked by it). With
    // this template's tool prompt the generated model only repeats a newline (layout, dropped).
    const base = { model: 'any', temperature: 0, max_tokens: 12, messages: [{ role: 'user', content: 'Hi' }] };
    const r = await openai.chat.completions.create(base);
    const m = r.choices[0].message;
    assert.ok(m.reasoning_content.length > 0, JSON.stringify(m));
    let streamed = '';
    for await (const chunk of await openai.chat.completions.create({ ...base, stream: true })) {
      for (const c of chunk.choices) streamed += c.delta?.reasoning_content ?? '';
    }
    assert.equal(streamed, m.reasoning_content);
    const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
    const msg = await anthropic.messages.create({ model: 'any', max_tokens: 12, temperature: 0,
                                                  messages: [{ role: 'user', content: 'Hi' }] });
    const thinking = msg.content.find((b) => b.type === 'thinking');
    assert.ok(thinking && thinking.thinking.length > 0, JSON.stringify(msg.content));
  });
});
