// Opens a dlfuzz HTML report in headless Chromium (playwright-core), offline, and prints
// what a reader would see as one JSON object on stdout:
//   consoleErrors, pageErrors: what the page logged as errors or threw;
//   blocked: every request for something other than the report file (all refused: the
//     report must need no network);
//   charts: per chart, the canvas's size, Chart.js's count of drawn elements, and the
//     coloured pixels inside the plot area (grid and labels are grey, data is not);
//   diffMarks: highlighted output values in unfolded bug sections, how many of them have
//     a visible box, and marks: {bug, column} of each (column: its backend's header);
//   openBugs: the unfolded bug sections; loadMs: from navigation to the load event;
//   screenshot: the PNG written (--screenshot), the page as a reader first sees it.
//
// Usage: node page_check.js REPORT.html --tools-dir DIR [--screenshot OUT.png]
// $DLFUZZ_CHROMIUM overrides the Chromium binary (as for the tfjs-webgl backend).
'use strict';
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

function option(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const page = path.resolve(process.argv[2]);
const toolsDir = option('tools-dir');
const screenshot = option('screenshot', '');
const chromiumPath = process.env.DLFUZZ_CHROMIUM ||
  ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => fs.existsSync(p));
// Tall reports (hundreds of bugs) are cut here: the screenshot is the top of the page.
const MAX_SHOT_HEIGHT = 6000;

// Runs in the page: measures each chart and the highlighted values.
function measure() {
  const charts = {};
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    const id = canvas.dataset.chart;
    const state = (window.dlfuzzCharts || {})[id] || {};
    const chart = window.Chart && Chart.getChart(canvas);
    let colored = 0;
    if (chart && chart.chartArea && canvas.width > 0 && canvas.height > 0) {
      const scale = canvas.width / canvas.clientWidth;
      const a = chart.chartArea;
      const x = Math.floor(a.left * scale);
      const y = Math.floor(a.top * scale);
      const w = Math.max(1, Math.floor((a.right - a.left) * scale));
      const h = Math.max(1, Math.floor((a.bottom - a.top) * scale));
      const px = canvas.getContext('2d').getImageData(x, y, w, h).data;
      for (let i = 0; i < px.length; i += 4) {
        const [r, g, b, alpha] = [px[i], px[i + 1], px[i + 2], px[i + 3]];
        if (alpha > 100 && Math.max(r, g, b) - Math.min(r, g, b) > 40) colored++;
      }
    }
    charts[id] = { width: canvas.clientWidth, height: canvas.clientHeight,
      drawn: state.drawn || 0, error: state.error || null, colored };
  }
  const marks = [...document.querySelectorAll('details.bug[open] mark.diff')];
  const visible = marks.filter((m) => {
    const box = m.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  });
  // Which backend's column each mark is in: the header cell above its cell.
  const where = marks.map((m) => {
    const cell = m.closest('td');
    const table = m.closest('table');
    const header = table.rows[0].cells[cell.cellIndex];
    return { bug: m.closest('details.bug').id, column: header ? header.textContent : '' };
  });
  return {
    charts,
    marks: where,
    diffMarks: marks.length,
    visibleDiffMarks: visible.length,
    openBugs: [...document.querySelectorAll('details.bug[open]')].map((d) => d.id),
    height: document.documentElement.scrollHeight,
    loadMs: Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd),
  };
}

async function main() {
  const { chromium } = require(path.join(toolsDir, 'node_modules', 'playwright-core'));
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'] });
  const result = { consoleErrors: [], pageErrors: [], blocked: [] };
  try {
    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const url = pathToFileURL(page).href;
    await tab.route('**/*', (route) => {
      const asked = route.request().url();
      if (asked === url) return route.continue();
      result.blocked.push(asked);
      return route.abort();
    });
    tab.on('console', (msg) => {
      if (msg.type() === 'error') result.consoleErrors.push(msg.text());
    });
    tab.on('pageerror', (err) => result.pageErrors.push(String(err)));
    await tab.goto(url, { waitUntil: 'load' });
    await tab.waitForFunction(() => window.dlfuzzCharts !== undefined, null, { timeout: 30000 })
      .catch(() => {});
    Object.assign(result, await tab.evaluate(measure));
    if (screenshot) {
      const height = Math.min(result.height, MAX_SHOT_HEIGHT);
      await tab.screenshot({ path: screenshot, fullPage: true,
        clip: { x: 0, y: 0, width: 1400, height } });
      result.screenshot = screenshot;
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err) => { console.error(String(err && err.stack || err)); process.exit(2); });
