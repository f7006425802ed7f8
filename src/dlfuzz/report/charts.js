// dlfuzz report: draws the charts from the page's JSON block (#dlfuzz-data) with the
// Chart.js inlined before this script, and opens a bug's collapsed section when a link
// (or the address) names it.
//
// window.dlfuzzCharts ends as {id: {drawn: N}} per chart, N the elements drawn (bars,
// points), or {error: text}: the page check (page_check.js) reads it. Animation is off:
// a report is read, not watched, and a screenshot must show the final picture.
'use strict';
(function () {
  const STATUS_COLORS = {
    ok: '#4daf4a', exception: '#377eb8', crash: '#e41a1c', timeout: '#ff7f00',
    oom: '#984ea3', 'ok or exception': '#9ecae1',
  };
  const SEVERITY_COLORS = {
    crash: '#b2182b', 'wrong-result': '#d6604d', 'special-value': '#4393c3',
    inconsistency: '#f4a582', validation: '#92c5de', performance: '#999999',
  };

  function timeline(d) {
    const end = d.end;
    const steps = (rows) => [{ x: 0, y: 0 }, ...rows.map(([x, y]) => ({ x, y })),
      { x: end, y: rows.length }];
    return {
      type: 'line',
      data: {
        datasets: [
          { label: 'cases run', data: d.cases.map(([x, y]) => ({ x, y })), yAxisID: 'cases',
            borderColor: '#377eb8', backgroundColor: '#377eb8', pointRadius: 0 },
          { label: 'confirmed bugs', data: steps(d.confirmed), yAxisID: 'bugs', stepped: true,
            borderColor: '#e41a1c', backgroundColor: '#e41a1c', pointRadius: 2 },
          { label: 'bugs filed (confirmed, flaky, pending)', data: steps(d.filed),
            yAxisID: 'bugs', stepped: true, borderDash: [6, 4], borderColor: '#999',
            backgroundColor: '#999', pointRadius: 0 },
        ],
      },
      options: {
        scales: {
          x: { type: 'linear', min: 0, title: { display: true, text: 'fuzzing time (s)' } },
          cases: { type: 'linear', position: 'left', beginAtZero: true,
            title: { display: true, text: 'cases' } },
          bugs: { type: 'linear', position: 'right', beginAtZero: true,
            ticks: { precision: 0 }, grid: { drawOnChartArea: false },
            title: { display: true, text: 'bugs' } },
        },
      },
    };
  }

  function outcomes(d) {
    return {
      type: 'bar',
      data: {
        labels: d.backends,
        datasets: d.statuses.map((s) => ({ label: s, data: d.counts[s],
          backgroundColor: STATUS_COLORS[s] || '#666' })),
      },
      options: { scales: { x: { stacked: true },
        y: { stacked: true, beginAtZero: true, title: { display: true, text: 'cases' } } } },
    };
  }

  function severity(d) {
    return {
      type: 'bar',
      data: {
        labels: d.classes,
        datasets: [
          { label: 'confirmed', data: d.confirmed,
            backgroundColor: d.classes.map((c) => SEVERITY_COLORS[c] || '#666') },
          { label: 'flaky', data: d.flaky, backgroundColor: '#dddddd' },
        ],
      },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true,
        ticks: { precision: 0 }, title: { display: true, text: 'root causes' } } } },
    };
  }

  function apis(d) {
    const pct = (xs) => xs.map((x) => Math.round(x * 1000) / 10);
    return {
      type: 'bar',
      data: {
        labels: d.apis,
        datasets: [
          { label: 'valid rate (%)', data: pct(d.valid_rate), backgroundColor: '#4daf4a' },
          { label: 'yield (%)', data: pct(d.yield), backgroundColor: '#ff7f00' },
        ],
      },
      options: {
        indexAxis: 'y',
        scales: { x: { min: 0, max: 100, title: { display: true, text: '% of the API\'s cases' } } },
        plugins: { tooltip: { callbacks: {
          afterLabel: (item) => `${d.tried[item.dataIndex]} cases` } } },
      },
    };
  }

  const BUILDERS = { timeline, outcomes, severity, apis };

  function drawAll() {
    const state = {};
    window.dlfuzzCharts = state;
    const data = JSON.parse(document.getElementById('dlfuzz-data').textContent);
    Chart.defaults.animation = false;
    Chart.defaults.maintainAspectRatio = false;
    for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
      const id = canvas.dataset.chart;
      try {
        if (id === 'apis') {  // one row per API: the box grows with them
          canvas.parentElement.style.height = `${Math.max(160, 60 + 22 * data.apis.apis.length)}px`;
        }
        const chart = new Chart(canvas, BUILDERS[id](data[id]));
        let drawn = 0;
        chart.data.datasets.forEach((_, i) => {
          drawn += chart.getDatasetMeta(i).data.length;
        });
        state[id] = { drawn };
      } catch (err) {
        state[id] = { error: String(err) };
        console.error(`dlfuzz report: chart ${id} failed: ${err}`);
      }
    }
  }

  // A link to a bug (#ID) opens its collapsed section.
  function openTarget() {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (target && target.tagName === 'DETAILS') target.open = true;
  }

  window.addEventListener('hashchange', openTarget);
  drawAll();
  openTarget();
}());
