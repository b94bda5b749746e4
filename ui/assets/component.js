// rstorm UI: the component page (component.html?topology=<id>&component=<c>&window=600).
'use strict';

(() => {
  const {$, el, n} = RS;

  const topologyId = RS.param('topology', '');
  const componentId = RS.param('component', '');
  let windowValue = RS.param('window', '600');
  let navName = null;
  let statsKind = null;

  RS.nav({page: 'component', topologyId, component: componentId, window: windowValue});
  RS.windowSelect($('window'), windowValue, (v) => {
    windowValue = v;
    RS.setParam('window', v);
    RS.nav({page: 'component', topologyId, topologyName: navName, component: componentId, window: windowValue});
    poller.refresh();
  });

  function windowLabel(w) {
    const known = RS.WINDOWS.find(([v]) => v === w);
    return known ? known[1] : w;
  }

  function renderSummary(c) {
    RS.setText($('component-id'), c.id);
    RS.setText($('component-type'), c.componentType);
    const topo = $('component-topology');
    const href = RS.topologyHref(c.topologyId || topologyId, windowValue);
    const sig = href + c.name;
    if (topo.__sig !== sig) {
      topo.__sig = sig;
      topo.replaceChildren(RS.link(href, c.name || c.topologyId));
    }
    const st = $('component-status');
    if (st.__sig !== c.topologyStatus) {
      st.__sig = c.topologyStatus;
      st.replaceChildren(RS.statusBadge(c.topologyStatus));
    }
    RS.setText($('component-executors'), RS.int(c.executors));
    RS.setText($('component-tasks'), RS.int(c.tasks));
    RS.setText($('component-window'), (c.windowHint || windowLabel(windowValue)) +
      (c.windowSeconds !== undefined ? ' (measured over ' + RS.duration(c.windowSeconds) + ')' : ''));
    document.title = c.id + ' · ' + (c.name || '') + ' - rstorm UI';
    if (navName !== c.name) {
      navName = c.name;
      RS.nav({page: 'component', topologyId, topologyName: c.name, component: componentId, window: windowValue});
    }
  }

  function backpressureCell(s) {
    const lvl = s.backpressure || RS.level(s.backpressuredSeconds);
    const share = RS.pct(100 * RS.num(s.backpressuredSeconds), 0);
    return {node: () => el('span', null, RS.badge(lvl, RS.levelClass(lvl)), ' ', el('span', {class: 'muted', text: share})),
            sig: lvl + share};
  }

  function renderStats(c) {
    const spout = c.componentType === 'spout';
    const rows = (spout ? c.spoutSummary : c.boltStats) || [];
    const table = $('component-stats');
    const kind = spout ? 'spout' : 'bolt';
    if (statsKind !== kind) {
      statsKind = kind;
      RS.setText($('component-stats-title'), spout ? 'Spout Stats' : 'Bolt Stats');
      const headers = spout
        ? ['Window', ['Emitted', '', true], ['Transferred', '', true], ['Complete latency (ms)', '', true],
           ['Acked', '', true], ['Failed', '', true], 'Backpressure']
        : ['Window', ['Emitted', '', true], ['Transferred', '', true], ['Capacity', '', true],
           ['Execute latency (ms)', '', true], ['Executed', '', true], ['Acked', '', true], ['Failed', '', true],
           ['Busy', '', true], 'Backpressure'];
      const fresh = RS.table('component-stats', headers);
      table.replaceWith(fresh);
    }
    RS.syncRows($('component-stats').tBodies[0], rows, {
      key: (s) => s.window,
      rowClass: 'window-row',
      cells: (s) => {
        const w = {node: () => RS.link(RS.componentHref(topologyId, componentId, s.window), windowLabel(s.window)),
                   sig: s.window, title: s.windowPretty || null};
        return spout
          ? [w, n(RS.int(s.emitted)), n(RS.int(s.transferred)), n(s.completeLatency), n(RS.int(s.acked)),
             n(RS.int(s.failed)), backpressureCell(s)]
          : [w, n(RS.int(s.emitted)), n(RS.int(s.transferred)),
             {text: s.capacity, cls: 'num ' + RS.levelClass(RS.level(s.capacity))},
             n(s.executeLatency), n(RS.int(s.executed)), n(RS.int(s.acked)), n(RS.int(s.failed)),
             n(RS.pct(100 * RS.num(s.busySeconds), 0)), backpressureCell(s)];
      },
    });
  }

  function renderExecutors(c) {
    RS.setText($('executors-window'), 'window: ' + (c.windowHint || windowLabel(windowValue)));
    const list = (c.executorStats || []).slice().sort((a, b) => {
      const ta = parseInt(String(a.id).replace(/^\[/, ''), 10);
      const tb = parseInt(String(b.id).replace(/^\[/, ''), 10);
      return (ta - tb) || String(a.id).localeCompare(String(b.id));
    });
    RS.syncRows($('executors').tBodies[0], list, {
      key: (e) => e.id,
      rowClass: 'executor-row',
      empty: 'No executors are running',
      cells: (e) => {
        const q = RS.num(e.queueCapacity) > 0 ? RS.num(e.queueDepth) / RS.num(e.queueCapacity) : 0;
        return [
          {text: e.id, cls: 'mono'},
          RS.hostPort(e.host, e.port),
          {text: e.uptime || RS.duration(e.uptimeSeconds)},
          n(RS.int(e.emitted)), n(RS.int(e.transferred)), n(RS.int(e.acked)), n(RS.int(e.failed)),
          n(RS.int(e.executed)), n(e.executeLatency),
          {text: e.capacity, cls: 'num ' + RS.levelClass(RS.level(e.capacity))},
          {text: RS.int(e.queueDepth) + ' / ' + RS.int(e.queueCapacity),
           cls: 'num ' + RS.levelClass(RS.level(q)), title: RS.pct(100 * q, 0) + ' full'},
          e.fused ? 'yes' : 'no',
          {node: () => RS.logLink(e.workerLogLink, 'log'), sig: e.workerLogLink || ''},
        ];
      },
    });
  }

  function renderStreams(c) {
    RS.syncRows($('inputs').tBodies[0], c.inputs || [], {
      key: (i) => i.component + '|' + i.stream,
      empty: c.componentType === 'spout' ? 'Spouts have no inputs' : 'None',
      cells: (i) => [{href: RS.componentHref(topologyId, i.component, windowValue), text: i.component},
                     i.stream, i.grouping],
    });
    RS.syncRows($('outputs').tBodies[0], c.outputs || [], {
      key: (o) => o.stream,
      cells: (o) => [o.stream, {text: (o.fields || []).join(', '), cls: 'mono'}],
    });
  }

  function renderErrors(c) {
    RS.syncRows($('component-errors').tBodies[0], c.componentErrors || [], {
      key: (e) => [e.time, e.errorHost, e.errorPort, e.error].join('|'),
      rowClass: 'error-row',
      empty: 'No errors',
      cells: (e) => {
        const where = RS.hostPort(e.errorHost, e.errorPort);
        return [
          {text: RS.time(e.time),
           title: e.errorLapsedSecs !== undefined && e.errorLapsedSecs !== null ? RS.duration(e.errorLapsedSecs) + ' ago' : null},
          {node: () => (e.errorWorkerLogLink ? RS.logLink(e.errorWorkerLogLink, where) : where),
           sig: where + (e.errorWorkerLogLink || '')},
          {text: e.error, cls: 'error-text'},
        ];
      },
    });
  }

  function metricValue(v) {
    if (typeof v === 'number') return Number.isInteger(v) ? RS.int(v) : String(Math.round(v * 1000) / 1000);
    if (v === undefined || v === null) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  function renderUserMetrics(c) {
    const list = (c.userMetrics || []).slice().sort((a, b) =>
      String(a.name).localeCompare(String(b.name)) || RS.num(a.task) - RS.num(b.task));
    RS.syncRows($('user-metrics').tBodies[0], list, {
      key: (m) => m.name + '|' + m.task,
      rowClass: 'metric-row',
      empty: 'No user metrics',
      cells: (m) => [{text: m.name, cls: 'mono'}, m.type, n(m.task), n(metricValue(m.value)),
                     n(m.type === 'histogram' ? metricValue(m.sum) : ''),
                     n(m.type === 'histogram' ? metricValue(m.count) : '')],
    });
  }

  async function refresh() {
    if (!topologyId || !componentId) {
      throw new Error('Open this page as component.html?topology=<topology id>&component=<component id>');
    }
    const c = await RS.getJSON('/api/v1/topology/' + RS.enc(topologyId) + '/component/' + RS.enc(componentId) +
                               '?' + RS.qs({window: windowValue}));
    renderSummary(c);
    renderStats(c);
    renderStreams(c);
    renderExecutors(c);
    renderErrors(c);
    renderUserMetrics(c);
    RS.markUpdated();
  }

  const poller = RS.poll('component', refresh);
})();
