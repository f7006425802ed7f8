// dlfuzz TF.js webgl driver: one headless Chromium page running tfjs on WebGL (SwiftShader).
//
// Usage: node webgl_driver.js --tfjs-dir DIR --tools-dir DIR --fd-out N [--graph-js FILE]
// Speaks worker.js's protocol on stdin / fd N and relays each case into the page, which
// loads tfjs and core.js from a server on 127.0.0.1 (an ephemeral port, this process).
// Every case first checks tf.getBackend() === 'webgl' in the page: tfjs falls back to
// another backend silently, and such outputs must never pass for webgl results.
// $DLFUZZ_CHROMIUM overrides /usr/bin/chromium; $DLFUZZ_CHROMIUM_GPU_ARGS replaces the
// SwiftShader flags (tests use it to make WebGL unavailable on purpose).
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const { option, sender, readFrames } = require('./framing.js');

const tfjsDir = option('tfjs-dir');
const toolsDir = option('tools-dir');
const fdOut = Number(option('fd-out', '1'));
const graphJs = option('graph-js', '');
// Debian's /usr/bin/chromium is a shell wrapper (it breaks under some limits); the real
// binary is in /usr/lib/chromium.
const chromiumPath = process.env.DLFUZZ_CHROMIUM ||
  ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => fs.existsSync(p));
const GPU_ARGS = process.env.DLFUZZ_CHROMIUM_GPU_ARGS !== undefined
  ? process.env.DLFUZZ_CHROMIUM_GPU_ARGS.split(/\s+/).filter(Boolean)
  : ['--use-angle=swiftshader', '--enable-unsafe-swiftshader'];
const ARGS = [...GPU_ARGS, '--no-sandbox', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
  '--disable-dev-shm-usage'];

const FILES = {
  '/tf.min.js': path.join(tfjsDir, 'node_modules', '@tensorflow', 'tfjs', 'dist', 'tf.min.js'),
  '/core.js': path.join(__dirname, 'core.js'),
  '/grad.js': path.join(__dirname, 'grad.js'),
};
if (graphJs) FILES['/graph.js'] = graphJs;
const PAGE = '<!doctype html><meta charset="utf-8"><title>dlfuzz tfjs-webgl</title>' +
  '<script src="/tf.min.js"></script><script src="/grad.js"></script>' +
  '<script src="/core.js"></script>' +
  (graphJs ? '<script src="/graph.js"></script>' : '');

const send = sender(fdOut);

function serve() {
  const server = http.createServer((req, res) => {
    const url = req.url.split('?')[0];
    if (url === '/' || url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(PAGE);
    }
    const file = FILES[url];
    if (!file) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'content-type': 'text/javascript' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// Runs in the page: one request, outputs back as base64 (page.evaluate speaks JSON).
async function pageRun(arg) {
  const [header, b64] = arg;
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const fallback = () => ({ ok: false, error: { type: 'BackendFallback', stage: 'dlfuzz',
    crash: false, message: `tf.getBackend() is ${tf.getBackend()}, not webgl: not a webgl result` } });
  if (tf.getBackend() !== 'webgl') return fallback();
  let result;
  if (header.op === 'patch') {
    const mod = { exports: null };
    new Function('module', 'exports', header.source)(mod, {});
    mod.exports(tf);
    return { ok: true, outputs: [] };
  }
  const buildGraph = globalThis.buildGraph ||
    (globalThis.dlfuzzGraph && globalThis.dlfuzzGraph.buildGraph);
  if (header.op === 'graph') {
    result = await dlfuzzCore.runGraph(tf, buildGraph, header, bytes);
  } else if (header.op === 'train') {
    result = await dlfuzzCore.runTrain(tf, buildGraph, header, bytes);
  } else if (header.op === 'grad') {
    result = await dlfuzzCore.runGrad(tf, header, bytes);
  } else {
    result = await dlfuzzCore.runCall(tf, header, bytes);
  }
  if (tf.getBackend() !== 'webgl') return fallback();
  if (!result.ok) return result;
  const outputs = result.outputs.map((o) => {
    let s = '';
    for (let i = 0; i < o.bytes.length; i += 8192) {
      s += String.fromCharCode.apply(null, o.bytes.subarray(i, i + 8192));
    }
    return { dtype: o.dtype, shape: o.shape, nbytes: o.bytes.byteLength, b64: btoa(s) };
  });
  return { ok: true, outputs };
}

async function pageSetup() {
  const ok = await tf.setBackend('webgl');
  await tf.ready();
  let renderer = '';
  try {
    const gl = tf.backend().gpgpu.gl;
    const ext = gl.getExtension('WEBGL_debug_renderer_info');
    renderer = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  } catch (err) { renderer = ''; }
  return { ok, backend: tf.getBackend(), renderer, version: tf.version.tfjs };
}

let browser = null;

function quit(code) {
  const close = browser ? browser.close().catch(() => {}) : Promise.resolve();
  const timer = setTimeout(() => process.exit(code), 3000);
  close.then(() => { clearTimeout(timer); process.exit(code); });
}

async function main() {
  const { chromium } = require(path.join(toolsDir, 'node_modules', 'playwright-core'));
  const server = await serve();
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dlfuzz-chromium-'));
  process.on('exit', () => {
    try { fs.rmSync(userDir, { recursive: true, force: true }); } catch (err) { /* busy */ }
  });
  // The wrapper gives Chromium a parent-death signal: if this process is killed (a
  // timeout kills the worker's process group), the browser dies with it.
  const wrapper = path.join(userDir, 'chromium.sh');
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec setpriv --pdeathsig KILL ${chromiumPath} "$@"\n`, { mode: 0o755 });
  browser = await chromium.launchPersistentContext(path.join(userDir, 'profile'),
    { executablePath: wrapper, headless: true, args: ARGS });
  const page = browser.pages()[0] || await browser.newPage();
  const log = [];
  page.on('console', (m) => { if (log.length < 200) log.push(m.text()); process.stdout.write('[page] ' + m.text() + '\n'); });
  // A crashed page fails the evaluate in flight (its reply says crash); between cases
  // the process just exits, and the next request finds the reply pipe closed (a crash).
  let crashed = false;
  let inFlight = false;
  page.on('crash', () => { crashed = true; if (!inFlight) quit(71); });
  browser.on('close', () => process.exit(72));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  const info = await page.evaluate(pageSetup);
  if (!info.ok || info.backend !== 'webgl') {
    send({ ok: false, error: { type: 'BackendFallback', stage: 'setup', message:
      `WebGL is not available: tf.setBackend('webgl') gave ${info.ok}, tf.getBackend() is ${info.backend}` } }, Buffer.alloc(0));
    return quit(2);
  }
  send({ ok: true, ready: true, version: info.version, backend: info.backend, renderer: info.renderer }, Buffer.alloc(0));

  let busy = Promise.resolve();
  const handle = async (header, body) => {
    if (header.op === 'patch') {
      header = { op: 'patch', source: fs.readFileSync(header.path, 'utf8') };
    }
    let result;
    inFlight = true;
    try {
      result = await page.evaluate(pageRun, [header, body.toString('base64')]);
    } catch (err) {
      const crash = crashed || /crash|closed|disconnected/i.test(String(err.message));
      result = { ok: false, error: { type: 'PageError', stage: 'call', crash, message: String(err.message).slice(0, 4000) } };
    }
    inFlight = false;
    if (crashed) {
      send({ ok: false, error: { type: 'PageCrash', stage: 'call', crash: true, message: 'the page crashed' } }, Buffer.alloc(0));
      return quit(71);
    }
    if (!result.ok) return send(result, Buffer.alloc(0));
    const blobs = result.outputs.map((o) => Buffer.from(o.b64, 'base64'));
    send({ ok: true, outputs: result.outputs.map(({ dtype, shape, nbytes }) => ({ dtype, shape, nbytes })) }, Buffer.concat(blobs));
  };
  readFrames((header, body) => {
    busy = busy.then(() => handle(header, body)).then((r) => r, (err) => {
      send({ ok: false, error: { type: 'DriverError', stage: 'dlfuzz', message: String(err) } }, Buffer.alloc(0));
    });
  }, () => busy.then(() => quit(0)));
}

main().catch((err) => {
  send({ ok: false, error: { type: (err && err.name) || 'Error', stage: 'setup', message: String(err && err.stack || err).slice(0, 4000) } }, Buffer.alloc(0));
  quit(2);
});
