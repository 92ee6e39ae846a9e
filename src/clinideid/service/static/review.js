// clinideid review page: plain JavaScript, no build step. Talks to /v1/review with the reviewer's token.
"use strict";
const state = { docs: [], doc: null, spans: [], selected: -1, labels: [], categories: {} };
const $ = (id) => document.getElementById(id);

function setStatus(msg) { $("status").textContent = msg; }
function reviewer() { return $("reviewer").value.trim(); }

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const token = $("token").value.trim();
  if (token) headers["Authorization"] = "Bearer " + token;
  if (options.json !== undefined) { headers["Content-Type"] = "application/json"; options.body = JSON.stringify(options.json); }
  const res = await fetch(path, Object.assign({}, options, { headers }));
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail; } catch (e) { /* not JSON */ }
    throw new Error(res.status + ": " + (typeof detail === "string" ? detail : JSON.stringify(detail)));
  }
  return res;
}

async function loadLabels() {
  const data = await (await api("/v1/review/labels")).json();
  state.labels = data.labels.map((l) => l.label);
  data.labels.forEach((l) => { state.categories[l.label] = l.category; });
  $("label-select").innerHTML = state.labels.map((l) => `<option>${l}</option>`).join("");
}

async function loadDocuments() {
  const data = await (await api("/v1/review/documents")).json();
  state.docs = data.documents;
  const list = $("doc-list");
  list.innerHTML = "";
  for (const d of state.docs) {
    const li = document.createElement("li");
    li.dataset.id = d.id;
    li.textContent = d.display_id;
    const st = document.createElement("span");
    st.className = "st";
    st.textContent = `${d.language} · ${d.detected} spans · ${d.status}` + (d.reviewers.length ? ` (${d.reviewers.join(", ")})` : "");
    li.appendChild(st);
    li.addEventListener("click", () => openDocument(d.id));
    if (state.doc && state.doc.id === d.id) li.classList.add("current");
    list.appendChild(li);
  }
  setStatus(`${state.docs.length} documents`);
}

async function openDocument(id) {
  const who = encodeURIComponent(reviewer());
  state.doc = await (await api(`/v1/review/documents/${id}?reviewer=${who}`)).json();
  state.spans = state.doc.spans;
  state.selected = state.spans.length ? 0 : -1;
  $("doc-title").textContent = `${state.doc.display_id} (${state.doc.language})`;
  $("preview").textContent = "";
  render();
  document.querySelectorAll("#doc-list li").forEach((li) => li.classList.toggle("current", Number(li.dataset.id) === id));
}

function category(label) { return state.categories[label] || "OTHER"; }

function render() {
  const text = state.doc.text;
  const box = $("text");
  box.innerHTML = "";
  let cursor = 0;
  // spans may overlap (an added span over a detected one): show the first, skip what it covers
  state.spans.forEach((sp, i) => {
    if (sp.start < cursor) return;
    box.appendChild(document.createTextNode(text.slice(cursor, sp.start)));
    const el = document.createElement("span");
    el.className = `phi cat-${category(sp.label)} ${sp.status}` + (i === state.selected ? " selected" : "");
    el.dataset.index = i; el.dataset.start = sp.start; el.dataset.end = sp.end;
    el.dataset.label = sp.label; el.dataset.source = sp.source; el.dataset.status = sp.status;
    el.title = `${sp.label} from ${sp.source} (${sp.status})`;
    el.textContent = text.slice(sp.start, sp.end);
    el.addEventListener("click", () => { state.selected = i; render(); });
    box.appendChild(el);
    cursor = sp.end;
  });
  box.appendChild(document.createTextNode(text.slice(cursor)));
  const body = document.querySelector("#span-table tbody");
  body.innerHTML = "";
  state.spans.forEach((sp, i) => {
    const tr = document.createElement("tr");
    if (i === state.selected) tr.className = "selected";
    for (const v of [`${sp.start}-${sp.end}`, sp.label, sp.source, sp.status]) {
      const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
    }
    tr.addEventListener("click", () => { state.selected = i; render(); });
    body.appendChild(tr);
  });
  if (state.selected >= 0) $("label-select").value = state.spans[state.selected].label;
}

async function correct(action, start, end, label) {
  if (!state.doc) return;
  if (!reviewer()) { setStatus("enter your reviewer name first"); $("reviewer").focus(); return; }
  const res = await api(`/v1/review/documents/${state.doc.id}/corrections`, {
    method: "POST", json: { reviewer: reviewer(), action, start, end, label: label || null },
  });
  const keep = state.selected >= 0 ? state.spans[state.selected] : null;
  state.spans = (await res.json()).spans;
  state.selected = keep ? state.spans.findIndex((s) => s.start === keep.start && s.end === keep.end) : -1;
  render();
  await loadDocuments();
  setStatus(`${action} saved`);
}

function current() { return state.selected >= 0 ? state.spans[state.selected] : null; }
async function accept() { const s = current(); if (s) { await correct("accept", s.start, s.end, s.label); move(1); } }
async function reject() { const s = current(); if (s) { await correct("reject", s.start, s.end, s.label); move(1); } }
async function relabel() { const s = current(); if (s) await correct("relabel", s.start, s.end, $("label-select").value); }

function selectionOffsets() {
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const box = $("text");
  if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) return null;
  const before = document.createRange();
  before.selectNodeContents(box);
  before.setEnd(range.startContainer, range.startOffset);
  const start = before.toString().length;
  let end = start + range.toString().length;
  const text = state.doc.text;
  let s = start;
  while (s < end && /\s/.test(text[s])) s++;
  while (end > s && /\s/.test(text[end - 1])) end--;
  return end > s ? [s, end] : null;
}

async function addSelection() {
  const off = selectionOffsets();
  if (!off) { setStatus("select the missed text in the document first"); return; }
  await correct("add", off[0], off[1], $("label-select").value);
  window.getSelection().removeAllRanges();
  state.selected = state.spans.findIndex((s) => s.start === off[0] && s.end === off[1]);
  render();
}

async function preview() {
  if (!state.doc) return;
  if (!reviewer()) { setStatus("enter your reviewer name first"); return; }
  const res = await api(`/v1/review/documents/${state.doc.id}/apply?reviewer=${encodeURIComponent(reviewer())}`, { method: "POST" });
  $("preview").textContent = (await res.json()).text;
  setStatus("surrogate preview with your corrections");
}

async function download(format) {
  if (!reviewer()) { setStatus("enter your reviewer name first"); return; }
  const res = await api(`/v1/review/export?reviewer=${encodeURIComponent(reviewer())}&format=${format}`);
  const blob = await res.blob();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = format === "jsonl" ? `review-${reviewer()}.jsonl` : `review-${reviewer()}-brat.zip`;
  a.id = "last-download";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setStatus(`exported ${format}`);
}

async function showAgreement() {
  const data = await (await api("/v1/review/agreement")).json();
  const side = $("side");
  side.innerHTML = "<h3>Agreement</h3>";
  const pre = document.createElement("pre");
  pre.id = "agreement";
  pre.textContent = JSON.stringify(data, null, 2);
  side.appendChild(pre);
}

async function showJobs() {
  const data = await (await api("/v1/jobs")).json();
  const side = $("side");
  side.innerHTML = "<h3>Jobs</h3>";
  const ul = document.createElement("ul");
  for (const job of data.jobs) {
    const li = document.createElement("li");
    li.textContent = `${job.id}: ${job.status} ${job.processed}/${job.total} `;
    if (["done", "done_with_failures", "interrupted"].includes(job.status)) {
      const b = document.createElement("button");
      b.textContent = "audit";
      b.addEventListener("click", async () => {
        const html = await (await api(`/review/jobs/${job.id}/audit`)).text();
        let frame = document.getElementById("audit-frame");
        if (!frame) {
          frame = document.createElement("iframe");
          frame.id = "audit-frame";
          // a sandbox without allow-scripts and allow-same-origin: the audit page runs no script and has an
          // origin of its own, so nothing in it can read this page's token from sessionStorage
          frame.setAttribute("sandbox", "");
          frame.setAttribute("referrerpolicy", "no-referrer");
          side.appendChild(frame);
        }
        frame.srcdoc = html;
      });
      li.appendChild(b);
      const imp = document.createElement("button");
      imp.textContent = "review";
      imp.title = "add this job's documents, with the spans it replaced, to the review list";
      imp.addEventListener("click", guard(async () => {
        const res = await (await api(`/v1/review/import-job/${job.id}`, { method: "POST" })).json();
        await loadDocuments();
        setStatus(`${res.documents.length} documents imported from job ${job.id}`);
      }));
      li.appendChild(imp);
    }
    ul.appendChild(li);
  }
  side.appendChild(ul);
}

function move(step) {
  if (!state.spans.length) return;
  state.selected = Math.max(0, Math.min(state.spans.length - 1, state.selected + step));
  render();
}

function guard(fn) { return () => fn().catch((e) => setStatus("error " + e.message)); }

document.addEventListener("keydown", (ev) => {
  if (["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const actions = { a: accept, r: reject, l: relabel, n: addSelection, p: preview };
  if (ev.key === "j") move(1);
  else if (ev.key === "k") move(-1);
  else if (actions[ev.key]) guard(actions[ev.key])();
  else return;
  ev.preventDefault();
});

for (const [id, fn] of Object.entries({
  "btn-accept": accept, "btn-reject": reject, "btn-relabel": relabel, "btn-add": addSelection,
  "btn-preview": preview, "btn-refresh": loadDocuments, "btn-agreement": showAgreement, "btn-jobs": showJobs,
  "btn-export-jsonl": () => download("jsonl"), "btn-export-brat": () => download("brat"),
})) $(id).addEventListener("click", guard(fn));

$("reviewer").value = sessionStorage.getItem("clinideid-reviewer") || "";
$("token").value = sessionStorage.getItem("clinideid-token") || "";
$("reviewer").addEventListener("change", () => { sessionStorage.setItem("clinideid-reviewer", reviewer()); if (state.doc) openDocument(state.doc.id); });
$("token").addEventListener("change", () => { sessionStorage.setItem("clinideid-token", $("token").value.trim()); guard(start)(); });

async function start() { await loadLabels(); await loadDocuments(); }
guard(start)();
