// rstorm UI: shared helpers for index.html, topology.html and component.html.
// Plain ES2017, no dependencies. Everything inserted into the page goes
// through textContent / attributes, never innerHTML, so API text is escaped.
'use strict';

const RS = (() => {
  const POLL_MS = 5000;
  const WINDOWS = [
    ['600', '10 minutes'],
    ['10800', '3 hours'],
    ['86400', '1 day'],
    [':all-time', 'All time'],
  ];
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // ---- DOM ----------------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  // el('a', {href: x, class: 'y', text: 'z', title: 't', dataset: {k: v}}, child...)
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') node.textContent = String(v);
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else if (k === 'style' && typeof v === 'object') Object.assign(node.style, v);
      else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(node, children) {
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  function setText(node, text) {
    const t = text === undefined || text === null ? '' : String(text);
    if (node && node.textContent !== t) node.textContent = t;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function show(node, visible) {
    if (node) node.hidden = !visible;
  }

  // ---- URL ----------------------------------------------------------------

  function param(name, fallback) {
    const v = new URLSearchParams(window.location.search).get(name);
    return v === null || v === '' ? fallback : v;
  }

  function setParam(name, value) {
    const url = new URL(window.location.href);
    url.searchParams.set(name, value);
    window.history.replaceState(null, '', url.toString());
  }

  function qs(params) {
    return Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v))
      .join('&');
  }

  const enc = encodeURIComponent;

  function topologyHref(id, window_) {
    return 'topology.html?' + qs({id, window: window_ && window_ !== '600' ? window_ : ''});
  }

  function componentHref(topology, component, window_) {
    return 'component.html?' + qs({topology, component, window: window_ && window_ !== '600' ? window_ : ''});
  }

  // ---- errors -------------------------------------------------------------

  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status;
    }
  }

  const bannerMessages = new Map();  // source -> message

  function renderBanner() {
    const banner = $('error-banner');
    if (!banner) return;
    const messages = Array.from(new Set(bannerMessages.values()));
    clear(banner);
    for (const m of messages) banner.appendChild(el('div', {text: m}));
    banner.hidden = messages.length === 0;
  }

  function reportError(source, err) {
    bannerMessages.set(source, err instanceof Error ? err.message : String(err));
    renderBanner();
  }

  function clearError(source) {
    if (bannerMessages.delete(source)) renderBanner();
  }

  // ---- HTTP ---------------------------------------------------------------

  async function request(method, path, body) {
    const init = {method, headers: {Accept: 'application/json'}, cache: 'no-store'};
    if (method !== 'GET') {
      init.headers['X-Requested-By'] = 'rstorm-ui';
      init.headers['Content-Type'] = 'application/json';
      init.body = body === undefined ? '' : JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (e) {
      throw new ApiError('The UI cannot reach rstorm-ui at ' + window.location.origin +
                         ' (' + (e && e.message ? e.message : 'network error') + '). Is it running?', 0);
    }
    let data = null;
    const text = await response.text();
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = null;
    }
    if (!response.ok) {
      const what = data && (data.errorMessage || data.error);
      throw new ApiError(what ? String(what) : method + ' ' + path + ' failed: HTTP ' + response.status,
                         response.status);
    }
    if (data === null) throw new ApiError(method + ' ' + path + ': the answer is not JSON', response.status);
    return data;
  }

  const getJSON = (path) => request('GET', path);
  const postJSON = (path, body) => request('POST', path, body);

  // ---- polling --------------------------------------------------------------

  // Runs `fn` now and then every POLL_MS after each run finishes (never two at
  // once). Returns {refresh()} to run it again immediately.
  function poll(source, fn) {
    let timer = null;
    let running = null;
    let again = false;
    async function run() {
      if (running) {
        again = true;
        return running;
      }
      clearTimeout(timer);
      running = (async () => {
        try {
          await fn();
          clearError(source);
        } catch (e) {
          reportError(source, e);
        }
      })();
      await running;
      running = null;
      if (again) {
        again = false;
        return run();
      }
      timer = setTimeout(run, POLL_MS);
    }
    run();
    return {refresh: run};
  }

  // ---- formatting -----------------------------------------------------------

  function num(v) {
    const n = typeof v === 'number' ? v : parseFloat(v);
    return Number.isFinite(n) ? n : 0;
  }

  function int(v) {
    if (v === undefined || v === null || v === '') return '';
    return Math.round(num(v)).toLocaleString('en-US');
  }

  function fixed(v, digits) {
    if (v === undefined || v === null || v === '') return '';
    return num(v).toFixed(digits === undefined ? 3 : digits);
  }

  function pct(v, digits) {
    return num(v).toFixed(digits === undefined ? 1 : digits) + ' %';
  }

  function mb(v) {
    const n = num(v);
    if (Math.abs(n) >= 10240) return (n / 1024).toFixed(1) + ' GB';
    return (Math.round(n * 10) / 10).toLocaleString('en-US') + ' MB';
  }

  function cpu(v) {
    return (Math.round(num(v) * 10) / 10).toLocaleString('en-US');
  }

  function duration(secs) {
    let s = Math.max(0, Math.round(num(secs)));
    const d = Math.floor(s / 86400);
    const h = Math.floor(s / 3600) % 24;
    const m = Math.floor(s / 60) % 60;
    s %= 60;
    const out = [];
    if (d) out.push(d + 'd');
    if (d || h) out.push(h + 'h');
    if (d || h || m) out.push(m + 'm');
    out.push(s + 's');
    return out.join(' ');
  }

  function time(ms) {
    if (ms === undefined || ms === null || ms === '') return '';
    const t = new Date(num(ms) > 1e11 ? num(ms) : num(ms) * 1000);
    if (Number.isNaN(t.getTime())) return String(ms);
    const pad = (x) => String(x).padStart(2, '0');
    return t.getFullYear() + '-' + pad(t.getMonth() + 1) + '-' + pad(t.getDate()) + ' ' +
           pad(t.getHours()) + ':' + pad(t.getMinutes()) + ':' + pad(t.getSeconds());
  }

  function hostPort(host, port) {
    if (!host) return '';
    return port === undefined || port === null || port === '' ? String(host) : host + ':' + port;
  }

  // OK <= 10 %, LOW <= 50 %, HIGH above: the same cut for capacity (a fraction)
  // and for the backpressured share.
  function level(fraction) {
    const f = num(fraction);
    if (f <= 0.1) return 'OK';
    if (f <= 0.5) return 'LOW';
    return 'HIGH';
  }

  function levelClass(lvl) {
    return 'lvl-' + String(lvl || 'OK').toLowerCase();
  }

  function badge(text, cls) {
    return el('span', {class: 'badge ' + (cls || ''), text});
  }

  function statusBadge(status) {
    return el('span', {class: 'badge status-' + String(status || '').toLowerCase(), text: status || ''});
  }

  // A horizontal bar: segments [{value, cls, title}] out of total.
  function bar(total, segments, label) {
    const outer = el('div', {class: 'bar', title: label || ''});
    const t = num(total);
    for (const s of segments) {
      const w = t > 0 ? Math.max(0, Math.min(100, 100 * num(s.value) / t)) : 0;
      outer.appendChild(el('div', {class: 'bar-seg ' + (s.cls || ''), style: {width: w.toFixed(2) + '%'},
                                   title: s.title || label || ''}));
    }
    const wrap = el('div', {class: 'bar-wrap'}, outer);
    if (label) wrap.appendChild(el('div', {class: 'bar-label', text: label}));
    return wrap;
  }

  function link(href, text, attrs) {
    return el('a', Object.assign({href, text}, attrs || {}));
  }

  function logLink(href, text) {
    if (!href) return null;
    return el('a', {href, text: text || 'log', target: '_blank', rel: 'noopener noreferrer', class: 'log-link'});
  }

  // ---- tables ---------------------------------------------------------------

  // A cell: a string / number (text), or {text, cls, title, node: () => Node, sig}.
  // Cells are rebuilt only when their signature changes, and rows are keyed,
  // so polling does not replace elements that did not change (no flicker, and
  // links stay the same element).
  function cellSig(c) {
    if (c === null || c === undefined) return '';
    if (typeof c !== 'object') return 't:' + c;
    return JSON.stringify([c.text, c.cls, c.title, c.sig, c.href]);
  }

  function fillCell(td, c) {
    const sig = cellSig(c);
    if (td.__sig === sig) return;
    td.__sig = sig;
    clear(td);
    if (c === null || c === undefined) return;
    if (typeof c !== 'object') {
      td.textContent = String(c);
      return;
    }
    td.className = c.cls || '';
    if (c.title) td.title = c.title;
    else td.removeAttribute('title');
    if (c.node) append(td, [c.node()]);
    else if (c.href) td.appendChild(link(c.href, c.text));
    else if (c.text !== undefined && c.text !== null) td.textContent = String(c.text);
  }

  // tbody: a <tbody>; items: array; key(item) -> string; cells(item) -> [cell];
  // rowClass: class for each row. empty: text when there are no items.
  function syncRows(tbody, items, opts) {
    const key = opts.key;
    const existing = new Map();
    for (const tr of Array.from(tbody.children)) {
      if (tr.dataset.key !== undefined) existing.set(tr.dataset.key, tr);
      else tbody.removeChild(tr);
    }
    const width = tbody.parentElement ? tbody.parentElement.querySelectorAll('thead th').length : 1;
    if (!items.length) {
      for (const tr of existing.values()) tbody.removeChild(tr);
      tbody.appendChild(el('tr', {class: 'empty'}, el('td', {colspan: width || 1, text: opts.empty || 'None'})));
      return;
    }
    let prev = null;
    for (const item of items) {
      const k = String(key(item));
      let tr = existing.get(k);
      if (tr) existing.delete(k);
      else {
        tr = el('tr', {class: opts.rowClass || null});
        tr.dataset.key = k;
      }
      if (opts.rowAttrs) setAttrs(tr, opts.rowAttrs(item));
      const cells = opts.cells(item);
      while (tr.children.length > cells.length) tr.removeChild(tr.lastChild);
      while (tr.children.length < cells.length) tr.appendChild(document.createElement('td'));
      cells.forEach((c, i) => fillCell(tr.children[i], c));
      const want = prev ? prev.nextSibling : tbody.firstChild;
      if (want !== tr) tbody.insertBefore(tr, want);
      prev = tr;
    }
    for (const tr of existing.values()) tbody.removeChild(tr);
  }

  // A <table> with the given headers: [[text, title?, numeric?]...]; returns it.
  function table(id, headers, cls) {
    const head = el('tr', null, headers.map((h) => {
      const [text, title, numeric] = Array.isArray(h) ? h : [h];
      return el('th', {text, title: title || null, class: numeric ? 'num' : null});
    }));
    return el('table', {id, class: 'data ' + (cls || '')}, el('thead', null, head), el('tbody'));
  }

  // Numeric cell.
  const n = (text, title) => ({text, cls: 'num', title});

  // ---- page chrome ----------------------------------------------------------

  function nav(current) {
    const bar_ = $('nav');
    if (!bar_) return;
    clear(bar_);
    bar_.appendChild(link('index.html', 'rstorm', {class: 'brand'}));
    bar_.appendChild(link('index.html', 'Cluster', {class: current && current.page === 'cluster' ? 'active' : null}));
    if (current && current.topologyId) {
      bar_.appendChild(el('span', {class: 'sep', text: '›'}));
      bar_.appendChild(link(topologyHref(current.topologyId, current.window),
                            'Topology ' + (current.topologyName || current.topologyId),
                            {class: current.page === 'topology' ? 'active' : null, id: 'nav-topology'}));
    }
    if (current && current.component) {
      bar_.appendChild(el('span', {class: 'sep', text: '›'}));
      bar_.appendChild(link(componentHref(current.topologyId, current.component, current.window),
                            current.component, {class: 'active'}));
    }
    bar_.appendChild(el('span', {class: 'spacer'}));
    bar_.appendChild(el('span', {id: 'updated', class: 'updated', title: 'Numbers refresh every 5 s'}));
  }

  function markUpdated() {
    setText($('updated'), 'updated ' + new Date().toLocaleTimeString());
  }

  // <select> of windows; onChange(value).
  function windowSelect(select, value, onChange) {
    clear(select);
    for (const [v, label] of WINDOWS) {
      select.appendChild(el('option', {value: v, text: label, selected: v === value}));
    }
    select.value = value;
    select.addEventListener('change', () => onChange(select.value));
  }

  // Stable colours for components (executor chips, graph stripes).
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#ff9da7',
                   '#9c755f', '#e15759', '#8cd17d', '#499894', '#d37295', '#a0cbe8', '#ffbe7d',
                   '#bab0ac', '#86bcb6'];

  function componentColours(names) {
    const sorted = Array.from(new Set(names)).sort();
    const map = new Map();
    sorted.forEach((name, i) => map.set(name, PALETTE[i % PALETTE.length]));
    return map;
  }

  return {
    $, el, svg, setText, clear, show, param, setParam, qs, enc, topologyHref, componentHref,
    ApiError, reportError, clearError, getJSON, postJSON, poll, num, int, fixed, pct, mb, cpu,
    duration, time, hostPort, level, levelClass, badge, statusBadge, bar, link, logLink, syncRows,
    table, n, nav, markUpdated, windowSelect, componentColours, WINDOWS,
  };
})();
