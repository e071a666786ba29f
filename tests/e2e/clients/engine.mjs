// Starting `arclight-engine serve` for the client tests: on a free port, with an API key; resolves
// once /health says ready. ARC_ENGINE_ARGS adds arguments (e.g. "--backend cuda": the cuda-emu
// preset runs these tests on the CUDA path).
import { spawn } from 'node:child_process';

export async function startEngine(bin, modelPath, { ctx = '2048', key }) {
  const proc = spawn(bin, ['--log-level', 'warn', 'serve', '--port', '0', '--model', modelPath, '--api-key', key,
                           '--threads', '2', '--ctx-size', String(ctx),
                           ...(process.env.ARC_ENGINE_ARGS || '').split(' ').filter(Boolean)],
                     { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`engine exited with ${code}`)));
  });
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${url}/health`).then((x) => x.json()).catch(() => ({}));
    if (r.status === 'ready') return { proc, url };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('engine did not become ready');
}
