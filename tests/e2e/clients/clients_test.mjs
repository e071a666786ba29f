// The official client libraries (npm `openai`, `@anthropic-ai/sdk`), used as real clients use
// them, against `arclight-engine serve` on a generated model. Run by run_clients_test.sh.
import { spawn, spawnSync } from 'node:child_process';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const bin = process.env.ARC_ENGINE;
const model = path.join(os.tmpdir(), `arc_clients_${process.pid}.gguf`);
let server;
let baseUrl;
const key = 'test-key-123';

before(async () => {
  const made = spawnSync(bin, ['--log-level', 'warn', 'make-test-model', '--family', 'qwen3moe', '--out', model]);
  assert.equal(made.status, 0, String(made.stderr));
  server = spawn(bin, ['--log-level', 'warn', 'serve', '--port', '0', '--model', model, '--api-key', key,
                       '--threads', '2', '--ctx-size', '512',
                       // e.g. "--backend cuda" (the cuda-emu preset runs these tests on the CUDA path)
                       ...(process.env.ARC_ENGINE_ARGS || '').split(' ').filter(Boolean)],
                 { stdio: ['ignore', 'pipe', 'inherit'] });
  baseUrl = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`engine exited with ${code}`)));
  });
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${baseUrl}/health`).then((x) => x.json()).catch(() => ({}));
    if (r.status === 'ready') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('engine did not become ready');
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
