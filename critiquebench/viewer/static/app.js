// critiquebench viewer: one page, no dependencies. Data is addressed by path (index, study/KEY, runs/KEY, run/ID):
// served by `critiquebench view` as JSON (same origin only), or written by `view --output DIR` as scripts
// data/PATH.js calling CB.put(PATH, payload), since a page opened from file:// cannot fetch files.
// Every text from the store is set with textContent: LLM output is untrusted and never becomes markup.
"use strict";

const CB = (() => {
  const store = new Map(), waiting = new Map();
  const fromDisk = location.protocol === "file:";
  function put(path, payload) {
    store.set(path, payload);
    (waiting.get(path) || []).forEach(([resolve]) => resolve(payload));
    waiting.delete(path);
  }
  function fail(path, message) {
    (waiting.get(path) || []).forEach(([, reject]) => reject(new Error(message)));
    waiting.delete(path);
  }
  function request(path) {
    if (!fromDisk) {
      fetch("data/" + path + ".json", { credentials: "same-origin", cache: "no-store" })
        .then((r) => r.json().catch(() => ({ error: `cannot load ${path}: HTTP ${r.status}` })))
        .then((payload) => put(path, payload), (e) => fail(path, `cannot load ${path}: ${e.message}`));
      return;
    }
    const tag = document.createElement("script");
    tag.src = "data/" + path + ".js";
    tag.onerror = () => fail(path, "cannot load " + path);
    tag.onload = () => { if (!store.has(path)) fail(path, "cannot load " + path); tag.remove(); };
    document.head.appendChild(tag);
  }
  function load(path) {
    if (store.has(path)) return Promise.resolve(store.get(path));
    return new Promise((resolve, reject) => {
      const first = !waiting.has(path);
      if (first) waiting.set(path, []);
      waiting.get(path).push([resolve, reject]);
      if (first) request(path);
    });
  }
  // drop loaded payloads whose path starts with one of `prefixes` (a refresh reads them again; from disk the
  // export is a snapshot, so nothing is dropped there)
  function forget(...prefixes) {
    if (fromDisk) return;
    for (const path of [...store.keys()]) if (prefixes.some((p) => path === p || path.startsWith(p + "/"))) store.delete(path);
  }
  return { put, load, forget, fromDisk };
})();

// The run list's filters: the papers' questions, plus the runs an error analysis starts from.
const FILTERS = {
  wrong: ["wrong", "finished with an answer the sound verifier rejects", (r) => r.status === "done" && r.correct === 0],
  failed: ["failed", "the run failed (its error is shown as its answer)", (r) => r.status === "failed"],
  fp: ["false positives", "the LLM verifier said valid, the sound verifier said invalid (some round); plan verification: the model called an invalid plan valid", (r) => r.fp],
  fn: ["false negatives", "the LLM verifier said invalid, the sound verifier said valid (some round); plan verification: the model did not call a valid plan valid", (r) => r.fn],
  worse: ["made worse", "a sound-valid answer was followed by a sound-invalid one after the critique", (r) => r.worse],
  critic: ["stopped by the critic", "the run stopped on a round the LLM verifier called valid", (r) => r.critic],
};
const FLAG_NAMES = ["fp", "fn", "worse", "critic"];
const SORTS = {
  instance: ["instance", null],
  rounds: ["rounds (most first)", (r) => -r.rounds],
  tokens: ["tokens (most first)", (r) => -r.tokens],
  calls: ["LLM calls (most first)", (r) => -r.calls],
  seconds: ["seconds (most first)", (r) => -(r.seconds ?? -1)],
  status: ["status, then answer", (r) => `${r.status} ${r.correct}`],
  answer: ["answer text", (r) => r.answer],
};
const PAGE = 100;
const COLORS = ["#3b5bdb", "#e8590c", "#2b8a3e", "#ae3ec9", "#c92a2a", "#1098ad", "#f08c00", "#5f3dc4"];

// --- filter expressions over the run table (`scheme == "llm-llm" and not correct and rounds > 1`). A filter may
// quote LLM text and arrives in a shared URL, so it is read by this tokenizer and recursive-descent parser and
// never run as code (no eval, no Function). The fields and operators come with the runs payload from
// critiquebench/viewer/filters.py, which documents the grammar.
class FilterError extends Error {}
const WORDS = new Set(["and", "or", "not", "contains", "true", "false"]);

function at_(pattern, text, i) { pattern.lastIndex = i; return pattern.exec(text); }

function tokenize(text) {
  const tokens = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i], at = i + 1;
    if (/\s/.test(c)) { i++; continue; }
    if (c === "(" || c === ")") { tokens.push({ kind: c, at }); i++; continue; }
    if (c === '"' || c === "'") {
      let value = "", j = i + 1, closed = false;
      while (j < text.length) {
        const d = text[j];
        if (d === "\\" && j + 1 < text.length) { const e = text[j + 1]; value += e === "n" ? "\n" : e === "t" ? "\t" : e; j += 2; continue; }
        if (d === c) { closed = true; j++; break; }
        value += d; j++;
      }
      if (!closed) throw new FilterError(`the string at character ${at} has no closing ${c}`);
      tokens.push({ kind: "string", value, at }); i = j; continue;
    }
    // sticky patterns read at `i` in place: slicing the rest of a 100,000-character filter per token was quadratic
    const op = at_(/(==|!=|<=|>=|<|>|~|=)/y, text, i);
    if (op) {
      if (op[1] === "=") throw new FilterError(`"=" at character ${at}: compare with "=="`);
      tokens.push({ kind: "op", value: op[1], at }); i += op[1].length; continue;
    }
    const num = at_(/-?\d+(\.\d+)?(?![\w.])/y, text, i);
    if (num) { tokens.push({ kind: "number", value: Number(num[0]), text: num[0], at }); i += num[0].length; continue; }
    const word = at_(/[A-Za-z_][A-Za-z0-9_]*/y, text, i);
    if (word) {
      const w = word[0], lower = w.toLowerCase();
      tokens.push(WORDS.has(lower) ? { kind: lower === "contains" ? "op" : lower, value: lower, at } : { kind: "field", value: w, at });
      i += w.length; continue;
    }
    throw new FilterError(`unexpected ${JSON.stringify(c)} at character ${at}`);
  }
  return tokens;
}

// -> {ast, needles: [[field, lowercased text]] of every `contains` that is not negated (what to highlight),
// texts: does it need the searched texts}; FilterError on anything it cannot read
// `limits` ({chars, depth}, from `viewer.filters`): a longer filter, or one nested deeper, is a FilterError, not a
// stack overflow that leaves the list at "loading…" (a crafted link of 20,000 parentheses did)
function parseFilter(text, fieldRows, operators, limits = {}) {
  const fields = new Map(fieldRows.map(([name, column, type]) => [name, { name, column, type }]));
  const known = new Set(operators);
  const maxChars = limits.chars ?? 100000, maxDepth = limits.depth ?? 100;
  if (text.length > maxChars) throw new FilterError(`the filter is ${text.length} characters long; at most ${maxChars} are read`);
  const tokens = tokenize(text);
  let pos = 0, usesTexts = false, depth = 0;
  const needles = [];
  const peek = () => tokens[pos], next = () => tokens[pos++];
  const where = (t) => (t ? `at character ${t.at}` : "at the end");
  const shown = (t) => (t.kind === "string" || t.kind === "field" ? JSON.stringify(t.value) : t.text ?? String(t.value ?? t.kind));
  const need = (op) => { if (!known.has(op)) throw new FilterError(`"${op}" is not an operator here`); };
  // a chain of `or`s (`and`s) is one node holding its items, so its length costs no recursion; only nesting does
  function expr(negated) {
    const items = [conj(negated)];
    while (peek()?.kind === "or") { need("or"); next(); items.push(conj(negated)); }
    return items.length === 1 ? items[0] : { t: "or", items };
  }
  function conj(negated) {
    const items = [unary(negated)];
    while (peek()?.kind === "and") { need("and"); next(); items.push(unary(negated)); }
    return items.length === 1 ? items[0] : { t: "and", items };
  }
  function deeper(t) {
    if (++depth > maxDepth) throw new FilterError(`more than ${maxDepth} nested parentheses or "not"s at character ${t.at}`);
  }
  function unary(negated) {
    const t = peek();
    if (!t) throw new FilterError("the filter ends where a condition was expected");
    if (t.kind === "not") { need("not"); next(); deeper(t); const node = { t: "not", a: unary(!negated) }; depth--; return node; }
    if (t.kind === "(") {
      next(); deeper(t);
      const node = expr(negated), close = next();
      if (!close || close.kind !== ")") throw new FilterError(`missing ")" for the "(" at character ${t.at}`);
      depth--;
      return node;
    }
    if (t.kind === "string") {  // a string alone: the run's texts contain it
      next(); usesTexts = true;
      if (!negated && t.value) needles.push(["text", t.value.toLowerCase()]);
      return { t: "cmp", field: { name: "text", column: "", type: "texts" }, op: "contains", value: t.value.toLowerCase() };
    }
    if (t.kind !== "field") throw new FilterError(`expected a field name or a string ${where(t)}, found ${shown(t)}`);
    next();
    const field = fields.get(t.value);
    if (!field) throw new FilterError(`unknown field "${t.value}" at character ${t.at}; fields: ${[...fields.keys()].join(", ")}`);
    if (field.type === "texts") usesTexts = true;
    const op = peek();
    if (!op || op.kind !== "op") {
      if (field.type === "texts") throw new FilterError(`"${field.name}" needs contains (or ~) and a string, e.g. ${field.name} ~ "timeout"`);
      return { t: "set", field };
    }
    next(); need(op.value);
    const lit = next();
    if (!lit || !["string", "number", "true", "false"].includes(lit.kind)) throw new FilterError(`expected a value after "${op.value}" ${where(lit)}`);
    const numeric = ["<", "<=", ">", ">="].includes(op.value), text = op.value === "contains" || op.value === "~";
    const example = field.type === "number" ? `${field.name} > 1` : field.type === "bool" ? `${field.name} == true` : `${field.name} == "x"`;
    if (numeric && field.type !== "number") throw new FilterError(`"${op.value}" compares numbers; ${field.name} is ${field.type === "bool" ? "true or false" : "text"} (e.g. ${example})`);
    if (text && !(field.type === "text" || field.type === "texts")) throw new FilterError(`"${op.value}" looks inside text; ${field.name} is ${field.type === "bool" ? "true or false" : "a number"} (e.g. ${example})`);
    if (field.type === "texts" && !text) throw new FilterError(`${field.name} can only be searched: ${field.name} contains "…" (or ~)`);
    if (text && lit.kind !== "string") throw new FilterError(`"${op.value}" needs a string ${where(lit)}, e.g. ${field.name} ~ "timeout"`);
    if (field.type === "number" && lit.kind !== "number") throw new FilterError(`${field.name} is a number: compare it with a number (e.g. ${example})`);
    if (field.type === "bool" && lit.kind !== "true" && lit.kind !== "false") throw new FilterError(`${field.name} is true or false (e.g. ${example})`);
    let value = lit.kind === "true" ? true : lit.kind === "false" ? false : lit.kind === "number" && field.type === "text" ? lit.text : lit.value;
    if (text) { value = value.toLowerCase(); if (!negated && value) needles.push([field.name, value]); }
    return { t: "cmp", field, op: op.value === "~" ? "contains" : op.value, value };
  }
  if (!tokens.length) return null;
  const ast = expr(false);
  if (pos < tokens.length) throw new FilterError(`unexpected ${shown(tokens[pos])} ${where(tokens[pos])}: join conditions with and / or`);
  return { ast, needles, texts: usesTexts };
}

// does run row `r` pass `node`? `texts(r)` is its searched texts, lowercased
function passes(node, r, texts) {
  switch (node.t) {
    case "or": return node.items.some((item) => passes(item, r, texts));
    case "and": return node.items.every((item) => passes(item, r, texts));
    case "not": return !passes(node.a, r, texts);
    case "set": { const v = r[node.field.column]; return node.field.type === "text" ? !!v : v !== null && v !== undefined && !!v; }
    default: {
      const { field, op, value } = node;
      if (field.type === "texts") return texts(r).includes(value);
      let v = r[field.column];
      if (v === null || v === undefined) return op === "!=";  // a run without a value equals nothing
      if (field.type === "bool") v = !!v;
      if (field.type === "text") v = String(v);
      switch (op) {
        case "==": return v === value;
        case "!=": return v !== value;
        case "<": return v < value;
        case "<=": return v <= value;
        case ">": return v > value;
        case ">=": return v >= value;
        case "contains": return v.toLowerCase().includes(value);
        default: return false;
      }
    }
  }
}

// `text` as nodes: its pieces that match one of `needles` (lowercased) in <mark>, everything as text nodes
function marked(text, needles) {
  const s = String(text ?? "");
  const lower = s.toLowerCase();
  if (!needles.length || lower.length !== s.length) return [s];  // a case change that moves offsets: no marks
  const out = [];
  let i = 0;
  while (i < s.length) {
    let best = -1, len = 0;
    for (const n of needles) {
      const at = lower.indexOf(n, i);
      if (at >= 0 && (best < 0 || at < best || (at === best && n.length > len))) { best = at; len = n.length; }
    }
    if (best < 0) break;
    if (best > i) out.push(s.slice(i, best));
    out.push(el("mark", { text: s.slice(best, best + len) }));
    i = best + len;
  }
  if (i < s.length) out.push(s.slice(i));
  return out;
}

// the part of `text` around its first match, marked (the run list shows what matched, not only the answer)
function context(text, needles, before = 6, after = 120) {
  const lower = text.toLowerCase();
  const at = Math.min(...needles.map((n) => { const k = lower.indexOf(n); return k < 0 ? Infinity : k; }));
  if (at === Infinity) return null;
  const from = Math.max(0, at - before), to = Math.min(text.length, at + after);  // the cell shows ~25 characters
  return [(from > 0 ? "…" : ""), ...marked(text.slice(from, to).replace(/\s+/g, " "), needles), (to < text.length ? "…" : "")];
}
let NEEDLES = [];  // what the current filter highlights in the transcript

function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat(Infinity)) if (kid !== null && kid !== undefined) node.append(kid);
  return node;
}
const svgEl = (tag, attrs) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
};
const pct = (num, den) => (num === null || num === undefined || !den ? "-" : `${(100 * num / den).toFixed(1)}% (${num}/${den})`);
const ci = (r) => (r.ci_low === null || r.ci_low === undefined ? "" : `[${(100 * r.ci_low).toFixed(1)}, ${(100 * r.ci_high).toFixed(1)}]`);
const byInstance = (a, b) => String(a).localeCompare(String(b), "en", { numeric: true }); // 2 < 10, gen-2 < gen-10

// --- routing: every view is a function of the hash (#study=..&cell=..&flag=..&run=..&compare=..)
function params() { return new URLSearchParams(location.hash.slice(1)); }
function go(changes) {
  const p = params();
  for (const [k, v] of Object.entries(changes)) (v === null || v === undefined || v === "") ? p.delete(k) : p.set(k, v);
  location.hash = p.toString();
}
window.addEventListener("hashchange", render);

let INDEX = null;
const keyOf = (name) => INDEX.studies.find((s) => s.name === name)?.key;
async function start() {
  try {
    INDEX = await CB.load("index");
  } catch (e) {
    document.getElementById("status").textContent = "cannot load the study list: " + e.message;
    return;
  }
  drawStudies();
  if (!params().get("study") && INDEX.studies.length) {
    history.replaceState(null, "", "#study=" + encodeURIComponent(INDEX.studies[0].name));
  }
  render();
  if (!CB.fromDisk) setInterval(poll, POLL_MS);
}

function drawStudies() {
  const body = document.querySelector("#studies tbody");
  body.replaceChildren(...INDEX.studies.map((s) => el("tr", { class: "pick", "data-study": s.name, onclick: () => go({ study: s.name, cell: null, flag: null, stop: null, run: null, compare: null, f: null }) },
    el("td", { text: s.name, title: `${s.kind}: ${s.domains.join(", ")} x ${s.schemes.join(", ")}` }),
    el("td", { text: (s.model || "") + (s.recorded ? " (recorded)" : "") }),
    el("td", { class: "num", text: `${s.done}/${s.total ?? "?"}` }))));
  document.querySelectorAll("#studies tr[data-study]").forEach((tr) => tr.classList.toggle("selected", tr.dataset.study === params().get("study")));
}

// --- refresh: read the store again, keeping the page's hash (filter, cell, sort, run); while a study runs the
// served page does it by itself every POLL_MS when the study's runs changed, unless a transcript is open
const POLL_MS = 5000;
let LIVE = true, POLLING = false;
async function refresh() {
  CB.forget("index", "study", "runs", "search", "run");  // a long text ("text/") is named by its digest: it stays
  try { INDEX = await CB.load("index"); } catch (e) { return; }
  drawStudies();
  await render();
}
async function poll() {
  const name = params().get("study"), entry = INDEX?.studies.find((s) => s.name === name);
  const box = document.getElementById("run-filter");  // a filter being edited is not overwritten
  if (!LIVE || POLLING || !entry || params().get("run") || (box && box.value.trim() !== (params().get("f") || ""))) return;
  if (entry.total !== null && entry.done + entry.failed >= entry.total) return;  // finished: nothing will change
  POLLING = true;
  try {
    const before = JSON.stringify(entry);
    CB.forget("index");
    INDEX = await CB.load("index");
    const now = INDEX.studies.find((s) => s.name === name);
    if (JSON.stringify(now) !== before) await refresh();
  } catch (e) { /* the next poll tries again */ } finally { POLLING = false; }
}

let GENERATION = 0; // a render that a newer hash change overtook stops adding to the page
async function render() {
  const gen = ++GENERATION;
  const p = params(), name = p.get("study"), main = document.getElementById("main");
  const typing = document.activeElement?.id === "run-filter";
  document.querySelectorAll("#studies tr[data-study]").forEach((tr) => tr.classList.toggle("selected", tr.dataset.study === name));
  if (!name) { main.replaceChildren(el("p", { class: "muted", text: "The store has no studies." })); return; }
  const entry = INDEX.studies.find((s) => s.name === name);
  if (!entry) { main.replaceChildren(el("p", { class: "error", text: "no study named " + name })); return; }
  let study;
  try { study = await CB.load("study/" + entry.key); } catch (e) {
    main.replaceChildren(el("p", { class: "error", text: e.message })); return;
  }
  if (study.error) { main.replaceChildren(el("p", { class: "error", text: study.error })); return; }
  const parts = [studyHeader(study)];
  if (study.kind === "verify") {
    parts.push(genericTable("Verification study", study.verify));
    main.replaceChildren(...parts);
    return;
  }
  parts.push(table1(study, p), tasksTable(study), await compareSection(study, p), table2(study), pairedTable(study), stopsTable(study, p), figure2(study));
  if (gen !== GENERATION) return;
  const holder = el("section", { id: "runs" }, el("h2", { text: "Runs" }), el("p", { class: "muted", text: "loading…" }));
  main.replaceChildren(...parts.filter(Boolean), holder);
  const runs = await runsSection(study, p);
  if (gen !== GENERATION) return;
  holder.replaceWith(runs);
  if (typing) { const box = document.getElementById("run-filter"); box.focus(); box.setSelectionRange(box.value.length, box.value.length); }
  if (!p.get("run")) return;
  const shown = await transcript(p.get("run"));
  if (gen !== GENERATION) return;
  main.append(shown);
  shown.scrollIntoView({ block: "start" });
}

function studyHeader(study) {
  const c = study.config;
  const bits = [`model ${c.model}`, `${(c.domains || []).join(", ")}`, `schemes ${(c.schemes || []).join(", ")}`];
  if (c.replay) bits.push("recorded calls, replayed from the cache");
  const tools = el("div", { class: "filters" });
  if (!CB.fromDisk) {
    const live = el("input", { type: "checkbox", id: "auto-refresh", checked: LIVE, onchange: (ev) => { LIVE = ev.target.checked; } });
    tools.append(el("button", { id: "refresh", title: "read the store again, keeping the filter", onclick: refresh, text: "refresh" }),
      el("label", { title: `while the study runs, refresh every ${POLL_MS / 1000} s when its runs change (not while a transcript is open)` }, live, " refresh while it runs"));
  } else {
    tools.append(el("span", { class: "note", text: "a snapshot written by view --output: run it again for newer runs" }));
  }
  return el("section", { id: "study-head" }, el("h2", { text: study.name }), el("p", { class: "muted", text: bits.join(" · ") }), tools, settingsPanel(study));
}

// the study's definition as stored (URLs redacted, nothing named like a key: critiquebench/viewer/data.py
// shown_config), with when it was defined and last ran
function settingsPanel(study) {
  const when = (t) => (t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "-");
  const show = (v) => (v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v));
  const pr = study.progress || {};
  const rows = [["defined", when(pr.created_at)], ["last run update", when(pr.last_update)],
    ["runs by status", Object.entries(pr.statuses || {}).map(([k, n]) => `${k} ${n}`).join(", ") || "none yet"],
    ...Object.entries(study.config).map(([k, v]) => [k, show(v)])];
  return el("details", { id: "settings" }, el("summary", { text: "Settings of this study" }),
    el("table", { class: "compact" }, el("tbody", {}, rows.map(([k, v]) => el("tr", { "data-setting": k }, el("th", { text: k }), el("td", { class: "setting", text: v }))))));
}

function table1(study, p) {
  const rows = study.table1;
  const domains = [...new Set(rows.map((r) => r.domain))], schemes = [...new Set(rows.map((r) => r.scheme))];
  const cell = new Map(rows.map((r) => [r.domain + "\u0000" + r.scheme, r]));
  const head = el("tr", {}, el("th", { text: "scheme" }), domains.map((d) => el("th", { class: "num", text: d })));
  const body = schemes.map((s) => el("tr", {}, el("th", { text: s }), domains.map((d) => {
    const r = cell.get(d + "\u0000" + s);
    if (!r) return el("td", {});
    const selected = p.get("cell") === d + "|" + s;
    return el("td", {
      class: "cell" + (selected ? " selected" : "") + (r.small_n ? " small-n" : ""), "data-domain": d, "data-scheme": s,
      title: `${r.llm_calls} LLM calls, ${r.cache_hits} cache hits, ${r.mean_rounds?.toFixed(2) ?? "-"} rounds/run; click for the runs`,
      onclick: () => go({ cell: d + "|" + s, stop: null, run: null }),
    }, pct(r.correct, r.total) + (r.small_n ? " *" : ""), el("small", { text: "95% CI " + (ci(r) || "-") + (r.failed ? ` · ${r.failed} failed` : "") }),
      r.trial_sd === null || r.trial_sd === undefined ? null : el("small", { class: "trials", text: `${r.trials} trials: ${(100 * r.trial_mean).toFixed(1)}% ± ${(100 * r.trial_sd).toFixed(1)}` }));
  })));
  return el("section", { id: "table1" }, el("h2", { text: "Table 1: accuracy" }),
    el("table", { class: "compact" }, el("thead", {}, head), el("tbody", {}, body)),
    el("p", { class: "note", text: "Sound-verified final answers / finished runs, with the 95% Wilson interval. Click a cell for its runs." }),
    rows.some((r) => r.small_n) ? el("p", { class: "note caution", text: "* small n: too few finished runs to compare schemes; a smoke test of the pipeline, not a finding." }) : null);
}

function table2(study) {
  if (!study.table2.length) return null;
  const body = study.table2.map((r) => el("tr", {}, el("td", { text: r.domain }), el("td", { text: r.scheme }),
    el("td", { class: "num" + (r.one_class ? " one-class" : ""), text: pct(r.agree, r.n) + (r.one_class ? " †" : "") }), el("td", { class: "num", text: pct(r.false_pos, r.sound_invalid) }),
    el("td", { class: "num", text: pct(r.false_neg, r.sound_valid) })));
  return el("section", { id: "table2" }, el("h2", { text: "Table 2: the LLM as verifier" }),
    el("table", {}, el("thead", {}, el("tr", {}, ["domain", "scheme", "accuracy", "FPR", "FNR"].map((h, i) => el("th", { class: i > 1 ? "num" : "", text: h })))), el("tbody", {}, body)),
    el("p", { class: "note", text: "Every round an LLM verifier judged. FPR: said valid among sound-invalid answers; FNR: said invalid among sound-valid ones." }),
    study.table2.some((r) => r.one_class) ? el("p", { class: "note caution", text: "† one class: every answer judged was sound-invalid (or every one valid), so accuracy only counts how often the LLM said that class and the other class's error rate is undefined." }) : null);
}

function genericTable(title, rows) {
  if (!rows.length) return el("section", {}, el("h2", { text: title }), el("p", { class: "muted", text: "no rows" }));
  const keys = Object.keys(rows[0]).filter((k) => k !== "table" && k !== "study");
  return el("section", {}, el("h2", { text: title }), el("table", {},
    el("thead", {}, el("tr", {}, keys.map((k) => el("th", { text: k })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, keys.map((k) => el("td", { text: r[k] === null ? "-" : String(r[k]) })))))));
}

// --- paired comparisons of the study's schemes (critiquebench/reports/paired.py): the difference with its bootstrap
// interval, McNemar's exact p and its Holm adjustment; a pair with an unfinished cell says so and is not compared
const points = (v) => (v === null || v === undefined ? "-" : `${v > 0 ? "+" : ""}${(100 * v).toFixed(1)}`);
const pval = (v) => (v === null || v === undefined ? "-" : v < 1e-4 ? v.toExponential(1) : v.toPrecision(2));
function pairedTable(study) {
  const rows = study.compare || [];
  if (!rows.length) return null;
  const body = rows.map((r) => {
    const head = [el("td", { text: r.domain }), el("td", { text: r.scheme_a }), el("td", { text: r.scheme_b })];
    if (r.unfinished || r.n === null) return el("tr", { class: "unfinished" }, head, el("td", { class: "muted", colspan: 7, text: r.unfinished || "-" }));
    return el("tr", { class: r.significant ? "significant" : "" }, head, el("td", { class: "num", text: r.n }),
      el("td", { class: "num", text: pct(r.a_correct, r.n) }), el("td", { class: "num", text: pct(r.b_correct, r.n) }),
      el("td", { class: "num", text: `${points(r.difference)} [${points(r.ci_low)}, ${points(r.ci_high)}]` }),
      el("td", { class: "num", text: pval(r.mcnemar_p) }), el("td", { class: "num", text: pval(r.holm_p) + (r.significant ? " *" : "") }),
      el("td", { class: "num", text: `${r.a_only}/${r.ties}/${r.b_only}` }));
  });
  const first = rows[0];
  return el("section", { id: "paired" }, el("h2", { text: "Paired comparisons" }),
    el("table", {}, el("thead", {}, el("tr", {}, ["domain", "A", "B", "n", "accuracy A", "accuracy B", "difference [95% CI] (points)", "McNemar p", "Holm p", "W/T/L"].map((h, i) => el("th", { class: i > 2 ? "num" : "", text: h })))), el("tbody", {}, body)),
    el("p", { class: "note", text: `Units: (instance, trial) both schemes finished. Interval: paired bootstrap, instances resampled with their trials (B = ${first.resamples}, seed ${first.seed}). McNemar: exact two-sided test on the units only one got right; Holm: adjusted over the table's pairs; * Holm p < 0.05. W/T/L: only A right / alike / only B right.` }));
}

// --- why each loop stopped (critiquebench/reports/stops.py); a click on a class lists its runs
const STOPS = [["accepted_correct", "accepted correct"], ["accepted_wrong", "accepted wrong"], ["exhausted_correct", "exhausted correct"],
  ["exhausted_wrong", "exhausted wrong"], ["ever_correct", "ever correct"], ["lost", "lost"]];
const STOP_TEST = { ever_correct: (r) => r.correct === 1 || r.lost_at !== null, lost: (r) => r.lost_at !== null };
const stopTest = (stop) => STOP_TEST[stop] || ((r) => r.stop === stop);
function stopsTable(study, p) {
  const rows = study.stops || [];
  if (!rows.length) return null;
  const body = rows.map((r) => el("tr", {}, el("td", { text: r.domain }), el("td", { text: r.scheme }), el("td", { class: "num", text: r.runs }),
    STOPS.map(([k]) => {
      const selected = p.get("stop") === k && p.get("cell") === r.domain + "|" + r.scheme;
      return el("td", { class: "num cell" + (selected ? " selected" : ""), "data-stop": k, "data-scheme": r.scheme, title: "list these runs",
        onclick: () => go({ cell: r.domain + "|" + r.scheme, stop: k, flag: null, pg: null, run: null }) }, pct(r[k], r.runs));
    }),
    el("td", { text: Object.entries(r.lost_at || {}).map(([k, n]) => `${k}: ${n}`).join(", ") || "-" }),
    el("td", { class: "num", text: r.ended_early }), el("td", { class: "num", text: r.rejected_correct ?? "-" }),
    el("td", { text: r.decided_by === "llm" ? "LLM" : "sound" })));
  return el("section", { id: "stops" }, el("h2", { text: "Why each loop stopped" }),
    el("table", {}, el("thead", {}, el("tr", {}, ["domain", "scheme", "runs", ...STOPS.map(([, h]) => h), "lost at (round: runs)", "ended early", "rejected correct", "decided by"].map((h, i) => el("th", { class: i > 1 ? "num" : "", text: h })))), el("tbody", {}, body)),
    el("p", { class: "note", text: "Accepted: the verifier that decides the loop accepted the answer it stopped on (accepted wrong = a false-positive stop); exhausted: it ended without that acceptance. Ever correct: a sound-valid answer at some round; lost: ever correct, final answer wrong. Click a count for its runs." }));
}

// --- Figure 2: one SVG panel per domain, one line per iterative scheme; hover a point for its counts
function figure2(study) {
  const pts = study.figure;
  if (!pts.length) return null;
  const domains = [...new Set(pts.map((q) => q.domain))], schemes = [...new Set(pts.map((q) => q.scheme))];
  const color = (s) => COLORS[schemes.indexOf(s) % COLORS.length];
  const W = 360, H = 230, L = 40, R = 12, T = 14, B = 32;
  const tip = document.getElementById("tooltip");
  const panels = domains.map((d) => {
    const mine = pts.filter((q) => q.domain === d), maxN = Math.max(...mine.map((q) => q.budget), 2);
    const x = (n) => L + (W - L - R) * (n - 1) / (maxN - 1), y = (a) => T + (H - T - B) * (1 - a);
    const svg = svgEl("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-domain": d });
    for (const a of [0, 0.25, 0.5, 0.75, 1]) {
      svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(a), y2: y(a), class: "grid" }));
      const t = svgEl("text", { x: L - 4, y: y(a) + 3, "text-anchor": "end" }); t.textContent = `${a * 100}%`; svg.append(t);
    }
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "axis" }));
    const step = Math.max(1, Math.ceil(maxN / 8));
    for (let n = 1; n <= maxN; n += step) {
      const t = svgEl("text", { x: x(n), y: H - B + 14, "text-anchor": "middle" }); t.textContent = n; svg.append(t);
    }
    const lab = svgEl("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }); lab.textContent = "round budget n"; svg.append(lab);
    for (const s of schemes) {
      const line = mine.filter((q) => q.scheme === s).sort((a, b) => a.budget - b.budget);
      if (!line.length) continue;
      if (line.every((q) => q.ci_low !== null && q.ci_low !== undefined)) {  // the 95% Wilson band
        const band = [...line.map((q) => `${x(q.budget)},${y(q.ci_high)}`), ...[...line].reverse().map((q) => `${x(q.budget)},${y(q.ci_low)}`)];
        svg.append(svgEl("polygon", { points: band.join(" "), fill: color(s), "fill-opacity": 0.15, stroke: "none", class: "band", "data-scheme": s }));
      }
      svg.append(svgEl("polyline", { points: line.map((q) => `${x(q.budget)},${y(q.accuracy ?? 0)}`).join(" "), fill: "none", stroke: color(s), "stroke-width": 2 }));
      for (const q of line) {
        const dot = svgEl("circle", { cx: x(q.budget), cy: y(q.accuracy ?? 0), r: 4, fill: color(s), "data-scheme": s, "data-budget": q.budget });
        const spread = q.trial_sd === null || q.trial_sd === undefined ? "" : ` · trials ${(100 * q.trial_mean).toFixed(1)}% ± ${(100 * q.trial_sd).toFixed(1)}`;
        const text = `${s} · n=${q.budget}: ${pct(q.correct, q.total)} ${ci(q)}${spread}`;
        dot.addEventListener("mouseenter", (ev) => { tip.textContent = text; tip.hidden = false; moveTip(ev); });
        dot.addEventListener("mousemove", moveTip);
        dot.addEventListener("mouseleave", () => { tip.hidden = true; });
        svg.append(dot);
      }
    }
    return el("div", { class: "panel" }, el("div", { text: d }), svg);
  });
  const legend = el("div", { class: "legend" }, schemes.map((s) => [swatch(color(s)), s]));
  return el("section", { id: "figure2" }, el("h2", { text: "Figure 2: accuracy by round budget" }), legend, el("div", { class: "panels" }, panels),
    el("p", { class: "note", text: "A run's answer at budget n is the one it stopped at if that round is ≤ n, else round n's answer; bands: 95% Wilson intervals. Hover a point for its counts." }));
}
function swatch(color) {
  const span = el("span");
  span.style.background = color; // through the CSSOM: the CSP forbids style attributes
  return span;
}
function moveTip(ev) {
  const tip = document.getElementById("tooltip");
  tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px";
}

// --- two studies, cell by cell
async function compareSection(study, p) {
  const others = INDEX.studies.filter((s) => s.name !== study.name && s.kind !== "verify");
  if (!others.length) return null;
  const pick = el("select", { id: "compare-with", onchange: (ev) => go({ compare: ev.target.value }) },
    el("option", { value: "", text: "compare with…" }), others.map((s) => el("option", { value: s.name, text: s.name, selected: p.get("compare") === s.name })));
  const section = el("section", { id: "compare" }, el("h2", { text: "Compare" }), pick);
  const other = p.get("compare");
  if (!other) return section;
  const them = await CB.load("study/" + keyOf(other));
  const key = (r) => r.domain + "\u0000" + r.scheme;
  const a = new Map(study.table1.map((r) => [key(r), r])), b = new Map((them.table1 || []).map((r) => [key(r), r]));
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  const body = keys.map((k) => {
    const [d, s] = k.split("\u0000"), x = a.get(k), y = b.get(k);
    const delta = x && y && x.accuracy !== null && y.accuracy !== null ? 100 * (x.accuracy - y.accuracy) : null;
    return el("tr", {}, el("td", { text: d }), el("td", { text: s }),
      el("td", { class: "num", text: x ? pct(x.correct, x.total) : "-" }), el("td", { class: "num", text: y ? pct(y.correct, y.total) : "-" }),
      el("td", { class: "num " + (delta > 0 ? "pos" : delta < 0 ? "neg" : ""), text: delta === null ? "-" : (delta > 0 ? "+" : "") + delta.toFixed(1) }));
  });
  section.append(el("table", {}, el("thead", {}, el("tr", {}, ["domain", "scheme", study.name, other, "delta (points)"].map((h, i) => el("th", { class: i > 1 ? "num" : "", text: h })))), el("tbody", {}, body)));
  return section;
}

// --- the runs of a study (or of a cell): filters, search, sort, pages of PAGE rows
const ROWS = new WeakMap(); // runs payload -> its rows as objects
function runRows(data) {
  if (!ROWS.has(data)) ROWS.set(data, data.rows.map((row) => Object.fromEntries(data.columns.map((c, i) => [c, row[i]]))));
  return ROWS.get(data);
}

async function searchIndex(study) {
  const found = await CB.load("search/" + keyOf(study.name));
  if (!found.byRun) {
    found.byRun = new Map(found.runs.map(([id, idx]) => [id, idx]));
    found.lower = new Map();
  }
  return found;
}

// the run list's filter line: the flag buttons, the filter expression box, the sort
function filterBar(p, flag, cellKey, filter, sort) {
  const box = el("input", { id: "run-filter", type: "search", spellcheck: "false", value: filter,
    placeholder: 'filter, e.g. scheme == "llm-llm" and not correct and rounds > 1, or "timeout" (Enter)',
    onchange: (ev) => go({ f: ev.target.value.trim(), pg: null, run: null }) });
  const sorter = el("select", { id: "run-sort", onchange: (ev) => go({ sort: ev.target.value === "instance" ? null : ev.target.value, pg: null }) },
    Object.entries(SORTS).map(([k, [label]]) => el("option", { value: k, text: "sort: " + label, selected: k === sort })));
  return el("div", { class: "filters" }, el("button", { id: "filter-all", class: flag ? "" : "on", onclick: () => go({ flag: null, pg: null }), text: "all" }),
    Object.entries(FILTERS).map(([k, [label, help]]) => el("button", { id: "filter-" + k, class: flag === k ? "on" : "", title: help, onclick: () => go({ flag: k, pg: null }), text: label })),
    cellKey ? el("button", { id: "all-cells", onclick: () => go({ cell: null, stop: null, pg: null }), text: "all cells" }) : null, box, sorter);
}

// the answer cell: the answer with what the filter looked for marked, else where the run's texts matched it
function answerCell(r, found, needles) {
  const td = el("td", { class: "snippet" });
  const mine = needles.filter(([f]) => f === "answer" || f === "text").map(([, n]) => n);
  const inAnswer = mine.length && String(r.answer ?? "").toLowerCase().length === String(r.answer ?? "").length && mine.some((n) => String(r.answer ?? "").toLowerCase().includes(n));
  if (!mine.length || inAnswer || !found) { td.append(...marked(r.answer, mine)); return td; }
  for (const i of found.byRun.get(r.id) || []) {
    const shown = context(found.texts[i], mine.filter((n) => textLower(found, i).includes(n)));
    if (shown) { td.classList.add("match"); td.title = "where the filter's text matched (the answer does not hold it)"; td.append(...shown); return td; }
  }
  td.append(...marked(r.answer, mine));
  return td;
}
function textLower(found, i) {
  if (!found.lower.has(i)) found.lower.set(i, found.texts[i].toLowerCase());
  return found.lower.get(i);
}

async function runsSection(study, p) {
  const cellKey = p.get("cell"), flag = p.get("flag"), filter = (p.get("f") || "").trim(), sort = SORTS[p.get("sort")] ? p.get("sort") : "instance";
  const section = el("section", { id: "runs" }, el("h2", { text: "Runs" }), filterBar(p, flag, cellKey, filter, sort));
  NEEDLES = [];
  let data;
  try { data = await CB.load("runs/" + keyOf(study.name)); } catch (e) { section.append(el("p", { class: "error", text: e.message })); return section; }
  if (data.error) { section.append(el("p", { class: "error", text: data.error })); return section; }
  section.querySelector("#run-filter").title = `fields: ${(data.fields || []).map(([name]) => name).join(", ")}; operators: ${(data.operators || []).join(" ")}; a string alone searches the texts`;
  let parsed = null;
  try { parsed = parseFilter(filter, data.fields || [], data.operators || [], data.filter_limits || {}); } catch (e) {
    if (!(e instanceof FilterError)) throw e;
    section.append(el("p", { id: "filter-error", class: "error", text: "filter: " + e.message }));
    return section;
  }
  const [domain, scheme] = cellKey ? cellKey.split("|") : [null, null];
  const stop = STOPS.some(([k]) => k === p.get("stop")) ? p.get("stop") : null;
  let rows = runRows(data).filter((r) => (!cellKey || (r.domain === domain && r.scheme === scheme)) && (!flag || FILTERS[flag]?.[2](r))
    && (!stop || (r.stop !== null && r.stop !== undefined && stopTest(stop)(r))));
  const found = parsed?.texts ? await searchIndex(study) : null;
  if (parsed) {
    const joined = new Map();  // run id -> its texts, lowercased, built once per run however often the filter asks
    const texts = (r) => {
      if (!joined.has(r.id)) joined.set(r.id, String(r.answer ?? "").toLowerCase() + "\n" + (found.byRun.get(r.id) || []).map((i) => textLower(found, i)).join("\n"));
      return joined.get(r.id);
    };
    rows = rows.filter((r) => passes(parsed.ast, r, texts));
    NEEDLES = parsed.needles.map(([, n]) => n);
  }
  const byKey = SORTS[sort][1];
  rows.sort((a, b) => {
    if (byKey) { const x = byKey(a), y = byKey(b); if (x < y) return -1; if (x > y) return 1; }
    return (a.domain + a.scheme).localeCompare(b.domain + b.scheme) || byInstance(a.instance, b.instance) || a.trial - b.trial;
  });
  const pages = Math.max(1, Math.ceil(rows.length / PAGE)), page = Math.min(pages, Math.max(1, parseInt(p.get("pg") || "1", 10) || 1));
  const where = cellKey ? `${domain} × ${scheme}` : "all cells";
  section.append(el("p", {}, el("span", { id: "run-count", text: String(rows.length) }),
    ` run(s): ${where}` + (flag ? `, ${FILTERS[flag]?.[0] ?? flag}` : "") + (stop ? `, ${STOPS.find(([k]) => k === stop)[1]}` : "") + (filter ? `, where ${filter}` : ""),
    stop ? el("button", { id: "all-stops", onclick: () => go({ stop: null, pg: null }), text: "every class" }) : null));
  const verifier = new Set(data.verifier_domains || []);
  const needles = parsed?.needles || [];
  const body = rows.slice((page - 1) * PAGE, page * PAGE).map((r) => el("tr", { class: "pick" + (String(r.id) === p.get("run") ? " selected" : ""), "data-run": r.id, onclick: () => go({ run: r.id }) },
    el("td", { text: r.domain }), el("td", { text: r.scheme }), el("td", { text: r.instance }), el("td", { class: "num", text: r.trial }),
    el("td", { text: r.status }), el("td", { class: r.correct ? "ok" : "bad", text: r.correct === null ? "-" : verifier.has(r.domain) ? (r.correct ? "right verdict" : "wrong verdict") : r.correct ? "correct" : "wrong" }),
    answerCell(r, found, needles),
    el("td", { class: "num", text: r.rounds }), el("td", { class: "num", text: r.tokens }), el("td", { class: "num", text: `${r.calls} / ${r.hits}` }),
    el("td", { class: "num", text: r.seconds === null || r.seconds === undefined ? "-" : r.seconds.toFixed(2) }),
    el("td", {}, FLAG_NAMES.filter((k) => r[k]).map((k) => el("span", { class: "flag", text: FILTERS[k][0] })))));
  const heads = [["domain"], ["scheme"], ["instance", "instance"], ["trial"], ["status", "status"], ["result"], ["answer", "answer"], ["rounds", "rounds"], ["tokens", "tokens"], ["calls / cached", "calls"], ["seconds", "seconds"], ["flags"]];
  section.append(el("table", { id: "run-table" }, el("thead", {}, el("tr", {}, heads.map(([h, k]) => el("th", k ? { text: h, class: "sortable" + (k === sort ? " sorted" : ""), title: "sort by " + h, onclick: () => go({ sort: k === "instance" ? null : k, pg: null }) } : { text: h })))), el("tbody", {}, body)));
  if (pages > 1) {
    section.append(el("div", { class: "pager" },
      el("button", { id: "page-prev", disabled: page <= 1, onclick: () => go({ pg: page - 1 }), text: "‹ previous" }),
      el("span", { id: "page-info", text: ` ${(page - 1) * PAGE + 1}–${Math.min(rows.length, page * PAGE)} of ${rows.length} (page ${page} of ${pages}) ` }),
      el("button", { id: "page-next", disabled: page >= pages, onclick: () => go({ pg: page + 1 }), text: "next ›" })));
  }
  return section;
}

// --- PlanBench tasks: accuracy per task; plan verification (t3): the model as verifier, its FPs and FNs a click away
function tasksTable(study) {
  const rows = study.tasks || [];
  if (!rows.length) return null;
  const count = (n, d, flag, domain) => n === null || n === undefined ? el("td", { class: "num", text: "-" })
    : el("td", { class: "num cell", "data-filter": flag, title: "list these runs", onclick: () => go({ cell: domain + "|standard", flag, pg: null, run: null }) }, pct(n, d));
  const body = rows.map((r) => el("tr", {}, el("td", { text: r.task }), el("td", { text: r.title }), el("td", { text: r.domain }), el("td", { text: r.level || "task" }),
    el("td", { class: "num", text: pct(r.correct, r.total) }),
    r.level === "binary" ? count(r.false_pos, r.truth_invalid, "fp", r.domain) : el("td", { class: "num", text: "-" }),
    r.level === "binary" ? count(r.false_neg, r.truth_valid, "fn", r.domain) : el("td", { class: "num", text: "-" })));
  return el("section", { id: "tasks" }, el("h2", { text: "PlanBench tasks" }),
    el("table", {}, el("thead", {}, el("tr", {}, ["task", "PlanBench task", "domain", "level", "accuracy", "FPR", "FNR"].map((h, i) => el("th", { class: i > 3 ? "num" : "", text: h })))), el("tbody", {}, body)),
    el("p", { class: "note", text: "Plan verification (t3): the model under test is the verifier. FPR: it called an invalid plan valid; FNR: it did not call a valid plan valid. Click a rate for its runs." }));
}

// --- a run, round by round: every model call with its prompt, the answer, the parsed answer, the sound verdict
// with its reason and the critic's verdict
// A stored text, or a long one as {long: REF, head, length}: its head and a button that loads the whole text.
function textBlock(cls, value) {
  if (value === null || value === undefined || typeof value !== "object") return el("pre", { class: cls }, marked(value ?? "", NEEDLES));
  const pre = el("pre", { class: cls + " cut" }, marked(value.head, NEEDLES));
  const note = el("div", { class: "note", text: `the first ${value.head.length.toLocaleString()} of ${value.length.toLocaleString()} characters ` });
  const more = el("button", { class: "more", text: "show all", onclick: async () => {
    more.disabled = true;
    try {
      const full = await CB.load("text/" + value.long);
      if (full.error) throw new Error(full.error);
      pre.replaceChildren(...marked(full.text, NEEDLES)); pre.classList.remove("cut"); note.remove();
    } catch (e) { more.disabled = false; note.textContent = e.message + " "; }
  } });
  note.append(more);
  return el("div", { class: "long" }, pre, note);
}

// a call's time and tokens as recorded when it was made (a cache hit shows the call it reused)
function timing(call) {
  if (!call || call.seconds === null || call.seconds === undefined) return "";
  return ` · ${call.seconds.toFixed(2)} s · ${call.prompt_tokens} → ${call.completion_tokens} tokens`;
}

function messagesBlock(cls, title, messages, reply, call) {
  if (!messages) return el("p", { class: "muted " + cls, text: title + ": not in the call cache" });
  return el("details", { class: "prompt " + cls }, el("summary", {}, `${title} (${messages.length} message${messages.length === 1 ? "" : "s"})`, el("span", { class: "timing", text: timing(call) })),
    messages.map((m) => [el("div", { class: "msg-role", text: m.role }), textBlock("", m.content)]),
    reply === undefined ? null : [el("div", { class: "msg-role", text: "reply" }), textBlock("reply", reply)]);
}

function parsedAnswer(canonical) {
  if (canonical === null || canonical === undefined || canonical === "") return el("p", { class: "muted parsed", text: "Parsed answer: nothing could be read" });
  let shown = canonical;
  try { shown = JSON.stringify(JSON.parse(canonical), null, 1); } catch (e) { /* not JSON (or cut): as stored */ }
  return el("details", { class: "parsed" }, el("summary", { text: "Parsed answer (what the sound verifier judged)" }), textBlock("", shown));
}

function planVerdict(v) {
  if (!v || v.valid === null || v.valid === undefined) return "gave no verdict";
  if (v.valid) return "the plan is valid";
  const facts = (v.facts || []).map((f) => Array.isArray(f) ? f.join(" ") : String(f)).join(", ");
  const kind = v.kind === "unmet_precondition" ? `an unmet precondition${v.action ? " of " + v.action : ""}` : v.kind === "unmet_goal" ? "an unmet goal" : (v.kind || "");
  return "the plan is invalid" + (kind ? ` (${kind}${facts ? ": " + facts : ""})` : "");
}

function verifierRound(a) {
  let c = null;
  try { c = JSON.parse(a.canonical); } catch (e) { c = null; }
  if (!c || !c.truth) return [el("div", { class: "label verdict" }, "The model's verdict could not be read")];
  const said = c.said || {}, truth = c.truth;
  const fp = said.valid === true && truth.valid === false, fn = said.valid !== true && truth.valid === true;
  return [
    el("div", { class: "label verdict" }, "The LLM said: ", el("span", { class: "said", text: planVerdict(said) }), ". The truth: ", el("span", { class: "truth", text: planVerdict(truth) }), ".",
      fp ? el("span", { class: "flag", text: "false positive" }) : null, fn ? el("span", { class: "flag", text: "false negative" }) : null),
    el("div", { class: "label sound" }, "Its verdict is ", el("span", { class: c.binary ? "ok" : "bad", text: c.binary ? "right" : "wrong" }),
      ` (PlanBench's levels: binary ${c.binary ? "right" : "wrong"}, type ${c.type ? "right" : "wrong"}, explanation ${c.explanation ? "right" : "wrong"})`),
  ];
}

async function transcript(id) {
  const section = el("section", { id: "transcript" });
  let data;
  try { data = await CB.load("run/" + id); } catch (e) { section.append(el("p", { class: "error", text: e.message })); return section; }
  if (data.error) { section.append(el("p", { class: "error", text: data.error })); return section; }
  const r = data.run;
  section.append(el("h2", { text: `Run: ${r.domain} · ${r.scheme} · instance ${r.instance_id} · trial ${r.trial}` }),
    el("p", { class: "muted", text: `${r.status}; final answer ${r.correct === null ? "not judged" : r.correct ? "correct" : "wrong"} (round ${r.final_round ?? "-"}); ${r.rounds} round(s), ${r.prompt_tokens} prompt + ${r.completion_tokens} completion tokens, ${r.llm_calls} LLM calls, ${r.cache_hits} cache hits` }));
  if (r.error) section.append(textBlock("error run-error", r.error));
  for (const a of data.rounds) {
    const card = el("div", { class: "round" + (a.stopped ? " stopped" : ""), "data-round": a.round }, el("h3", { text: `Round ${a.round}` + (a.stopped ? " · the scheme stopped here" : "") }));
    const calls = a.calls || [], generated = calls.filter((c) => c.node === "generator");
    card.append(messagesBlock("generator-prompt", "Prompt", a.prompt, undefined, generated.length === 1 ? generated[0] : null), el("div", { class: "label", text: "Answer" }), textBlock("answer", a.answer));
    if (generated.length > 1) {
      card.append(el("details", { class: "more-calls" }, el("summary", { text: `all ${generated.length} calls of the generator this round` }),
        generated.map((c, i) => messagesBlock("generator-call", `Call ${i + 1}`, c.messages, c.reply, c))));
    }
    if (r.verifier_task) {
      card.append(...verifierRound(a));
    } else {
      card.append(parsedAnswer(a.canonical));
      const sound = a.sound_valid === null ? el("span", { class: "muted", text: "not judged" }) : el("span", { class: a.sound_valid ? "ok" : "bad", text: a.sound_valid ? "valid" : "invalid" });
      card.append(el("div", { class: "label sound" }, "Sound verifier: ", sound, a.sound_status && a.sound_status !== (a.sound_valid ? "valid" : "invalid") ? ` (${a.sound_status})` : ""));
      if (a.sound_reason) card.append(textBlock("reason", a.sound_reason));
    }
    if (a.llm_verdict !== null) {
      const fp = a.llm_verdict && a.sound_valid === 0, fn = !a.llm_verdict && a.sound_valid === 1;
      const judged = calls.filter((c) => c.node !== "generator");
      judged.forEach((c, i) => card.append(messagesBlock("critic-prompt", (c.node === "critic" ? "Critic's prompt" : `${c.node}: prompt`) + (judged.length > 1 ? ` ${i + 1}` : ""), c.messages, c.reply, c)));
      card.append(el("div", { class: "label llm" }, "LLM verifier: ", el("span", { class: a.llm_verdict ? "ok" : "bad", text: a.llm_verdict ? "said valid" : "said invalid" }),
        fp ? el("span", { class: "flag", text: "false positive" }) : null, fn ? el("span", { class: "flag", text: "false negative" }) : null));
      if (a.llm_critique) card.append(textBlock("critique", a.llm_critique));
    }
    if (a.feedback) card.append(el("div", { class: "label", text: "Handed back to the generator" }), textBlock("feedback", a.feedback));
    const timed = calls.filter((c) => c.seconds !== null && c.seconds !== undefined);
    const took = timed.length ? ` · its calls took ${timed.reduce((t, c) => t + c.seconds, 0).toFixed(2)} s when made` : "";
    card.append(el("div", { class: "usage", text: `tokens: ${a.prompt_tokens} in, ${a.completion_tokens} out · LLM calls ${a.llm_calls} · cache hits ${a.cache_hits}${took}` }));
    section.append(card);
  }
  return section;
}

start();
