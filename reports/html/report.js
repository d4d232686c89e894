(function(){
'use strict';
var t0 = performance.now();
var D = JSON.parse(document.getElementById('stacksage-data').textContent);
var $ = function(id){ return document.getElementById(id); };
function el(tag, cls, text){ var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined && text !== null) e.textContent = String(text); return e; }
function svg(tag, attrs){ var e = document.createElementNS('http://www.w3.org/2000/svg', tag); for (var k in attrs) e.setAttribute(k, attrs[k]); return e; }
function parseList(s){ var out = new Set(); if (!s) return out; s.split(',').forEach(function(p){ var r = p.split('-'); var a = parseInt(r[0], 10), b = r.length > 1 ? parseInt(r[1], 10) : a; if (isNaN(a) || isNaN(b)) return; for (var i = a; i <= b && i - a < 1e6; i++) out.add(i); }); return out; }
function fmtNum(v){ return (v === null || v === undefined) ? '-' : Number(v).toLocaleString('en-US', {maximumFractionDigits: 2}); }
function fmtMs(ms){ if (ms === null || ms === undefined || ms < 0) return '-'; if (ms >= 1000) return (ms/1000).toFixed(2) + ' s'; return ms.toFixed(ms < 10 ? 2 : 0) + ' ms'; }
var SEV = {none: 0, info: 1, warning: 2, error: 3};
var FC = {}; D.flow_columns.forEach(function(c, i){ FC[c] = i; });
var state = {node: 0, mode: 'allowed', level: null, finding: -1, allNodes: false};
var puEls = [];   // PU elements of the drawn node, by PU index
var boxOfPu = []; // innermost box (core) element holding each PU

// ---- Header --------------------------------------------------------------
$('run-name').textContent = D.run.name || D.run.directory;
$('run-cmd').textContent = D.run.command || '';
var nproc = 0, nflows = D.flows.length;
D.processes.forEach(function(p){ if (!p.launcher) nproc++; });
[['nodes', D.nodes.length], ['processes', nproc], ['flows', nflows], ['errors', D.summary.errors], ['warnings', D.summary.warnings], ['infos', D.summary.infos]].forEach(function(kv){
  var s = el('span', null, kv[1] + ' ' + kv[0]); s.setAttribute('data-count', kv[0]); $('counts').appendChild(s);
});
var notes = $('notes');
D.notes.forEach(function(n){ notes.appendChild(el('div', 'note', n.level + (n.file ? ' (' + n.file + ')' : '') + ': ' + n.message)); });
if (!D.notes.length) notes.appendChild(el('div', 'muted', 'Every log and topology was read without trouble.'));

// ---- Nodes: selector and overview, one cell per node, grouped as the analysis grouped them ----
var sel = $('node-select'), grid = $('grid');
D.nodes.forEach(function(n, i){ var o = el('option', null, n.host); o.value = String(i); sel.appendChild(o); });
function nodeCell(i){
  var n = D.nodes[i];
  var c = el('div', 'cell sev-' + n.worst, n.host); c.setAttribute('data-node', String(i)); c.setAttribute('data-worst', n.worst);
  c.title = n.host + ': worst finding ' + n.worst + ', ' + (n.processes || 0) + ' processes, ' + (n.threads || 0) + ' threads';
  c.addEventListener('click', function(){ selectNode(i); var t = $('topology-section'); if (t.scrollIntoView) t.scrollIntoView(); });
  return c;
}
(D.node_groups || []).forEach(function(g, gi){
  var box = el('div', 'ngroup sev-border-' + (g.worst || 'none')); box.setAttribute('data-group', String(gi)); box.setAttribute('data-hosts', g.hosts);
  var head = el('div', 'ghead');
  head.appendChild(el('span', 'ghosts', g.hosts));
  head.appendChild(el('span', 'muted', g.size + (g.size === 1 ? ' node' : ' nodes') + ', worst finding: ' + (g.worst || 'none')));
  box.appendChild(head);
  g.findings.forEach(function(f){
    if (f.severity === 'info') return;
    var line = el('div', 'gfinding'); line.appendChild(el('span', 'sevtag sev-' + f.severity, f.severity)); line.appendChild(document.createTextNode(' ' + f.message)); box.appendChild(line);
  });
  var cells = el('div', 'gcells');
  g.nodes.forEach(function(i){ cells.appendChild(nodeCell(i)); });
  box.appendChild(cells);
  grid.appendChild(box);
});
sel.addEventListener('change', function(){ selectNode(parseInt(sel.value, 10)); });
$('mode').addEventListener('change', function(){ state.mode = $('mode').value; colour(); });
$('level').addEventListener('change', function(){ state.level = $('level').value; colour(); });

// ---- Topology boxes ------------------------------------------------------
function drawBox(b, parent, enclosing){
  if (b.t === 'pu') {
    var p = el('div', 'pu', D.nodes[state.node].pus[b.p]); p.setAttribute('data-pu', String(b.p));
    puEls[b.p] = p; boxOfPu[b.p] = enclosing; parent.appendChild(p); return;
  }
  if (b.t === 'numa' && !b.c) { var s = el('div', 'numa', b.l.join(' ')); s.setAttribute('data-numa', String(b.os)); parent.appendChild(s); return; }
  var d = el('div', 'box ' + b.t);
  // A core's folded cache chain is long: the box shows the core, the tooltip the chain.
  var lbl = el('div', 'lbl', b.t === 'core' ? b.l[b.l.length - 1] : b.l.join(' \u00b7 ')); lbl.title = b.l.join('\n'); d.appendChild(lbl);
  var kids = el('div', 'kids'); d.appendChild(kids);
  (b.c || []).forEach(function(c){ drawBox(c, kids, d); });
  parent.appendChild(d);
}
function drawTopology(){
  var topo = $('topo'); topo.textContent = '';
  puEls = []; boxOfPu = [];
  var n = D.nodes[state.node];
  n.boxes.forEach(function(b){ drawBox(b, topo, null); });
  if (!n.boxes.length) topo.appendChild(el('div', 'muted', 'No topology was recorded for this node.'));
  var avail = parseList(n.available);
  n.pus.forEach(function(os, i){ if (puEls[i] && !avail.has(os)) puEls[i].classList.add('na'); });
}

// ---- Colours ---------------------------------------------------------------
var COL = {idle: '#e4e7eb', one: '#7cc47f', shared: '#f7d154', over: '#e0533f'};
function ramp(v, max, hue){ if (!max || !v) return '#ffffff'; var f = Math.min(1, v / max); var l = 96 - f * 56; return 'hsl(' + hue + ',75%,' + l + '%)'; }
function levelData(n){
  if (!n.memory) return null;
  for (var i = 0; i < n.memory.levels.length; i++) if (n.memory.levels[i].level === state.level) return n.memory.levels[i];
  return null;
}
function fillLevels(){
  var n = D.nodes[state.node], ls = $('level'); ls.textContent = '';
  var levels = n.memory ? n.memory.levels : [];
  levels.forEach(function(l){ var o = el('option', null, l.level + ' (' + fmtNum(l.samples) + ')'); o.value = l.level; ls.appendChild(o); });
  if (!levels.some(function(l){ return l.level === state.level; })) state.level = levels.length ? levels[0].level : null;
  if (state.level !== null) ls.value = state.level;
  ls.disabled = !levels.length;
  var mo = $('mode').querySelector('option[value=memory]');
  mo.disabled = !levels.length;
  if (!levels.length && state.mode === 'memory') { state.mode = 'allowed'; $('mode').value = 'allowed'; }
}
function legendItem(colour, text){ var s = el('span'); var sw = el('span', 'sw'); sw.style.background = colour; s.appendChild(sw); s.appendChild(document.createTextNode(text)); return s; }
function legendRamp(hue, lo, hi, what){ var s = el('span'); s.appendChild(document.createTextNode(lo)); var r = el('span', 'ramp'); r.style.background = 'linear-gradient(90deg,#fff,' + ramp(1, 1, hue) + ')'; s.appendChild(r); s.appendChild(document.createTextNode(hi + ' ' + what)); return s; }
function colour(){
  var n = D.nodes[state.node], lg = $('legend'); lg.textContent = '';
  $('level').style.visibility = state.mode === 'memory' ? 'visible' : 'hidden';
  var over = parseList(n.oversubscribed), i;
  if (state.mode === 'allowed') {
    for (i = 0; i < n.pus.length; i++) {
      if (!puEls[i]) continue;
      var a = n.allowed_active[i] + n.allowed_service[i];
      puEls[i].style.background = over.has(n.pus[i]) ? COL.over : a === 0 ? COL.idle : a === 1 ? COL.one : COL.shared;
    }
    lg.appendChild(legendItem(COL.idle, 'idle: no flow may run here'));
    lg.appendChild(legendItem(COL.one, 'exactly one flow'));
    lg.appendChild(legendItem(COL.shared, 'several flows, not found over-subscribed'));
    lg.appendChild(legendItem(COL.over, 'over-subscribed (a finding says so)'));
  } else if (state.mode === 'cpu') {
    var max = Math.max.apply(null, n.cpu_ms.concat([0]));
    for (i = 0; i < n.pus.length; i++) if (puEls[i]) puEls[i].style.background = ramp(n.cpu_ms[i], max, 210);
    lg.appendChild(legendRamp(210, '0', fmtMs(max), 'CPU time per PU (' + n.cpu_source + ')'));
  } else {
    var l = levelData(n), m = 0;
    if (l) { m = Math.max.apply(null, l.per_pu.concat([0])); for (i = 0; i < n.pus.length; i++) if (puEls[i]) puEls[i].style.background = ramp(l.per_pu[i], m, 20); }
    lg.appendChild(legendRamp(20, '0', fmtNum(m), 'samples served by ' + (state.level || '-') + ' per issuing PU' + (l && l.share !== null ? ' (' + (100 * l.share).toFixed(1) + ' % of the node\'s samples)' : '')));
  }
  lg.appendChild(legendItem('#ddd', 'hatched: not available to the job'));
}

// ---- Tooltips ------------------------------------------------------------------
var tip = $('tip');
$('topo').addEventListener('mousemove', function(e){
  var t = e.target.closest('[data-pu]');
  if (!t) { tip.style.display = 'none'; return; }
  var i = parseInt(t.getAttribute('data-pu'), 10), n = D.nodes[state.node];
  var lines = ['PU P#' + n.pus[i] + ' on ' + n.host,
    'flows allowed: ' + n.allowed_active[i] + ' active, ' + n.allowed_service[i] + ' service',
    'CPU time: ' + fmtMs(n.cpu_ms[i])];
  if (parseList(n.oversubscribed).has(n.pus[i])) lines.push('over-subscribed (finding)');
  if (n.memory) n.memory.levels.forEach(function(l){ lines.push(l.level + ': ' + fmtNum(l.per_pu[i]) + ' samples'); });
  tip.textContent = lines.join('\n');
  tip.style.display = 'block';
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 300) + 'px';
  tip.style.top = (e.clientY + 14) + 'px';
});
$('topo').addEventListener('mouseleave', function(){ tip.style.display = 'none'; });

// ---- Findings --------------------------------------------------------------------
// The selected node's findings and the run-wide ones; all of them when asked.
function drawFindings(){
  var box = $('findings'); box.textContent = '';
  var all = $('all-findings').checked, host = D.nodes.length ? D.nodes[state.node].host : '', shown = 0;
  D.findings.forEach(function(f, i){
    if (!all && f.node && f.node !== host) return;
    shown++;
    var d = el('div', 'finding ' + f.severity); d.setAttribute('data-finding', String(i));
    var head = el('div');
    head.appendChild(el('b', null, f.severity.toUpperCase() + (f.node ? ' ' + f.node : '') + ': '));
    head.appendChild(document.createTextNode(f.message));
    d.appendChild(head);
    d.appendChild(el('div', 'code', f.code + ' (' + f.check + ')' + (f.resources ? ' \u2014 CPUs ' + f.resources : '') + (f.flow_count ? ' \u2014 ' + f.flow_count + ' flow(s)' : '')));
    if (f.detail) d.appendChild(el('div', 'det', f.detail));
    if (f.suggestion) d.appendChild(el('div', 'sugg', 'Suggestion: ' + f.suggestion));
    d.addEventListener('click', function(){ highlightFinding(i); });
    box.appendChild(d);
  });
  var others = D.findings.length - shown;
  $('findings-status').textContent = (shown ? '' : 'No findings here. ') + (others ? others + ' more finding(s) on other nodes.' : '');
}
$('all-findings').addEventListener('change', function(){ drawFindings(); if (state.finding >= 0) { var fe = document.querySelector('.finding[data-finding="' + state.finding + '"]'); if (fe) fe.classList.add('sel'); } });
function clearHighlight(){ document.querySelectorAll('.hl').forEach(function(e){ e.classList.remove('hl'); }); document.querySelectorAll('.finding.sel').forEach(function(e){ e.classList.remove('sel'); }); }
function highlightFinding(i){
  var f = D.findings[i];
  if (f.node) for (var n = 0; n < D.nodes.length; n++) if (D.nodes[n].host === f.node && n !== state.node) { selectNode(n); break; }
  clearHighlight();
  state.finding = i;
  var fe = document.querySelector('.finding[data-finding="' + i + '"]'); if (fe) fe.classList.add('sel');
  var cpus = parseList(f.resources), node = D.nodes[state.node], count = 0;
  node.pus.forEach(function(os, p){ if (cpus.has(os) && puEls[p]) { puEls[p].classList.add('hl'); if (boxOfPu[p]) boxOfPu[p].classList.add('hl'); count++; } });
  $('hl-status').textContent = count ? count + ' PU(s) of ' + node.host + ' highlighted for ' + f.code : 'This finding names no PU on ' + node.host + '.';
  var first = document.querySelector('.pu.hl'); if (first && first.scrollIntoView) first.scrollIntoView({block: 'nearest'});
}

// ---- Tables ------------------------------------------------------------------------
var MAXROWS = 1000;
function makeTable(id, columns, rowsFn){
  var t = {sort: -1, dir: 1, filter: ''};
  var table = $(id), thead = el('thead'), tr = el('tr');
  columns.forEach(function(c, ci){
    var th = el('th', null, c.name); th.setAttribute('data-col', String(ci));
    th.addEventListener('click', function(){ if (t.sort === ci) t.dir = -t.dir; else { t.sort = ci; t.dir = 1; } render(); });
    tr.appendChild(th);
  });
  thead.appendChild(tr); table.appendChild(thead);
  var tbody = el('tbody'); table.appendChild(tbody);
  function render(){
    var rows = rowsFn(), f = t.filter.toLowerCase();
    if (f) rows = rows.filter(function(r){ return r.some(function(v){ return v !== null && String(v).toLowerCase().indexOf(f) >= 0; }); });
    if (t.sort >= 0) { var c = t.sort, dir = t.dir; rows.sort(function(a, b){ var x = a[c], y = b[c]; if (x === y) return 0; if (x === null) return 1; if (y === null) return -1; return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, {numeric: true})) * dir; }); }
    thead.querySelectorAll('th').forEach(function(th, ci){ th.className = ci === t.sort ? (t.dir > 0 ? 'asc' : 'desc') : ''; });
    tbody.textContent = '';
    var frag = document.createDocumentFragment();
    rows.slice(0, MAXROWS).forEach(function(r){
      var row = el('tr');
      columns.forEach(function(c, ci){ var td = el('td', c.wrap ? 'wrap' : null, c.fmt ? c.fmt(r[ci]) : (r[ci] === null ? '-' : r[ci])); row.appendChild(td); });
      frag.appendChild(row);
    });
    tbody.appendChild(frag);
    var status = $(id + '-status'); if (status) status.textContent = rows.length > MAXROWS ? 'showing ' + MAXROWS + ' of ' + rows.length + ' rows (filter to narrow)' : rows.length + ' row(s)';
  }
  t.render = render;
  return t;
}
function inScope(p){ return state.allNodes || D.processes[p].node === state.node; }
// Flows per node and threads per process, indexed once: switching nodes must not rescan every flow.
var flowsOfNode = D.nodes.map(function(){ return []; }), threadsOf = D.processes.map(function(){ return 0; });
D.flows.forEach(function(f){ var p = f[FC.process]; threadsOf[p]++; var n = D.processes[p].node; if (flowsOfNode[n]) flowsOfNode[n].push(f); });
var flowTable = makeTable('flows', [
  {name: 'host'}, {name: 'rank'}, {name: 'pid'}, {name: 'tid'}, {name: 'thread name'}, {name: 'runtime'}, {name: 'kind'},
  {name: 'cpuset'}, {name: 'CPU time', fmt: function(v){ return v === null || v < 0 ? '-' : fmtMs(v / 1000); }},
  {name: 'lifetime', fmt: function(v){ return fmtMs(v / 1e6); }}, {name: 'state'}], function(){
  var rows = [];
  (state.allNodes || !flowsOfNode[state.node] ? D.flows : flowsOfNode[state.node]).forEach(function(f){
    var p = D.processes[f[FC.process]]; if (!inScope(f[FC.process])) return;
    rows.push([D.nodes[p.node] ? D.nodes[p.node].host : '?', p.rank, p.pid, f[FC.tid], f[FC.name], D.runtimes[f[FC.runtime]].name, f[FC.kind], f[FC.cpuset],
      f[FC.cpu_us], Math.max(0, f[FC.end_ns] - f[FC.start_ns]), f[FC.state] + (p.end && p.end !== 'exit' && p.end !== 'return' ? ' (' + p.end + ')' : '')]);
  });
  return rows;
});
var procTable = makeTable('procs', [{name: 'host'}, {name: 'rank'}, {name: 'pid'}, {name: 'name'}, {name: 'command line', wrap: true}, {name: 'threads'}, {name: 'launcher'}, {name: 'end'}], function(){
  var rows = [];
  D.processes.forEach(function(p, i){ if (!inScope(i)) return; rows.push([D.nodes[p.node] ? D.nodes[p.node].host : '?', p.rank, p.pid, p.name, p.cmdline, threadsOf[i], p.launcher, p.end]); });
  return rows;
});
$('flow-filter').addEventListener('input', function(){ flowTable.filter = this.value; procTable.filter = this.value; flowTable.render(); procTable.render(); });
$('all-nodes').addEventListener('change', function(){ state.allNodes = this.checked; flowTable.render(); procTable.render(); });

// ---- Call sites and data objects ---------------------------------------------------------
// A sortable table of call sites x levels, and a heatmap of each object's samples per level.
var siteTable = null;
function drawCode(){
  var n = D.nodes[state.node], mem = n && n.memory, sites = mem && mem.sites ? mem.sites : [], objects = mem && mem.objects ? mem.objects : [];
  $('code-section').style.display = sites.length || objects.length ? '' : 'none';
  var table = $('sites'); table.textContent = '';
  var levels = mem ? mem.levels.map(function(l){ return l.level; }) : [];
  var columns = [{name: 'call site', wrap: true}, {name: 'call path', wrap: true}].concat(levels.map(function(l){ return {name: l, fmt: fmtNum}; }));
  columns.push({name: 'all', fmt: fmtNum});
  siteTable = makeTable('sites', columns, function(){
    return sites.map(function(s){ var all = s.per_level.reduce(function(a, b){ return a + b; }, 0); return [s.site, s.call_path].concat(s.per_level).concat([all]); });
  });
  siteTable.sort = columns.length - 1; siteTable.dir = -1; siteTable.render();
  $('sites-left').textContent = mem && mem.sites_left_out ? '(' + fmtNum(mem.sites_left_out) + ' samples of further sites left out)' : '';
  var box = $('objects'); box.textContent = '';
  if (!objects.length) return;
  var t = el('table', 'objheat'), head = el('tr');
  head.appendChild(el('th', null, 'object')); head.appendChild(el('th', null, 'kind'));
  levels.forEach(function(l){ head.appendChild(el('th', null, l)); });
  t.appendChild(head);
  objects.forEach(function(o){
    var row = el('tr'), max = Math.max.apply(null, o.per_level.concat([0]));
    row.appendChild(el('td', 'wrap', o.object)); row.appendChild(el('td', null, o.kind));
    o.per_level.forEach(function(v, i){
      var td = el('td', 'heat', v ? fmtNum(v) : '');
      td.style.background = ramp(v, max, 210); if (max && v > 0.6 * max) td.style.color = '#fff';
      td.title = o.object + ': ' + fmtNum(v) + ' samples ' + (levels[i] === 'first_touch' ? 'first touched' : 'served by ' + levels[i]);
      row.appendChild(td);
    });
    t.appendChild(row);
  });
  box.appendChild(t);
  if (mem.objects_left_out) box.appendChild(el('div', 'muted', fmtNum(mem.objects_left_out) + ' samples of further objects left out'));
}

// ---- Timeline ------------------------------------------------------------------------
var RTCOL = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
var MAXLANES = 3000;
function drawTimeline(){
  var box = $('timeline'); box.textContent = '';
  var flows = flowsOfNode[state.node] || [];
  if (!flows.length) { box.appendChild(el('div', 'muted', 'No flows on this node.')); return; }
  var load = D.nodes[state.node].load;
  var lo = Infinity, hi = -Infinity;
  flows.forEach(function(f){ lo = Math.min(lo, f[FC.start_ns]); hi = Math.max(hi, f[FC.end_ns]); });
  if (load && load.bins > 0) { lo = Math.min(lo, load.start_ns); hi = Math.max(hi, load.start_ns + load.bins * load.bin_ns); }
  if (!(hi > lo)) hi = lo + 1;
  var groups = {}, order = [];
  flows.forEach(function(f){ var r = f[FC.runtime]; if (!groups[r]) { groups[r] = []; order.push(r); } groups[r].push(f); });
  var W = Math.max(600, box.clientWidth - 10), L = 170, R = 10, lane = 7, y = 24, drawn = 0;
  var s = svg('svg', {width: W, height: 10});
  var xs = function(t){ return L + (t - lo) / (hi - lo) * (W - L - R); };
  for (var k = 0; k <= 5; k++) { var t = lo + (hi - lo) * k / 5, x = xs(t); s.appendChild(svg('line', {x1: x, x2: x, y1: 14, y2: 100000, stroke: '#eee'})); var lab = svg('text', {x: x, y: 10, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle'}); lab.textContent = ((t - lo) / 1e9).toFixed(3) + ' s'; s.appendChild(lab); }
  // The load over time (the analysis's series): one strip per CPU or group
  // of cores, each bin coloured by the threads that wanted a CPU there
  // (white none, green up to one, orange to red above); the busy flows;
  // the over-demanded windows shaded across the whole timeline.
  var shadeTop = y;
  if (load && load.bins > 0 && load.rows.length) {
    var head = svg('text', {x: 2, y: y + 9, 'font-weight': 'bold'}); head.textContent = 'Load: threads wanting a CPU'; s.appendChild(head);
    y += 14;
    var bx = function(b){ return xs(load.start_ns + b * load.bin_ns); };
    var strip = 10;
    load.rows.forEach(function(row){
      var lab = svg('text', {x: 2, y: y + 8}); lab.textContent = (row.cpus.indexOf(',') < 0 && row.cpus.indexOf('-') < 0 ? 'cpu ' : 'cpus ') + row.cpus + (row.over_demanded ? ' (over-demanded)' : ''); s.appendChild(lab);
      var g = svg('g', {'class': 'load-row', 'data-cpus': row.cpus});
      row.demand.forEach(function(d, b){
        if (!(d > 0.005)) return;
        var x1 = bx(b), x2 = Math.max(x1 + 1, bx(b + 1));
        var fill = d <= 1.0001 ? 'rgba(89,161,79,' + (0.25 + 0.6 * d).toFixed(2) + ')' : d < 1.5 ? '#f2a03d' : d < 2.5 ? '#e0533f' : '#a8201a';
        var r = svg('rect', {x: x1, y: y, width: x2 - x1, height: strip - 1, fill: fill, 'class': 'load-bin', 'data-demand': String(d)});
        var t = svg('title', {}); t.textContent = 'cpu(s) ' + row.cpus + ', ' + ((load.start_ns + b * load.bin_ns - lo) / 1e9).toFixed(3) + ' s: ' + d.toFixed(2) + ' thread(s) wanting each CPU';
        r.appendChild(t); g.appendChild(r);
      });
      s.appendChild(g);
      y += strip;
    });
    var peak = Math.max.apply(null, load.busy_flows.concat([1]));
    var pts = load.busy_flows.map(function(v, b){ return (bx(b) + bx(b + 1)) / 2 + ',' + (y + 22 - 20 * v / peak); }).join(' ');
    var busyLab = svg('text', {x: 2, y: y + 14}); busyLab.textContent = 'busy threads (max ' + peak.toFixed(1) + ')'; s.appendChild(busyLab);
    s.appendChild(svg('polyline', {points: pts, fill: 'none', stroke: '#1f2d3d', 'stroke-width': 1, 'class': 'busy-series'}));
    y += 30;
  }
  y += 6;
  order.forEach(function(r, gi){
    var name = svg('text', {x: 2, y: y + 9, 'font-weight': 'bold'}); name.textContent = D.runtimes[r].name + ' (' + groups[r].length + ')'; s.appendChild(name);
    var colour = RTCOL[gi % RTCOL.length];
    groups[r].forEach(function(f){
      if (drawn >= MAXLANES) return;
      var p = D.processes[f[FC.process]];
      var x1 = xs(f[FC.start_ns]), x2 = Math.max(x1 + 1, xs(f[FC.end_ns]));
      var service = f[FC.state] === 'service';
      var bar = svg('rect', {x: x1, y: y, width: x2 - x1, height: lane - 2, fill: colour, 'data-tid': String(f[FC.tid]), 'class': service ? 'flow service' : 'flow', 'fill-opacity': service ? 0.25 : 1});
      var title = svg('title', {});
      title.textContent = (f[FC.name] || 'thread') + ' (tid ' + f[FC.tid] + ', pid ' + p.pid + (p.rank !== null ? ', rank ' + p.rank : '') + ')\n' +
        D.runtimes[r].name + ', ' + f[FC.state] + ', CPUs ' + (f[FC.cpuset] || '-') + '\nlifetime ' + fmtMs((f[FC.end_ns] - f[FC.start_ns]) / 1e6) + ', CPU time ' + (f[FC.cpu_us] >= 0 ? fmtMs(f[FC.cpu_us] / 1000) : '-');
      bar.appendChild(title); s.appendChild(bar);
      f[FC.affinity].forEach(function(iv, j){
        if (j === 0) return;
        var m = svg('rect', {x: xs(iv[0]) - 1, y: y - 1, width: 2, height: lane, fill: '#000', 'class': 'affinity'});
        var tt = svg('title', {}); tt.textContent = 'affinity change at ' + ((iv[0] - lo) / 1e9).toFixed(6) + ' s: CPUs ' + iv[2]; m.appendChild(tt); s.appendChild(m);
      });
      y += lane; drawn++;
    });
    y += 14;
  });
  if (load && load.over_windows.length) {
    load.over_windows.forEach(function(w){
      var x1 = xs(w[0]), x2 = Math.max(x1 + 2, xs(w[1]));
      var shade = svg('rect', {x: x1, y: shadeTop, width: x2 - x1, height: y - shadeTop, fill: 'rgba(224,83,63,0.13)', stroke: 'rgba(224,83,63,0.5)', 'class': 'over-window', 'pointer-events': 'none'});
      s.insertBefore(shade, s.firstChild);
      var t = svg('title', {}); t.textContent = 'over-demanded from ' + ((w[0] - lo) / 1e9).toFixed(3) + ' s to ' + ((w[1] - lo) / 1e9).toFixed(3) + ' s'; shade.appendChild(t);
    });
  }
  s.setAttribute('height', y + 4);
  box.appendChild(s);
  if (drawn < flows.length) box.appendChild(el('div', 'muted', 'showing ' + drawn + ' of ' + flows.length + ' flows'));
}

// ---- Node selection ---------------------------------------------------------------------
function selectNode(i){
  if (!(i >= 0 && i < D.nodes.length)) return;
  state.node = i; sel.value = String(i);
  grid.querySelectorAll('.cell').forEach(function(c){ c.classList.toggle('sel', c.getAttribute('data-node') === String(i)); });
  var n = D.nodes[i];
  $('node-title').textContent = n.host + ': ' + (n.cpus_available !== undefined ? n.cpus_available + ' of ' + n.cpus_total + ' PUs, ' + n.cores_available + ' cores available' : '') + (n.topology === 'cpusets-seen' ? ' (no topology recorded: rebuilt from the cpusets seen)' : '');
  $('hl-status').textContent = '';
  drawTopology(); fillLevels(); colour(); drawFindings(); drawTimeline(); flowTable.render(); procTable.render(); drawCode();
}

// The first node of the worst group is drawn first: at 1,000 nodes, the odd one.
var firstNode = D.node_groups && D.node_groups.length && D.node_groups[0].nodes.length ? D.node_groups[0].nodes[0] : 0;
if (D.nodes.length) selectNode(firstNode); else { drawFindings(); $('code-section').style.display = 'none'; $('topo').appendChild(el('div', 'muted', 'No node in this run.')); flowTable.render(); procTable.render(); }
window.stacksageRenderMs = performance.now() - t0;
document.body.setAttribute('data-ready', '1');
})();
