// rstorm UI: the topology page (topology.html?id=<id>&window=600).
'use strict';

(() => {
  const {$, el, svg, n} = RS;

  const topologyId = RS.param('id', '');
  let windowValue = RS.param('window', '600');
  let current = null;        // last /topology/{id} answer
  let vis = null;            // last /visualization answer
  let busy = false;          // an action is in flight
  let navName = null;
  let colours = new Map();   // component -> colour

  const api = (suffix) => '/api/v1/topology/' + RS.enc(topologyId) + (suffix || '');

  RS.nav({page: 'topology', topologyId, window: windowValue});
  RS.windowSelect($('window'), windowValue, (v) => {
    windowValue = v;
    RS.setParam('window', v);
    RS.nav({page: 'topology', topologyId, topologyName: navName, window: windowValue});
    poller.refresh();
  });

  // ---- summary --------------------------------------------------------------

  function renderSummary(t) {
    RS.setText($('topology-name'), t.name);
    RS.setText($('topology-id'), t.id);
    const status = $('status');
    RS.setText(status, t.status);
    status.className = 'status-' + String(t.status || '').toLowerCase();
    RS.setText($('status-reason'), t.statusReason || '');
    RS.setText($('topology-uptime'), t.uptime || RS.duration(t.uptimeSeconds));
    RS.setText($('topology-workers'), RS.int(t.workersTotal));
    RS.setText($('topology-executors'), RS.int(t.executorsTotal));
    RS.setText($('topology-tasks'), RS.int(t.tasksTotal));
    RS.setText($('topology-memory'), RS.int(t.requestedTotalMem) + ' / ' + RS.int(t.assignedTotalMem));
    RS.setText($('topology-cpu'), RS.cpu(t.requestedCpu) + ' / ' + RS.cpu(t.assignedCpu));
    RS.setText($('topology-timeout'), t.msgTimeout === undefined ? '' : t.msgTimeout + ' s');
    document.title = t.name + ' - rstorm UI';
    if (navName !== t.name) {
      navName = t.name;
      RS.nav({page: 'topology', topologyId, topologyName: t.name, window: windowValue});
    }
    updateButtons();
  }

  function updateButtons() {
    const s = current ? current.status : '';
    $('activate').disabled = busy || s !== 'INACTIVE';
    $('deactivate').disabled = busy || s !== 'ACTIVE';
    $('rebalance').disabled = busy || !['ACTIVE', 'INACTIVE', 'UNSCHEDULABLE'].includes(s);
    $('kill').disabled = busy || !s || s === 'KILLED';
  }

  function windowLabel(w) {
    const known = RS.WINDOWS.find(([v]) => v === w);
    return known ? known[1] : w;
  }

  function renderStats(t) {
    RS.syncRows($('topology-stats').tBodies[0], t.topologyStats || [], {
      key: (s) => s.window,
      rowAttrs: (s) => ({class: s.window === windowValue ? 'selected' : ''}),
      cells: (s) => [
        {node: () => RS.link(RS.topologyHref(topologyId, s.window), windowLabel(s.window)),
         sig: s.window, title: s.windowSeconds !== undefined ? 'covers ' + RS.duration(s.windowSeconds) : null},
        n(RS.int(s.emitted)), n(RS.int(s.transferred)), n(s.completeLatency),
        n(RS.int(s.acked)), n(RS.int(s.failed)),
      ],
    });
  }

  function backpressureCell(c) {
    const lvl = c.backpressure || RS.level(c.backpressuredSeconds);
    const share = RS.pct(100 * RS.num(c.backpressuredSeconds), 0);
    return {
      node: () => el('span', null, RS.badge(lvl, RS.levelClass(lvl)), ' ', el('span', {class: 'muted', text: share})),
      sig: lvl + share,
      title: 'busy ' + RS.pct(100 * RS.num(c.busySeconds), 0) + ', backpressured ' + share +
             ', idle ' + RS.pct(100 * RS.num(c.idleSeconds), 0),
    };
  }

  function errorCells(c) {
    const where = RS.hostPort(c.errorHost, c.errorPort);
    return [
      {node: () => (c.errorWorkerLogLink ? RS.logLink(c.errorWorkerLogLink, where) : where),
       sig: where + c.errorWorkerLogLink},
      {text: c.lastError || '', cls: 'error-text',
       title: c.errorTime ? RS.time(c.errorTime) + (c.errorLapsedSecs !== null && c.errorLapsedSecs !== undefined
         ? ' (' + RS.duration(c.errorLapsedSecs) + ' ago)' : '') : null},
    ];
  }

  function renderComponents(t) {
    const hint = 'window: ' + (t.windowHint || windowLabel(windowValue)) +
      (t.windowSeconds !== undefined ? ', measured over ' + RS.duration(t.windowSeconds) : '');
    RS.setText($('spouts-window'), hint);
    RS.setText($('bolts-window'), hint);
    RS.syncRows($('spouts').tBodies[0], t.spouts || [], {
      key: (s) => s.spoutId,
      rowClass: 'component-row',
      empty: 'No spouts',
      rowAttrs: (s) => ({dataset: {component: s.spoutId}}),
      cells: (s) => [
        {href: RS.componentHref(topologyId, s.spoutId, windowValue), text: s.spoutId},
        n(RS.int(s.executors)), n(RS.int(s.tasks)), n(RS.int(s.emitted)), n(RS.int(s.transferred)),
        n(s.completeLatency), n(RS.int(s.acked)), n(RS.int(s.failed)),
        backpressureCell(s),
      ].concat(errorCells(s)),
    });
    RS.syncRows($('bolts').tBodies[0], t.bolts || [], {
      key: (b) => b.boltId,
      rowClass: 'component-row',
      empty: 'No bolts',
      rowAttrs: (b) => ({dataset: {component: b.boltId}}),
      cells: (b) => [
        {href: RS.componentHref(topologyId, b.boltId, windowValue), text: b.boltId},
        n(RS.int(b.executors)), n(RS.int(b.tasks)), n(RS.int(b.emitted)), n(RS.int(b.transferred)),
        {text: b.capacity, cls: 'num ' + RS.levelClass(RS.level(b.capacity))},
        n(b.executeLatency), n(RS.int(b.executed)), n(RS.int(b.acked)), n(RS.int(b.failed)),
        n(RS.pct(100 * RS.num(b.busySeconds), 0)),
        backpressureCell(b),
      ].concat(errorCells(b)),
    });
  }

  function renderErrors(t) {
    const errors = t.errors || [];
    RS.syncRows($('errors').tBodies[0], errors, {
      key: (e) => [e.component, e.time, e.errorHost, e.errorPort, e.error].join('|'),
      rowClass: 'error-row',
      empty: 'No errors',
      cells: (e) => {
        const where = RS.hostPort(e.errorHost, e.errorPort);
        return [
          {text: RS.time(e.time), cls: 'nowrap',
           title: e.errorLapsedSecs !== undefined ? RS.duration(e.errorLapsedSecs) + ' ago' : null},
          {href: RS.componentHref(topologyId, e.component, windowValue), text: e.component},
          {node: () => (e.errorWorkerLogLink ? RS.logLink(e.errorWorkerLogLink, where) : where),
           sig: where + e.errorWorkerLogLink},
          {text: e.error, cls: 'error-text'},
        ];
      },
    });
  }

  function renderConfiguration(t) {
    const entries = Object.entries(t.configuration || {}).sort(([a], [b]) => a.localeCompare(b));
    RS.syncRows($('configuration').tBodies[0], entries, {
      key: ([k]) => k,
      cells: ([k, v]) => [{text: k, cls: 'mono'},
                          {text: typeof v === 'string' ? v : JSON.stringify(v), cls: 'mono'}],
    });
  }

  function renderAlerts(t) {
    const uns = $('unschedulable-top');
    const unsText = t.status === 'UNSCHEDULABLE'
      ? 'The scheduler cannot place this topology: ' + (t.statusReason || t.schedulerInfo || 'no reason given')
      : '';
    RS.setText(uns, unsText);
    RS.show(uns, !!unsText);

    const stall = $('stall');
    const s = t.stall;
    if (s) {
      const parts = ['Stalled for ' + RS.duration(s.stalledSecs) + ' with ' + RS.int(s.pending) + ' tuples pending.'];
      const list = (name, xs) => {
        if (xs && xs.length) parts.push(name + ': ' + xs.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ') + '.');
      };
      list('Stalled spouts', s.stalledSpouts);
      list('Full queues', s.fullQueues);
      list('Queued', s.queued);
      const text = parts.join(' ');
      if (stall.__sig !== text) {
        stall.__sig = text;
        stall.replaceChildren(el('h3', {text: 'Topology stalled'}), el('div', {text}));
      }
    }
    RS.show(stall, !!s);

    const failing = t.failingWorkers || [];
    RS.show($('failing-workers'), failing.length > 0);
    RS.syncRows($('failing-workers-table').tBodies[0], failing, {
      key: (f) => f.host + ':' + f.port,
      cells: (f) => [RS.hostPort(f.host, f.port), {text: f.reason, cls: 'error-text'},
                     n(f.exitStatus), n(RS.int(f.restarts)),
                     f.runningSince ? 'running again since ' + RS.time(f.runningSince) : 'down'],
    });

    const unreachable = t.metricsUnreachable || [];
    const mu = $('metrics-unreachable');
    RS.setText(mu, unreachable.length
      ? 'The UI cannot read the metrics of: ' + unreachable.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ') +
        ' (their figures are missing from the stats)'
      : '');
    RS.show(mu, unreachable.length > 0);
  }

  // ---- actions --------------------------------------------------------------

  function say(text, failed) {
    const m = $('action-message');
    RS.setText(m, text);
    m.className = 'action-message' + (failed ? ' failed' : '');
  }

  async function act(op, path, body) {
    busy = true;
    updateButtons();
    say(op + '…');
    try {
      const answer = await RS.postJSON(api(path), body);
      say(op + ': ' + (answer.status || 'done') + ' at ' + new Date().toLocaleTimeString());
      RS.clearError('action');
    } catch (e) {
      say(op + ' failed', true);
      RS.reportError('action', op + ' failed: ' + e.message);
    } finally {
      busy = false;
      updateButtons();
      poller.refresh();
    }
  }

  const name = () => (current ? current.name : topologyId);

  $('activate').addEventListener('click', () => act('activate', '/activate'));
  $('deactivate').addEventListener('click', () => {
    if (window.confirm('Do you really want to deactivate topology "' + name() + '"?')) {
      act('deactivate', '/deactivate');
    }
  });
  $('kill').addEventListener('click', () => {
    const wait = window.prompt('Do you really want to kill topology "' + name() +
                               '"? If yes, give the wait time in seconds:',
                               String(current && current.msgTimeout !== undefined ? current.msgTimeout : 30));
    if (wait === null) return;
    if (!/^\s*\d+\s*$/.test(wait)) {
      RS.reportError('action', 'Kill: the wait time "' + wait + '" is not a number of seconds');
      return;
    }
    act('kill', '/kill/' + parseInt(wait, 10));
  });

  const form = $('rebalance-form');
  $('rebalance').addEventListener('click', () => {
    if (!form.hidden) {
      form.hidden = true;
      return;
    }
    $('rebalance-wait').value = String(current && current.msgTimeout !== undefined ? current.msgTimeout : 30);
    $('rebalance-workers').value = '';
    $('rebalance-workers').placeholder = current ? String(current.workersTotal) : '';
    const box = $('rebalance-executors');
    RS.clear(box);
    const comps = current ? (current.spouts || []).map((s) => [s.spoutId, s.executors])
      .concat((current.bolts || []).map((b) => [b.boltId, b.executors])) : [];
    for (const [c, e] of comps) {
      box.appendChild(el('label', {text: c, for: 'rebalance-exec-' + c}));
      box.appendChild(el('input', {type: 'number', min: 1, step: 1, id: 'rebalance-exec-' + c,
                                   placeholder: String(e), dataset: {component: c}}));
    }
    form.hidden = false;
    $('rebalance-wait').focus();
  });
  $('rebalance-cancel').addEventListener('click', () => { form.hidden = true; });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const wait = $('rebalance-wait').value.trim();
    if (wait !== '' && !/^\d+$/.test(wait)) {
      RS.reportError('action', 'Rebalance: the wait time "' + wait + '" is not a number of seconds');
      return;
    }
    const options = {};
    const workers = $('rebalance-workers').value.trim();
    if (workers !== '') {
      if (!/^\d+$/.test(workers) || parseInt(workers, 10) < 1) {
        RS.reportError('action', 'Rebalance: workers must be a positive integer');
        return;
      }
      options.numWorkers = parseInt(workers, 10);
    }
    const executors = {};
    for (const input of $('rebalance-executors').querySelectorAll('input')) {
      const v = input.value.trim();
      if (v === '') continue;
      if (!/^\d+$/.test(v) || parseInt(v, 10) < 1) {
        RS.reportError('action', 'Rebalance: executors of ' + input.dataset.component + ' must be a positive integer');
        return;
      }
      executors[input.dataset.component] = parseInt(v, 10);
    }
    if (Object.keys(executors).length) options.executors = executors;
    form.hidden = true;
    act('rebalance', '/rebalance/' + (wait === '' ? '0' : wait),
        Object.keys(options).length ? {rebalanceOptions: options} : undefined);
  });

  // ---- graph ----------------------------------------------------------------

  const NODE_W = 176;
  const NODE_H = 58;
  const GAP_X = 96;
  const GAP_Y = 28;
  const PAD = 30;
  let graphSig = null;
  let graphNodes = new Map();   // component -> {g, rect, metric, title}
  let graphEdges = [];          // {path, from, title}
  const colourSelect = $('graph-colour');
  colourSelect.addEventListener('change', () => { if (vis) updateGraph(vis); renderGraphLegend(); });

  function structureOf(v) {
    return Object.keys(v).sort().map((c) => [c, v[c][':type'],
      (v[c][':inputs'] || []).map((i) => [i[':component'], i[':stream'], i[':grouping']])]);
  }

  // Layered layout (Sugiyama style): back edges (found by DFS from the spouts)
  // are set aside so cycles do not loop; every other edge goes at least one
  // layer right (longest path from the sources); edges longer than one layer
  // pass through dummy points so they go around nodes; a few barycentre sweeps
  // order each layer. Back edges run in the gaps and a lane under the graph.
  const DUMMY_H = 14;

  function layout(v) {
    const names = Object.keys(v).sort((a, b) => {
      const sa = v[a][':type'] === 'spout' ? 0 : 1;
      const sb = v[b][':type'] === 'spout' ? 0 : 1;
      return sa - sb || a.localeCompare(b);
    });
    const known = new Set(names);
    const edgeMap = new Map();
    for (const c of names) {
      for (const i of v[c][':inputs'] || []) {
        const from = i[':component'];
        if (!known.has(from)) continue;
        const k = from + '\u0000' + c;
        if (!edgeMap.has(k)) edgeMap.set(k, {from, to: c, streams: []});
        edgeMap.get(k).streams.push(i[':stream'] + ' (' + i[':grouping'] + ')');
      }
    }
    const edges = Array.from(edgeMap.values());
    const out = new Map(names.map((c) => [c, []]));
    const indeg = new Map(names.map((c) => [c, 0]));
    for (const e of edges) {
      out.get(e.from).push(e);
      indeg.set(e.to, indeg.get(e.to) + 1);
    }
    const state = new Map();   // 1 on the DFS stack, 2 done
    const order = [];
    const visit = (c) => {
      state.set(c, 1);
      for (const e of out.get(c)) {
        const st = state.get(e.to);
        if (st === 1) e.back = true;
        else if (!st) visit(e.to);
      }
      state.set(c, 2);
      order.push(c);
    };
    const starts = names.filter((c) => v[c][':type'] === 'spout')
      .concat(names.filter((c) => indeg.get(c) === 0), names);
    for (const c of starts) if (!state.get(c)) visit(c);
    order.reverse();
    const layer = new Map(names.map((c) => [c, 0]));
    for (const c of order) {
      for (const e of out.get(c)) {
        if (!e.back && e.from !== e.to) layer.set(e.to, Math.max(layer.get(e.to), layer.get(c) + 1));
      }
    }
    const nLayers = 1 + Math.max(0, ...names.map((c) => layer.get(c)));
    const layers = Array.from({length: nLayers}, () => []);
    for (const c of order) layers[layer.get(c)].push(c);
    // Dummy points for long edges; neighbours for the barycentre sweeps.
    const preds = new Map(names.map((c) => [c, []]));
    const succs = new Map(names.map((c) => [c, []]));
    const link = (a, b) => { preds.get(b).push(a); succs.get(a).push(b); };
    let dummies = 0;
    for (const e of edges) {
      e.via = [];
      if (e.back || e.from === e.to) continue;
      let prev = e.from;
      for (let l = layer.get(e.from) + 1; l < layer.get(e.to); l++) {
        const d = '\u0001' + (dummies++);
        preds.set(d, []);
        succs.set(d, []);
        layers[l].push(d);
        e.via.push(d);
        link(prev, d);
        prev = d;
      }
      link(prev, e.to);
    }
    const isDummy = (c) => c.charCodeAt(0) === 1;
    const pos = new Map();
    layers.forEach((l) => l.forEach((c, i) => pos.set(c, i)));
    const sweep = (li, neighbours) => {
      const l = layers[li];
      const bary = new Map(l.map((c) => {
        const ns = neighbours.get(c);
        return [c, ns.length ? ns.reduce((a, x) => a + pos.get(x), 0) / ns.length : pos.get(c)];
      }));
      l.sort((a, b) => bary.get(a) - bary.get(b));
      l.forEach((c, i) => pos.set(c, i));
    };
    for (let round = 0; round < 6; round++) {
      for (let li = 1; li < layers.length; li++) sweep(li, preds);
      for (let li = layers.length - 2; li >= 0; li--) sweep(li, succs);
    }
    const size = (l) => l.reduce((a, c) => a + (isDummy(c) ? DUMMY_H : NODE_H), 0) + Math.max(0, l.length - 1) * GAP_Y;
    const height = Math.max(NODE_H, ...layers.map(size));
    const coords = new Map();
    layers.forEach((l, li) => {
      let y = PAD + (height - size(l)) / 2;
      for (const c of l) {
        coords.set(c, {x: PAD + li * (NODE_W + GAP_X), y, h: isDummy(c) ? DUMMY_H : NODE_H});
        y += (isDummy(c) ? DUMMY_H : NODE_H) + GAP_Y;
      }
    });
    const back = edges.filter((e) => e.back && e.from !== e.to);
    back.forEach((e, i) => { e.lane = i; });
    return {
      names, edges, coords,
      width: PAD * 2 + nLayers * NODE_W + (nLayers - 1) * GAP_X,
      height: PAD * 2 + height + (back.length ? 24 + 10 * back.length : 0),
      bottom: PAD + height,
    };
  }

  // A polyline with rounded corners.
  function rounded(points, r) {
    let d = 'M' + points[0].x + ',' + points[0].y;
    for (let i = 1; i < points.length - 1; i++) {
      const p = points[i - 1];
      const q = points[i];
      const nx = points[i + 1];
      const l1 = Math.hypot(q.x - p.x, q.y - p.y) || 1;
      const l2 = Math.hypot(nx.x - q.x, nx.y - q.y) || 1;
      const r1 = Math.min(r, l1 / 2);
      const r2 = Math.min(r, l2 / 2);
      d += ' L' + (q.x - (q.x - p.x) / l1 * r1) + ',' + (q.y - (q.y - p.y) / l1 * r1) +
           ' Q' + q.x + ',' + q.y + ' ' + (q.x + (nx.x - q.x) / l2 * r2) + ',' + (q.y + (nx.y - q.y) / l2 * r2);
    }
    const last = points[points.length - 1];
    return d + ' L' + last.x + ',' + last.y;
  }

  function edgePath(e, L) {
    const a = L.coords.get(e.from);
    const b = L.coords.get(e.to);
    if (e.from === e.to) {
      const x = a.x + NODE_W - 30;
      const y = a.y;
      return 'M' + x + ',' + y + ' C' + (x + 10) + ',' + (y - 34) + ' ' + (x + 50) + ',' + (y - 10) + ' ' +
             (a.x + NODE_W) + ',' + (y + 14);
    }
    if (e.back) {
      const ya = a.y + NODE_H / 2 + 8;
      const yb = b.y + NODE_H / 2 + 8;
      const xs = a.x + NODE_W + 16 + 6 * e.lane;
      const xt = b.x - 16 - 6 * e.lane;
      const lane = L.bottom + 16 + 10 * e.lane;
      return rounded([{x: a.x + NODE_W, y: ya}, {x: xs, y: ya}, {x: xs, y: lane}, {x: xt, y: lane},
                      {x: xt, y: yb}, {x: b.x - 2, y: yb}], 10);
    }
    // Forward: horizontal tangents at each end and through each dummy point.
    const pts = [{x: a.x + NODE_W, y: a.y + NODE_H / 2}];
    for (const dId of e.via) {
      const dc = L.coords.get(dId);
      pts.push({x: dc.x, y: dc.y + DUMMY_H / 2}, {x: dc.x + NODE_W, y: dc.y + DUMMY_H / 2});
    }
    pts.push({x: b.x - 2, y: b.y + NODE_H / 2});
    let d = 'M' + pts[0].x + ',' + pts[0].y;
    for (let i = 0; i + 1 < pts.length; i += 2) {
      const p = pts[i];
      const q = pts[i + 1];
      const dx = Math.max(30, (q.x - p.x) / 2);
      d += ' C' + (p.x + dx) + ',' + p.y + ' ' + (q.x - dx) + ',' + q.y + ' ' + q.x + ',' + q.y;
      if (i + 2 < pts.length) d += ' L' + pts[i + 2].x + ',' + pts[i + 2].y;
    }
    return d;
  }

  function shorten(text, max) {
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  function buildGraph(v) {
    const L = layout(v);
    const g = $('graph');
    RS.clear(g);
    g.setAttribute('viewBox', '0 0 ' + L.width + ' ' + L.height);
    g.setAttribute('width', String(L.width));
    g.setAttribute('height', String(L.height));
    g.appendChild(svg('defs', null,
      svg('marker', {id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
                     markerUnits: 'userSpaceOnUse', orient: 'auto'},
          svg('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#6b7785'}))));
    const edgeLayer = svg('g', {class: 'edges'});
    const nodeLayer = svg('g', {class: 'nodes'});
    g.appendChild(edgeLayer);
    g.appendChild(nodeLayer);
    graphEdges = [];
    for (const e of L.edges) {
      const title = svg('title', {text: e.from + ' → ' + e.to + ': ' + e.streams.join(', ')});
      const path = svg('path', {class: 'edge' + (e.back || e.from === e.to ? ' back' : ''), d: edgePath(e, L),
                                'marker-end': 'url(#arrow)', dataset: {from: e.from, to: e.to}}, title);
      edgeLayer.appendChild(path);
      graphEdges.push({path, from: e.from});
    }
    graphNodes = new Map();
    for (const c of L.names) {
      const {x, y} = L.coords.get(c);
      const spout = v[c][':type'] === 'spout';
      const rect = svg('rect', {class: 'box', width: NODE_W, height: NODE_H, rx: spout ? 20 : 6, ry: spout ? 20 : 6});
      const stripe = svg('rect', {x: spout ? 10 : 0, y: 0, width: 6, height: NODE_H, fill: colours.get(c) || '#999'});
      const metric = svg('text', {x: 16, y: 38});
      const title = svg('title');
      const node = svg('g', {class: 'node ' + (spout ? 'spout' : 'bolt'), transform: 'translate(' + x + ',' + y + ')',
                             dataset: {component: c}, tabindex: 0, role: 'link'},
        title, rect, stripe,
        svg('text', {class: 'name', x: 16, y: 20, text: shorten(c, 20)}),
        svg('text', {class: 'kind', x: NODE_W - 10, y: 14, 'text-anchor': 'end', text: spout ? 'spout' : 'bolt'}),
        metric,
        svg('text', {class: 'sub', x: 16, y: 52, text: ''}));
      const go = () => { window.location.href = RS.componentHref(topologyId, c, windowValue); };
      node.addEventListener('click', go);
      node.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') go(); });
      nodeLayer.appendChild(node);
      graphNodes.set(c, {node, rect, metric, title, execs: node.lastChild});
    }
  }

  function nodeLevel(d) {
    if (colourSelect.value === 'backpressure') {
      return d[':backpressure'] ? String(d[':backpressure']).toUpperCase() : RS.level(d[':backpressuredShare']);
    }
    return d[':type'] === 'spout' ? 'NA' : RS.level(d[':capacity']);
  }

  function updateGraph(v) {
    const maxT = Math.max(1, ...Object.values(v).map((d) => RS.num(d[':transferred'])));
    for (const [c, parts] of graphNodes) {
      const d = v[c];
      if (!d) continue;
      const spout = d[':type'] === 'spout';
      const lvl = nodeLevel(d);
      const cls = 'box ' + RS.levelClass(lvl === 'NA' ? 'na' : lvl);
      if (parts.rect.getAttribute('class') !== cls) parts.rect.setAttribute('class', cls);
      const latency = RS.fixed(d[':latency'], 2) + ' ms';
      let metric;
      if (colourSelect.value === 'backpressure') {
        metric = 'bp ' + RS.pct(100 * RS.num(d[':backpressuredShare']), 0) + ' · ' + latency;
      } else {
        metric = spout ? 'complete ' + latency : 'cap ' + RS.fixed(d[':capacity'], 3) + ' · ' + latency;
      }
      RS.setText(parts.metric, metric);
      const execs = d[':executors'] !== undefined ? '×' + d[':executors'] + ' · ' : '';
      RS.setText(parts.execs, execs + shortCount(d[':transferred']) + ' transferred');
      RS.setText(parts.title, c + ' (' + d[':type'] + ')\ncapacity ' + RS.fixed(d[':capacity'], 3) +
        '\n' + (spout ? 'complete' : 'execute') + ' latency ' + latency +
        '\nbackpressure ' + (d[':backpressure'] || RS.level(d[':backpressuredShare'])) +
        (d[':backpressuredShare'] !== undefined ? ' (' + RS.pct(100 * RS.num(d[':backpressuredShare']), 0) + ')' : '') +
        '\ntransferred ' + RS.int(d[':transferred']) + ' (10 min)\nclick for details');
    }
    for (const e of graphEdges) {
      const t = v[e.from] ? RS.num(v[e.from][':transferred']) : 0;
      const w = (1.2 + 3.5 * Math.sqrt(t / maxT)).toFixed(2);
      if (e.path.getAttribute('stroke-width') !== w) e.path.setAttribute('stroke-width', w);
    }
  }

  function renderGraphLegend() {
    const box = $('graph-legend');
    const mode = colourSelect.value;
    const sig = mode;
    if (box.__sig === sig) return;
    box.__sig = sig;
    const sw = (cls, text) => el('span', null, el('span', {class: 'swatch ' + cls}), text);
    const items = mode === 'backpressure'
      ? [sw('lvl-ok', 'OK: backpressured ≤ 10 %'), sw('lvl-low', 'LOW: ≤ 50 %'), sw('lvl-high', 'HIGH: above 50 %')]
      : [sw('lvl-ok', 'capacity ≤ 0.1'), sw('lvl-low', '≤ 0.5'), sw('lvl-high', 'above 0.5'), sw('lvl-na', 'spout')];
    items.push(el('span', {text: 'Rounded boxes are spouts; edge width follows tuples transferred; dashed edges close a cycle. Click a component for details.'}));
    box.replaceChildren(...items);
  }

  function renderGraph(v) {
    vis = v;
    const sig = JSON.stringify(structureOf(v));
    if (sig !== graphSig) {
      graphSig = sig;
      buildGraph(v);
    }
    updateGraph(v);
    renderGraphLegend();
  }

  // ---- placement ------------------------------------------------------------

  let placementSig = null;
  let nodeHosts = new Map();
  // A node as the traffic names it: its host, or its id where nodes share a
  // host (several supervisors on one machine, as in a dev cluster).
  function nodeLabel(id) {
    const host = nodeHosts.get(id);
    if (!host) return id;
    let same = 0;
    for (const h of nodeHosts.values()) if (h === host) same++;
    return same > 1 ? id : host;
  }
  let lastTraffic = [];
  const map = $('placement-map');

  function chipLabel(id) {
    const m = /^\[?(\d+)-(\d+)\]?$/.exec(String(id));
    if (!m) return String(id);
    return m[1] === m[2] ? m[1] : m[1] + '-' + m[2];
  }

  function resourceBar(label, capacity, used, topo, unit) {
    const fmt = unit === 'MB' ? RS.mb : (x) => RS.cpu(x);
    const other = Math.max(0, RS.num(used) - RS.num(topo));
    const text = fmt(used) + ' / ' + fmt(capacity) + (unit === 'MB' ? '' : ' cpu') + ', topology ' + fmt(topo);
    return [
      el('span', {text: label}),
      RS.bar(capacity, [
        {value: topo, cls: 'topo', title: 'this topology: ' + fmt(topo)},
        {value: other, cls: 'other', title: 'other topologies: ' + fmt(other)},
      ], text),
    ];
  }

  function buildPlacementMap(p) {
    const racks = p.racks || [];
    nodeHosts = new Map();
    const children = [];
    for (const r of racks) {
      const nodes = [];
      for (const nd of r.nodes || []) {
        nodeHosts.set(nd.id, nd.host || nd.id);
        const workers = (nd.workers || []).map((w) => el('div', {class: 'worker', dataset: {port: w.port},
                                                               title: 'worker ' + RS.hostPort(nd.host, w.port)},
          el('div', {class: 'worker-title'},
             el('span', null, 'port ', el('b', {text: w.port})),
             el('span', {class: 'muted', text: RS.mb(w.memory) + ' · ' + RS.cpu(w.cpu) + ' cpu'})),
          el('div', {class: 'executors'}, (w.executors || []).map((e) => el('span', {
            class: 'executor',
            style: {background: colours.get(e.component) || '#888'},
            dataset: {component: e.component, executor: e.id},
            title: e.component + ' ' + e.id + '\nmemory ' + RS.mb(e.memory) + ', cpu ' + RS.cpu(e.cpu),
            text: chipLabel(e.id),
          })))));
        nodes.push(el('div', {class: 'node' + (workers.length ? '' : ' idle'), dataset: {node: nd.id}},
          el('div', {class: 'node-title'}, el('span', {text: nd.host || nd.id}),
             el('span', {class: 'mono', text: nd.id, title: nd.id})),
          el('div', {class: 'res'},
             resourceBar('mem', nd.memoryCapacity, nd.memoryUsed, nd.memoryTopology, 'MB'),
             resourceBar('cpu', nd.cpuCapacity, nd.cpuUsed, nd.cpuTopology, 'cpu')),
          el('div', {class: 'workers'}, workers.length ? workers
            : el('div', {class: 'muted', text: 'no workers of this topology'}))));
      }
      children.push(el('div', {class: 'rack', dataset: {rack: r.rack}},
                       el('div', {class: 'rack-title', text: 'rack ' + r.rack}),
                       el('div', {class: 'rack-nodes'}, nodes)));
    }
    if (!children.length) children.push(el('p', {class: 'muted', text: 'No nodes.'}));
    children.push(svg('svg', {class: 'traffic-overlay', 'aria-hidden': 'true'}));
    map.replaceChildren(...children);

    // Legend: components present.
    const comps = new Set();
    for (const r of racks) for (const nd of r.nodes || []) for (const w of nd.workers || []) {
      for (const e of w.executors || []) comps.add(e.component);
    }
    const legend = Array.from(comps).sort().map((c) => el('span', null,
      el('span', {class: 'swatch', style: {background: colours.get(c) || '#888'}}), c));
    legend.push(el('span', null, el('span', {class: 'swatch', style: {background: 'var(--topo)'}}), 'this topology'),
                el('span', null, el('span', {class: 'swatch', style: {background: 'var(--other)'}}), 'other topologies'));
    legend.push(el('span', {text: 'Chips are executors (task ids); hover for memory and CPU. Lines: tuples between nodes.'}));
    $('placement-legend').replaceChildren(...legend);

    // Workers table.
    const rows = [];
    for (const r of racks) for (const nd of r.nodes || []) for (const w of nd.workers || []) rows.push([nd, w]);
    RS.syncRows($('placement-workers').tBodies[0], rows, {
      key: ([nd, w]) => nd.id + ':' + w.port,
      empty: 'No workers',
      cells: ([nd, w]) => [nd.host || nd.id, n(w.port), n((w.executors || []).length), n(RS.int(w.memory)),
                           n(RS.cpu(w.cpu)),
                           {node: () => RS.logLink(w.workerLogLink), sig: w.workerLogLink || ''}],
    });
  }

  function shortCount(x) {
    const v = RS.num(x);
    if (v >= 1e9) return (v / 1e9).toFixed(1) + 'G';
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e4) return (v / 1e3).toFixed(0) + 'k';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
    return String(Math.round(v));
  }

  // Arcs between node boxes in a band above the racks, so they hide nothing.
  function drawTraffic() {
    const overlay = map.querySelector('svg.traffic-overlay');
    if (!overlay) return;
    const traffic = lastTraffic.filter((t) => RS.num(t.tuples) > 0 && t.from !== t.to);
    map.classList.toggle('with-traffic', traffic.length > 0);
    RS.clear(overlay);
    overlay.setAttribute('width', String(map.scrollWidth));
    overlay.setAttribute('height', String(map.scrollHeight));
    if (!traffic.length) return;
    const box = map.getBoundingClientRect();
    const maxT = Math.max(...traffic.map((t) => RS.num(t.tuples)));
    const nodes = new Map(Array.from(map.querySelectorAll('.node')).map((x) => [x.dataset.node, x]));
    const top = (id, shift) => {
      const nodeEl = nodes.get(id);
      if (!nodeEl) return null;
      const r = nodeEl.getBoundingClientRect();
      return {x: r.left - box.left + r.width / 2 + shift, y: r.top - box.top};
    };
    overlay.appendChild(svg('defs', null,
      svg('marker', {id: 'traffic-arrow', viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 10, markerHeight: 10,
                     markerUnits: 'userSpaceOnUse', orient: 'auto'},
          svg('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#d9480f'}))));
    for (const t of traffic) {
      const a = top(t.from, -12);
      const b = top(t.to, 12);
      if (!a || !b) continue;
      const peak = Math.max(10, Math.min(a.y, b.y) - 28 - 0.06 * Math.abs(b.x - a.x));
      const cx = (a.x + b.x) / 2;
      const cy = 2 * peak - (a.y + b.y) / 2;
      const w = 1.5 + 6 * Math.sqrt(RS.num(t.tuples) / maxT);
      const label = nodeLabel(t.from) + ' → ' + nodeLabel(t.to) + ': ' +
                    RS.int(t.tuples) + ' tuples';
      overlay.appendChild(svg('path', {d: 'M' + a.x + ',' + a.y + ' Q' + cx + ',' + cy + ' ' + b.x + ',' + (b.y - 2),
                                       'stroke-width': w.toFixed(2), 'marker-end': 'url(#traffic-arrow)'},
                              svg('title', {text: label})));
      overlay.appendChild(svg('text', {x: cx, y: peak - 5, 'text-anchor': 'middle',
                                       text: nodeLabel(t.from) + ' → ' + nodeLabel(t.to) +
                                             ' ' + shortCount(t.tuples)}));
    }
  }

  if (window.ResizeObserver) new ResizeObserver(() => drawTraffic()).observe(map);

  function renderPlacement(p) {
    RS.setText($('placement-scheduler'), p.scheduler ? 'scheduler: ' + p.scheduler : '');
    const uns = $('unschedulable');
    RS.setText(uns, p.unschedulable ? 'Unschedulable: ' + p.unschedulable : '');
    RS.show(uns, !!p.unschedulable);

    const warnings = p.warnings || [];
    const wbox = $('placement-warnings');
    const wsig = JSON.stringify(warnings);
    if (wbox.__sig !== wsig) {
      wbox.__sig = wsig;
      wbox.replaceChildren(el('h3', {text: 'Scheduler warnings'}),
                           el('ul', null, warnings.map((w) => el('li', {text: typeof w === 'string' ? w : JSON.stringify(w)}))));
    }
    RS.show(wbox, warnings.length > 0);

    const cost = p.networkCost || {};
    const stat = (label, value, title) => el('div', {class: 'stat', title: title || null}, el('b', {text: value}), label);
    const req = p.requested || {};
    const asg = p.assigned || {};
    const stats = [
      stat('same worker', RS.int(cost.sameWorker || 0), 'Communicating executor pairs in the same worker (no network)'),
      stat('same node', RS.int(cost.sameNode || 0), 'Pairs in different workers on the same node'),
      stat('same rack', RS.int(cost.sameRack || 0), 'Pairs on different nodes of the same rack'),
      stat('cross rack', RS.int(cost.crossRack || 0), 'Pairs on different racks'),
      stat('memory', RS.mb(asg.memory) + ' / ' + RS.mb(req.memory), 'Assigned / requested memory'),
      stat('CPU', RS.cpu(asg.cpu) + ' / ' + RS.cpu(req.cpu), 'Assigned / requested CPU points'),
    ];
    const psig = JSON.stringify([cost, req, asg]);
    const pbox = $('placement-stats');
    if (pbox.__sig !== psig) {
      pbox.__sig = psig;
      pbox.replaceChildren(el('span', {class: 'muted', text: 'Network cost:'}), ...stats.slice(0, 4),
                           el('span', {class: 'muted', text: 'Resources assigned / requested:'}), ...stats.slice(4));
    }

    const sig = JSON.stringify([p.racks, Array.from(colours.entries())]);
    if (sig !== placementSig) {
      placementSig = sig;
      buildPlacementMap(p);
    }
    lastTraffic = p.traffic || [];
    drawTraffic();

    const total = lastTraffic.reduce((a, t) => a + RS.num(t.tuples), 0);
    RS.setText($('traffic-window'), p.trafficWindowSeconds !== undefined
      ? 'over the last ' + RS.duration(p.trafficWindowSeconds) : 'over the last 10 minutes');
    const sorted = lastTraffic.slice().sort((a, b) => RS.num(b.tuples) - RS.num(a.tuples));
    RS.syncRows($('traffic').tBodies[0], sorted, {
      key: (t) => t.from + '>' + t.to,
      rowClass: 'traffic-row',
      empty: 'No tuples crossed between nodes',
      cells: (t) => [
        {text: nodeLabel(t.from), title: t.from + ' (' + (nodeHosts.get(t.from) || '?') + ')'},
        {text: nodeLabel(t.to), title: t.to + ' (' + (nodeHosts.get(t.to) || '?') + ')'},
        n(RS.int(t.tuples)),
        {node: () => RS.bar(total, [{value: t.tuples, cls: 'used'}], RS.pct(total ? 100 * RS.num(t.tuples) / total : 0, 0)),
         sig: t.tuples + '/' + total, cls: 'bar-cell'},
      ],
    });
  }

  // ---- polling --------------------------------------------------------------

  function updateColours(t, v) {
    const names = [];
    if (v) names.push(...Object.keys(v));
    if (t) {
      for (const s of t.spouts || []) names.push(s.spoutId);
      for (const b of t.bolts || []) names.push(b.boltId);
    }
    const next = RS.componentColours(names);
    if (JSON.stringify(Array.from(next)) !== JSON.stringify(Array.from(colours))) colours = next;
  }

  async function refresh() {
    if (!topologyId) throw new Error('No topology given: open this page as topology.html?id=<topology id>');
    const [t, v, p] = await Promise.allSettled([
      RS.getJSON(api('?' + RS.qs({window: windowValue}))),
      RS.getJSON(api('/visualization')),
      RS.getJSON(api('/placement')),
    ]);
    if (t.status === 'fulfilled') {
      current = t.value;
      renderSummary(current);
      renderAlerts(current);
      renderStats(current);
      renderComponents(current);
      renderErrors(current);
      renderConfiguration(current);
    }
    updateColours(t.status === 'fulfilled' ? t.value : current, v.status === 'fulfilled' ? v.value : vis);
    if (v.status === 'fulfilled') renderGraph(v.value);
    if (p.status === 'fulfilled') renderPlacement(p.value);
    const failed = [t, v, p].find((x) => x.status === 'rejected');
    if (failed) throw failed.reason;
    RS.markUpdated();
  }

  const poller = RS.poll('topology', refresh);
})();
