// The official client libraries (npm `openai`, `@anthropic-ai/sdk`), used as real clients use
// them, against `arclight-engine serve` on a generated model. Run by run_clients_test.sh.
import { spawnSync } from 'node:child_process';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startEngine as startEngineWith } from './engine.mjs';

const bin = process.env.ARC_ENGINE;
const model = path.join(os.tmpdir(), `arc_clients_${process.pid}.gguf`);
let server;
let baseUrl;
const key = 'test-key-123';

// Starts `arclight-engine serve` on a model; resolves once it is ready.
function startEngine(modelPath, ctx) {
  return startEngineWith(bin, modelPath, { ctx, key });
}

before(async () => {
  const made = spawnSync(bin, ['--log-level', 'warn', 'make-test-model', '--family', 'qwen3moe', '--out', model]);
  assert.equal(made.status, 0, String(made.stderr));
  ({ proc: server, url: baseUrl } = await startEngine(model, '512'));
});

after(() => {
  server?.kill('SIGTERM');
  fs.rmSync(model, { force: true });
});

const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];

test('openai: chat, non-streaming and streaming agree under greedy', async () => {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key });
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }];
  const whole = await client.chat.completions.create({ model: 'any', messages, max_tokens: 10, temperature: 0 });
  assert.equal(whole.object, 'chat.completion');
  assert.ok(whole.usage.completion_tokens > 0);
  const text = whole.choices[0].message.content;
  const stream = await client.chat.completions.create({
    model: 'any', messages, max_tokens: 10, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let streamed = '';
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) streamed += c.delta?.content ?? '';
  }
  assert.equal(streamed, text);
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
});

test('openai: tools are accepted, models listed, errors typed', async () => {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key, maxRetries: 0 });
  const r = await client.chat.completions.create({
    model: 'any', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools, max_tokens: 8, temperature: 0,
  });
  assert.ok(['stop', 'length', 'tool_calls'].includes(r.choices[0].finish_reason));
  const models = await client.models.list();
  assert.equal(models.data.length, 1);
  await assert.rejects(
    client.chat.completions.create({ model: 'any', messages: [], max_tokens: 4 }),
    (e) => e instanceof OpenAI.BadRequestError && /at least one message/.test(e.message));
  const wrong = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
  const c = await client.completions.create({ model: 'any', prompt: 'abc', max_tokens: 4, temperature: 0 });
  assert.equal(c.object, 'text_completion');
});

test('anthropic: messages, non-streaming and streaming, with tools', async () => {
  const client = new Anthropic({ baseURL: baseUrl, apiKey: key, maxRetries: 0 });
  const params = {
    model: 'any', max_tokens: 10, temperature: 0, system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello there' }],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  };
  const msg = await client.messages.create(params);
  assert.equal(msg.type, 'message');
  assert.ok(msg.usage.output_tokens > 0);
  const text = msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  const stream = client.messages.stream(params);
  let streamed = '';
  stream.on('text', (t) => { streamed += t; });
  const final = await stream.finalMessage();
  assert.equal(streamed, text);
  assert.equal(final.stop_reason, msg.stop_reason);
  const counted = await client.messages.countTokens({ model: 'any', messages: params.messages, system: params.system });
  assert.ok(counted.input_tokens > 0);
  await assert.rejects(
    client.messages.create({ model: 'any', max_tokens: 4, messages: [{ role: 'system', content: 'x' }] }),
    (e) => e instanceof Anthropic.BadRequestError);
});

// Structured output with the official client's own helpers (beta.chat.completions.parse and
// .stream parse the content and strict tool arguments). A generated model with the real qwen3
// vocabulary and chat template (its tool-call syntax), sampled at temperature 1: the output is
// valid only because the engine constrains it.
const fixtures = process.env.ARC_FIXTURES || '';
const haveFixtures = fixtures !== '' && fs.existsSync(path.join(fixtures, 'tokenizers', 'qwen3', 'tokenizer.json'));

test('openai: response_format json_schema and strict tools, streaming and not', { skip: !haveFixtures && 'no shared fixtures' }, async () => {
  const qwenModel = path.join(os.tmpdir(), `arc_clients_q3_${process.pid}.gguf`);
  const made = spawnSync(bin, ['--log-level', 'warn', 'make-test-model', '--family', 'qwen3moe',
                               '--tokenizer-fixture', 'qwen3', '--fixtures-dir', fixtures, '--out', qwenModel]);
  assert.equal(made.status, 0, String(made.stderr));
  const { proc, url } = await startEngine(qwenModel, '2048');
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
    const person = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 12 },
        age: { type: 'integer' },
        tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 2 },
      },
      required: ['name', 'age', 'tags'],
      additionalProperties: false,
    };
    const isPerson = (p) => typeof p.name === 'string' && [...p.name].length <= 12 && Number.isInteger(p.age) &&
      Array.isArray(p.tags) && p.tags.length <= 2 && p.tags.every((t) => t === 'a' || t === 'b') &&
      Object.keys(p).sort().join() === 'age,name,tags';
    const base = {
      model: 'any', temperature: 1, max_tokens: 400,
      messages: [{ role: 'user', content: 'Describe someone.' }],
      chat_template_kwargs: { enable_thinking: false },
    };
    const response_format = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: person } };
    for (let i = 0; i < 3; i++) {
      const r = await client.beta.chat.completions.parse({ ...base, seed: i, response_format });
      assert.equal(r.choices[0].finish_reason, 'stop');
      assert.ok(isPerson(r.choices[0].message.parsed), r.choices[0].message.content);
      const s = client.beta.chat.completions.stream({ ...base, seed: 100 + i, response_format });
      const final = await s.finalChatCompletion();
      // The stream helper auto-parses only zod formats: the content itself must parse.
      assert.equal(final.choices[0].finish_reason, 'stop');
      assert.ok(isPerson(JSON.parse(final.choices[0].message.content)), final.choices[0].message.content);
    }

    const weather = {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 10 }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    };
    const tools = [{ type: 'function', function: { name: 'get_weather', strict: true, parameters: weather } }];
    const isWeather = (a) => typeof a.city === 'string' && [...a.city].length <= 10 &&
      (a.unit === 'celsius' || a.unit === 'fahrenheit') && Object.keys(a).length === 2;
    const forced = { type: 'function', function: { name: 'get_weather' } };
    for (let i = 0; i < 3; i++) {
      const params = { ...base, seed: i, tools, tool_choice: i % 2 ? 'required' : forced };
      const r = await client.beta.chat.completions.parse(params);
      assert.equal(r.choices[0].finish_reason, 'tool_calls');
      const call = r.choices[0].message.tool_calls[0];
      assert.equal(call.function.name, 'get_weather');
      assert.ok(isWeather(call.function.parsed_arguments), call.function.arguments);
      const s = client.beta.chat.completions.stream({ ...params, seed: 100 + i });
      const final = await s.finalChatCompletion();
      const streamedCall = final.choices[0].message.tool_calls[0];
      assert.equal(final.choices[0].finish_reason, 'tool_calls');
      assert.ok(isWeather(JSON.parse(streamedCall.function.arguments)), streamedCall.function.arguments);
    }
    await assert.rejects(
      client.chat.completions.create({ ...base, response_format: { type: 'json_schema', json_schema: {
        name: 'x', schema: { type: 'object', properties: { n: { type: 'number', minimum: 1 } } } } } }),
      (e) => e instanceof OpenAI.BadRequestError && /'minimum'/.test(e.message));
  } finally {
    proc.kill('SIGTERM');
    fs.rmSync(qwenModel, { force: true });
  }
});
