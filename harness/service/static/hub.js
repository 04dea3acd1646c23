// Galapagos hub: the only script of the pages (no inline script; the CSP forbids it).
// Everything written into the page goes through textContent: run data is text, never HTML.
"use strict";

function fmt(v) {
  if (v === null || v === undefined) return "-";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : Number(v.toPrecision(6)).toString();
  return String(v);
}

function setText(id, value) {
  const el = document.getElementById(id);
  if (el) el.textContent = value;
}

function whenPlotly(fn) {
  if (window.Plotly) { fn(); return; }
  window.addEventListener("load", () => { if (window.Plotly) fn(); });
}

function stepCurve(history) {
  const x = [], y = [];
  for (const [it, best] of history) { if (best !== null) { x.push(it); y.push(best); } }
  return { x, y };
}

function drawCurve(el, history) {
  const c = stepCurve(history);
  window.Plotly.react(el, [{ x: c.x, y: c.y, mode: "lines+markers", line: { shape: "hv", color: "#16806b" }, name: "best so far" }],
    { margin: { t: 10, r: 10, b: 40, l: 60 }, xaxis: { title: { text: "iteration" } }, yaxis: { title: { text: "best score" } } },
    { displaylogo: false, responsive: true });
}

// Run page: the live feed (server-sent events) and the best-so-far curve.
function runPage() {
  const root = document.getElementById("run");
  if (!root) return;
  const runId = root.dataset.run;
  const curve = document.getElementById("curve");
  const events = document.getElementById("events");
  fetch(curve.dataset.src, { credentials: "same-origin" }).then(r => r.json()).then(data => {
    whenPlotly(() => drawCurve(curve, data.best_so_far));
  });
  if (root.dataset.active !== "yes") return;
  const after = events ? events.dataset.last : "-1";
  const source = new EventSource(`/api/v1/runs/${encodeURIComponent(runId)}/stream?after=${after}`);
  source.addEventListener("event", (msg) => {
    const e = JSON.parse(msg.data);
    if (!events) return;
    const li = document.createElement("li");
    const seq = document.createElement("span"); seq.className = "mono"; seq.textContent = `#${e.seq} `;
    const kind = document.createElement("b"); kind.textContent = e.kind;
    const rest = document.createElement("span"); rest.className = "small"; rest.textContent = ` it ${e.iteration} ${JSON.stringify(e.payload)}`;
    li.append(seq, kind, rest);
    events.appendChild(li);
    events.scrollTop = events.scrollHeight;
  });
  source.addEventListener("progress", (msg) => {
    const p = JSON.parse(msg.data);
    setText("status", p.status);
    const status = document.getElementById("status");
    if (status) status.className = `status s-${p.status}`;
    setText("iterations", p.iterations_done);
    setText("best", fmt(p.best_score));
    setText("seed-score", fmt(p.seed_score));
    setText("tokens", p.tokens);
    setText("cost", Number(p.cost).toFixed(4));
    const best = document.getElementById("best-link");
    if (best && p.best_program_id) {
      best.textContent = p.best_program_id;
      if (best.tagName === "A") best.href = `/runs/${encodeURIComponent(runId)}/programs/${encodeURIComponent(p.best_program_id)}`;
    }
    whenPlotly(() => drawCurve(curve, p.history));
    fillUsage(p.usage_by_model || []);
    if (p.program_count !== undefined && String(p.program_count) !== shownCount) {
      shownCount = String(p.program_count);
      refreshPopulation(runId, shownCount);
    }
  });
  source.addEventListener("end", (msg) => {
    source.close();
    setText("live-note", `Run ended: ${JSON.parse(msg.data).status}.`);
    root.dataset.active = "no";
    refreshPopulation(runId, null);
  });
  let shownCount = (document.getElementById("program-count") || {}).textContent;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  if (text instanceof Node) td.appendChild(text); else td.textContent = text;
  tr.appendChild(td);
}

// The population table (best first, as rendered by the server), refreshed while the run
// grows; at most one request in flight, the newest count wins.
let populationBusy = false, populationAgain = false;
function refreshPopulation(runId, count) {
  if (populationBusy) { populationAgain = true; return; }
  populationBusy = true;
  const body = document.querySelector("#population tbody");
  fetch(`/api/v1/runs/${encodeURIComponent(runId)}/programs?order=score&limit=50`, { credentials: "same-origin" })
    .then(r => r.ok ? r.json() : Promise.reject(r.status))
    .then(programs => {
      if (!body) return;
      const rows = programs.map(pr => {
        const tr = document.createElement("tr");
        const a = document.createElement("a");
        a.href = `/runs/${encodeURIComponent(runId)}/programs/${encodeURIComponent(pr.id)}`;
        a.textContent = pr.id;
        cell(tr, a, "mono"); cell(tr, String(pr.iteration)); cell(tr, pr.parent_id || "-", "mono");
        cell(tr, fmt(pr.score), "num");
        cell(tr, Object.entries(pr.metrics).slice(0, 4).map(([k, v]) => `${k}=${fmt(v)}`).join(" "), "small");
        return tr;
      });
      body.replaceChildren(...rows);
      if (count !== null) setText("program-count", count);
    })
    .catch(() => {})
    .finally(() => {
      populationBusy = false;
      if (populationAgain) { populationAgain = false; refreshPopulation(runId, null); }
    });
}

function fillUsage(models) {
  const body = document.querySelector("#usage tbody");
  if (!body || models.length === 0) return;
  body.replaceChildren(...models.map(m => {
    const tr = document.createElement("tr");
    cell(tr, m.model); cell(tr, String(m.calls), "num"); cell(tr, String(m.ok), "num");
    cell(tr, String(m.prompt_tokens || 0), "num"); cell(tr, String(m.completion_tokens || 0), "num");
    cell(tr, Number(m.cost || 0).toFixed(4), "num");
    return tr;
  }));
}

// Lineage: score against iteration with parent→child edges (no force layout).
function lineagePage() {
  const el = document.getElementById("lineage");
  if (!el) return;
  fetch(el.dataset.src, { credentials: "same-origin" }).then(r => r.json()).then(data => whenPlotly(() => {
    const byId = new Map(data.nodes.map(n => [n.id, n]));
    const ex = [], ey = [];
    for (const n of data.nodes) {
      const p = n.parent_id ? byId.get(n.parent_id) : null;
      if (p && p.score !== null && n.score !== null) { ex.push(p.iteration, n.iteration, null); ey.push(p.score, n.score, null); }
    }
    const pts = data.nodes.filter(n => n.score !== null);
    const big = pts.length > 1000;
    const edges = { x: ex, y: ey, mode: "lines", type: big ? "scattergl" : "scatter", line: { color: "#b8c8c4", width: 1 }, hoverinfo: "skip", name: "parent → child" };
    const nodes = { x: pts.map(n => n.iteration), y: pts.map(n => n.score), customdata: pts.map(n => n.id), text: pts.map(n => n.id),
      mode: "markers", type: big ? "scattergl" : "scatter", name: "program",
      marker: { size: pts.map(n => n.best ? 14 : 8), color: pts.map(n => n.best ? "#d9480f" : "#16806b") },
      hovertemplate: "%{text}<br>iteration %{x}<br>score %{y}<extra></extra>" };
    window.Plotly.newPlot(el, [edges, nodes], { margin: { t: 10, r: 10, b: 40, l: 60 }, xaxis: { title: { text: "iteration" } }, yaxis: { title: { text: "score" } }, showlegend: false },
      { displaylogo: false, responsive: true });
    el.on("plotly_click", (ev) => {
      const id = ev.points[0] && ev.points[0].customdata;
      if (id) window.location.href = `/runs/${encodeURIComponent(el.dataset.run)}/programs/${encodeURIComponent(id)}`;
    });
  }));
}

function comparePage() {
  const el = document.getElementById("compare");
  if (!el) return;
  const series = JSON.parse(el.dataset.series), names = JSON.parse(el.dataset.names), labels = JSON.parse(el.dataset.labels);
  whenPlotly(() => {
    const traces = series.map((h, i) => { const c = stepCurve(h); return { x: c.x, y: c.y, mode: "lines", line: { shape: "hv" }, name: `${labels[i]} ${names[i]}` }; });
    window.Plotly.newPlot(el, traces, { margin: { t: 10, r: 10, b: 40, l: 60 }, xaxis: { title: { text: "iteration" } }, yaxis: { title: { text: "best score" } } }, { displaylogo: false, responsive: true });
  });
}

// Playground: the block selects matter only when composing.
function playground() {
  const compose = document.getElementById("compose");
  if (!compose) return;
  const radios = document.querySelectorAll("input[name=mode]");
  const update = () => {
    const on = document.getElementById("mode-compose").checked;
    compose.style.display = on ? "" : "none";
    document.getElementById("scaffold").disabled = on;
  };
  radios.forEach(r => r.addEventListener("change", update));
  update();
}

document.addEventListener("DOMContentLoaded", () => { runPage(); lineagePage(); comparePage(); playground(); });
