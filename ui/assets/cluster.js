// rstorm UI: the cluster page (index.html).
'use strict';

(() => {
  const {$, el, n} = RS;

  RS.nav({page: 'cluster'});

  function tile(label, value, extra, title) {
    return el('div', {class: 'tile', title: title || null},
              el('div', {class: 'tile-label', text: label}),
              el('div', {class: 'tile-value', text: value}),
              extra || null);
  }

  function renderSummary(c) {
    const usedMem = RS.num(c.totalMem) - RS.num(c.availMem);
    const usedCpu = RS.num(c.totalCpu) - RS.num(c.availCpu);
    const tiles = [
      tile('Version', c.rstormVersion || c.stormVersion || ''),
      tile('Supervisors', RS.int(c.supervisors)),
      tile('Topologies', RS.int(c.topologies)),
      tile('Slots', RS.int(c.slotsUsed) + ' / ' + RS.int(c.slotsTotal),
           RS.bar(c.slotsTotal, [{value: c.slotsUsed, cls: 'used'}], RS.int(c.slotsFree) + ' free'),
           'Used / total worker slots'),
      tile('Executors', RS.int(c.executorsTotal)),
      tile('Tasks', RS.int(c.tasksTotal)),
      tile('Memory assigned', RS.pct(c.memAssignedPercentUtil),
           RS.bar(c.totalMem, [{value: usedMem, cls: 'used'}],
                  RS.mb(usedMem) + ' of ' + RS.mb(c.totalMem)),
           'Memory assigned to workers / total memory of the supervisors'),
      tile('CPU assigned', RS.pct(c.cpuAssignedPercentUtil),
           RS.bar(c.totalCpu, [{value: usedCpu, cls: 'used'}],
                  RS.cpu(usedCpu) + ' of ' + RS.cpu(c.totalCpu) + ' points'),
           'CPU points assigned / total (100 = one core)'),
    ];
    const box = $('cluster-summary');
    const sig = JSON.stringify(c);
    if (box.__sig === sig) return;
    box.__sig = sig;
    box.replaceChildren(...tiles);
  }

  function renderNimbuses(list) {
    RS.syncRows($('nimbuses').tBodies[0], list, {
      key: (x) => x.host + ':' + x.port,
      empty: 'No nimbus answers',
      rowAttrs: (x) => ({class: x.status === 'Leader' ? 'nimbus leader-row' : 'nimbus'}),
      cells: (x) => [
        x.host,
        n(x.port),
        x.status === 'Leader'
          ? {node: () => RS.badge('Leader', 'leader'), sig: 'leader'}
          : {node: () => RS.badge(x.status || '', 'follower'), sig: 'f:' + x.status},
        x.version || '',
        {text: x.nimbusUpTime || RS.duration(x.nimbusUpTimeSeconds), title: RS.int(x.nimbusUpTimeSeconds) + ' s'},
      ],
    });
  }

  function renderTopologies(list) {
    const sorted = list.slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
    RS.syncRows($('topologies').tBodies[0], sorted, {
      key: (t) => t.id,
      rowClass: 'topology-row',
      empty: 'No topologies are running',
      rowAttrs: (t) => ({dataset: {topology: t.name}}),
      cells: (t) => [
        {href: RS.topologyHref(t.id), text: t.name, cls: 'name'},
        {text: t.id, cls: 'mono'},
        {node: () => RS.statusBadge(t.status), sig: t.status, title: t.statusReason || null},
        {text: t.uptime || RS.duration(t.uptimeSeconds)},
        n(RS.int(t.workersTotal)),
        n(RS.int(t.executorsTotal)),
        n(RS.int(t.tasksTotal)),
        n(RS.int(t.requestedTotalMem) + ' / ' + RS.int(t.assignedTotalMem)),
        n(RS.cpu(t.requestedCpu) + ' / ' + RS.cpu(t.assignedCpu)),
        {text: t.schedulerInfo || t.statusReason || '', cls: t.schedulerInfo ? 'warn-text' : ''},
      ],
    });
  }

  function resourceBar(used, total, unit) {
    const u = RS.num(used);
    const t = RS.num(total);
    const p = t > 0 ? 100 * u / t : 0;
    const label = unit === 'MB'
      ? RS.mb(u) + ' / ' + RS.mb(t)
      : RS.cpu(u) + ' / ' + RS.cpu(t);
    const cls = p > 90 ? 'used high' : p > 70 ? 'used mid' : 'used';
    return {
      node: () => RS.bar(t, [{value: u, cls}], label + ' (' + p.toFixed(0) + ' %)'),
      sig: u + '/' + t,
      cls: 'bar-cell',
    };
  }

  function supervisorHeaders(resources) {
    const h = ['Host', 'Id', 'Uptime', ['Slots', 'Used / total worker slots', true]];
    if (resources) {
      h.push(['Memory', 'Assigned / total memory']);
      h.push(['CPU', 'Assigned / total CPU points (100 = one core)']);
    }
    h.push('Version', 'Other resources');
    return h;
  }

  function renderSupervisors(data) {
    const box = $('supervisors');
    const resources = data.schedulerDisplayResource !== false;
    const byRack = new Map();
    for (const s of data.supervisors || []) {
      const rack = s.rack || 'default-rack';
      if (!byRack.has(rack)) byRack.set(rack, []);
      byRack.get(rack).push(s);
    }
    const racks = Array.from(byRack.keys()).sort();
    if (!racks.length) {
      box.replaceChildren(el('p', {class: 'muted', text: 'No supervisors have registered.'}));
      return;
    }
    const existing = new Map();
    for (const child of Array.from(box.children)) {
      if (child.dataset.rack !== undefined && child.dataset.resources === String(resources)) {
        existing.set(child.dataset.rack, child);
      } else {
        box.removeChild(child);
      }
    }
    let prev = null;
    for (const rack of racks) {
      const sups = byRack.get(rack).slice().sort((a, b) => String(a.host).localeCompare(String(b.host)));
      let section = existing.get(rack);
      if (section) existing.delete(rack);
      else {
        section = el('div', {class: 'rack-group', dataset: {rack, resources: String(resources)}},
                     el('h3', null, el('span', {class: 'rack-name', text: 'Rack ' + rack}),
                        el('span', {class: 'rack-info muted'})),
                     RS.table(null, supervisorHeaders(resources)));
      }
      const mem = sups.reduce((a, s) => [a[0] + RS.num(s.usedMem), a[1] + RS.num(s.totalMem)], [0, 0]);
      const cpu = sups.reduce((a, s) => [a[0] + RS.num(s.usedCpu), a[1] + RS.num(s.totalCpu)], [0, 0]);
      const slots = sups.reduce((a, s) => [a[0] + RS.num(s.slotsUsed), a[1] + RS.num(s.slotsTotal)], [0, 0]);
      RS.setText(section.querySelector('.rack-info'),
                 sups.length + (sups.length === 1 ? ' supervisor' : ' supervisors') +
                 ' · slots ' + slots[0] + ' / ' + slots[1] +
                 ' · memory ' + RS.mb(mem[0]) + ' / ' + RS.mb(mem[1]) +
                 ' · CPU ' + RS.cpu(cpu[0]) + ' / ' + RS.cpu(cpu[1]));
      RS.syncRows(section.querySelector('tbody'), sups, {
        key: (s) => s.id,
        rowClass: 'supervisor',
        cells: (s) => {
          const cells = [
            s.host,
            {text: s.id, cls: 'mono'},
            {text: s.uptime || RS.duration(s.uptimeSeconds)},
            n(RS.int(s.slotsUsed) + ' / ' + RS.int(s.slotsTotal)),
          ];
          if (resources) {
            cells.push(resourceBar(s.usedMem, s.totalMem, 'MB'));
            cells.push(resourceBar(s.usedCpu, s.totalCpu, 'cpu'));
          }
          const generic = Object.entries(s.genericResources || {}).map(([k, v]) => k + ': ' + v).join(', ');
          cells.push(s.version || '', generic);
          return cells;
        },
      });
      const want = prev ? prev.nextSibling : box.firstChild;
      if (want !== section) box.insertBefore(section, want);
      prev = section;
    }
    for (const section of existing.values()) box.removeChild(section);
  }

  async function refresh() {
    const [summary, nimbus, supervisors, topologies] = await Promise.all([
      RS.getJSON('/api/v1/cluster/summary'),
      RS.getJSON('/api/v1/nimbus/summary'),
      RS.getJSON('/api/v1/supervisor/summary'),
      RS.getJSON('/api/v1/topology/summary'),
    ]);
    renderSummary(summary);
    renderNimbuses(nimbus.nimbuses || []);
    renderTopologies(topologies.topologies || []);
    renderSupervisors(supervisors);
    RS.markUpdated();
  }

  RS.poll('cluster', refresh);
})();
