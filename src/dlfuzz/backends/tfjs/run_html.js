// Runs a dlfuzz TF.js HTML reproducer headless: serves its folder on 127.0.0.1, opens it
// in Chromium (playwright-core, WebGL through SwiftShader), exits with window.dlfuzzExit.
//
// Usage: node run_html.js PAGE.html [--patch PATCH.js ...] [--tfjs-dir DIR] [--tools-dir DIR]
// The page's TF.js <script> (a CDN address) is answered from DIR's node_modules, so no
// network is needed. --patch applies a module `module.exports = function (tf) {...}`
// before the reproducer runs (dlfuzz's planted-bug tests).
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

function option(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const cache = process.env.DLFUZZ_CACHE || path.join(os.homedir(), '.cache', 'dlfuzz');
const page = path.resolve(process.argv[2]);
const patches = process.argv.flatMap((a, i) => (a === '--patch' ? [process.argv[i + 1]] : []));
const toolsDir = option('tools-dir', path.join(cache, 'tfjs', 'tools'));
const chromiumPath = process.env.DLFUZZ_CHROMIUM ||
  ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => fs.existsSync(p));

async function main() {
  const html = fs.readFileSync(page, 'utf8');
  const m = html.match(/@tensorflow\/tfjs@([^/]+)\/dist\/tf\.min\.js/);
  const tfjsDir = option('tfjs-dir', path.join(cache, 'tfjs', m ? m[1] : '4.22.0'));
  const tfFile = path.join(tfjsDir, 'node_modules', '@tensorflow', 'tfjs', 'dist', 'tf.min.js');
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { chromium } = require(path.join(toolsDir, 'node_modules', 'playwright-core'));
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true,
    args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--no-first-run', '--disable-dev-shm-usage'] });
  let code = 2;
  try {
    const tab = await browser.newPage();
    await tab.route('**/tf.min.js', (route) => route.fulfill({ path: tfFile, contentType: 'text/javascript' }));
    const hooks = patches.map((p) => `(tf) => { const module = { exports: null }; ${fs.readFileSync(p, 'utf8')}\n; module.exports(tf); }`);
    if (hooks.length) await tab.addInitScript(`window.dlfuzzHooks = [${hooks.join(', ')}];`);
    tab.on('console', (msg) => console.log(msg.text()));
    let broken = null;  // a script error in the page: it will never say its verdict
    tab.on('pageerror', (err) => { broken = err; console.log('page error: ' + err); });
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    const deadline = Date.now() + 120000;
    while (Date.now() < deadline && !broken) {
      const verdict = await tab.evaluate(() => window.dlfuzzExit);
      if (verdict !== undefined) { code = verdict; break; }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await browser.close();
    server.close();
  }
  process.exit(code);
}

main().catch((err) => { console.error(String(err && err.stack || err)); process.exit(2); });
