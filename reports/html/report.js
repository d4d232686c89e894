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
// One section per node group: a group's representative node (g.node) is drawn for all its nodes.
var state = {group: 0, mode: 'allowed', level: null, finding: null, allGroups: false};
function cur(){ return D.groups[state.group].node; }
function nodesWord(n){ return Number(n).toLocaleString('en-US') + (n === 1 ? ' node' : ' nodes'); }
var puEls = [];   // PU elements of the drawn node, by PU index
var boxOfPu = []; // innermost box (core) element holding each PU

// ---- Header --------------------------------------------------------------
$('run-name').textContent = D.run.name || D.run.directory;
$('run-cmd').textContent = D.run.command || '';
// The whole run's counts (the page holds only each group's drawn node).
[['nodes', D.summary.nodes], ['node groups', D.groups.length], ['processes', D.summary.processes], ['flows', D.summary.flows], ['errors', D.summary.errors], ['warnings', D.summary.warnings], ['infos', D.summary.infos]].forEach(function(kv){
  var s = el('span', null, fmtNum(kv[1]) + ' ' + kv[0]); s.setAttribute('data-count', kv[0]); s.setAttribute('data-value', String(kv[1])); $('counts').appendChild(s);
});
var notes = $('notes');
D.notes.forEach(function(n){ notes.appendChild(el('div', 'note', n.level + (n.file ? ' (' + n.file + ')' : '') + ': ' + n.message)); });
if (!D.notes.length) notes.appendChild(el('div', 'muted', 'Every log and topology was read without trouble.'));

// ---- Node groups: selector and overview, one section per group as the analysis grouped them ----
// Each section: the group's hosts (hostlist notation), how many nodes it stands for, its warnings
// and errors (figures as ranges), and one cell for the node drawn for it, coloured by its worst finding.
var sel = $('group-select'), grid = $('grid');
D.groups.forEach(function(g, gi){ var o = el('option', null, g.hosts + (g.size > 1 ? ' (' + nodesWord(g.size) + ')' : '')); o.value = String(gi); sel.appendChild(o); });
D.groups.forEach(function(g, gi){
  var n = g.node;
  var box = el('div', 'ngroup sev-border-' + (g.worst || 'none')); box.setAttribute('data-group', String(gi)); box.setAttribute('data-hosts', g.hosts); box.setAttribute('data-size', String(g.size));
  var head = el('div', 'ghead');
  head.appendChild(el('span', 'ghosts', g.hosts));
  head.appendChild(el('span', 'gsize', nodesWord(g.size)));
  head.appendChild(el('span', 'muted', 'worst finding: ' + (g.worst || 'none') + (g.size > 1 ? '; drawn from ' + n.host + ', the same findings on every node' : '')));
  box.appendChild(head);
  g.findings.forEach(function(f){
    if (f.severity === 'info') return;
    var line = el('div', 'gfinding'); line.appendChild(el('span', 'sevtag sev-' + f.severity, f.severity)); line.appendChild(document.createTextNode(' ' + f.message)); box.appendChild(line);
  });
  var cells = el('div', 'gcells');
  var c = el('div', 'cell sev-' + n.worst, g.size > 1 ? n.host + ' for ' + nodesWord(g.size) : n.host); c.setAttribute('data-group', String(gi)); c.setAttribute('data-worst', n.worst);
  c.title = n.host + (g.size > 1 ? ', drawn for the ' + nodesWord(g.size) + ' of ' + g.hosts : '') + ': worst finding ' + n.worst + ', ' + (n.processes || 0) + ' processes, ' + (n.threads || 0) + ' threads';
  c.addEventListener('click', function(){ selectGroup(gi); var t = $('topology-section'); if (t.scrollIntoView) t.scrollIntoView(); });
  cells.appendChild(c);
  box.appendChild(cells);
  grid.appendChild(box);
});
// Which section a host is in: its group's hostlist ("n[0001-0499,0501-1000]") holds it.
function hostlistHas(list, host){
  var terms = [], depth = 0, from = 0, i;
  for (i = 0; i < list.length; i++) { var ch = list[i]; if (ch === '[') depth++; else if (ch === ']') depth--; else if (ch === ',' && !depth) { terms.push(list.slice(from, i)); from = i + 1; } }
  terms.push(list.slice(from));
  return terms.some(function(t){
    var open = t.indexOf('['), close = t.lastIndexOf(']');
    if (open < 0 || close < open) return t === host;
    var pre = t.slice(0, open), post = t.slice(close + 1);
    if (host.length <= pre.length + post.length || host.slice(0, pre.length) !== pre || host.slice(host.length - post.length) !== post) return false;
    var mid = host.slice(pre.length, host.length - post.length);
    if (!/^[0-9]+$/.test(mid)) return false;
    return t.slice(open + 1, close).split(',').some(function(r){
      var ab = r.split('-'), a = ab[0], b = ab.length > 1 ? ab[1] : ab[0], v = parseInt(mid, 10);
      var width = a.length > 1 && a[0] === '0' ? a.length : 0;
      return v >= parseInt(a, 10) && v <= parseInt(b, 10) && (width ? mid.length === width : String(v) === mid);
    });
  });
}
$('host-find').addEventListener('input', function(){
  var h = this.value.trim(), out = $('host-found');
  if (!h) { out.textContent = ''; return; }
  for (var gi = 0; gi < D.groups.length; gi++) if (hostlistHas(D.groups[gi].hosts, h)) {
    var g = D.groups[gi];
    out.textContent = h + ' is in ' + g.hosts + (g.size > 1 ? ' (' + nodesWord(g.size) + ', drawn from ' + g.node.host + ')' : '');
    out.setAttribute('data-group', String(gi));
    selectGroup(gi);
    return;
  }
  out.textContent = 'no node ' + h + ' in this run'; out.removeAttribute('data-group');
});
sel.addEventListener('change', function(){ selectGroup(parseInt(sel.value, 10)); });
$('mode').addEventListener('change', function(){ state.mode = $('mode').value; colour(); });
$('level').addEventListener('change', function(){ state.level = $('level').value; colour(); });

// ---- Topology boxes ------------------------------------------------------
function drawBox(b, parent, enclosing){
  if (b.t === 'pu') {
    var p = el('div', 'pu', cur().pus[b.p]); p.setAttribute('data-pu', String(b.p));
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
  var n = cur();
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
  var n = cur(), ls = $('level'); ls.textContent = '';
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
  var n = cur(), lg = $('legend'); lg.textContent = '';
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
  var i = parseInt(t.getAttribute('data-pu'), 10), n = cur();
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
// The selected group's findings (as the analysis wrote them for the group: its hosts, figures as
// ranges) and the run-wide ones; every group's when asked. Ids: "g<group>-<k>", "r<k>".
function findingOf(id){
  var m = /^g(\d+)-(\d+)$/.exec(id);
  if (m) return {group: +m[1], f: D.groups[+m[1]].findings[+m[2]]};
  return {group: -1, f: D.findings[+id.slice(1)]};
}
function findingBox(id, f, where, size){
  var d = el('div', 'finding ' + f.severity); d.setAttribute('data-finding', id);
  var head = el('div');
  head.appendChild(el('b', null, f.severity.toUpperCase() + (where ? ' ' + where : '') + (size > 1 ? ' (' + nodesWord(size) + ')' : '') + ': '));
  head.appendChild(document.createTextNode(f.message));
  d.appendChild(head);
  var flows = f.flow_count && typeof f.flow_count === 'object' ? (f.flow_count.min === f.flow_count.max ? f.flow_count.min : f.flow_count.min + '\u2013' + f.flow_count.max) : f.flow_count;
  d.appendChild(el('div', 'code', f.code + ' (' + f.check + ')' + (f.resources ? ' \u2014 CPUs ' + f.resources : '') + (flows ? ' \u2014 ' + flows + ' flow(s)' + (size > 1 ? ' per node' : '') : '')));
  if (f.detail) d.appendChild(el('div', 'det', f.detail));
  if (f.suggestion) d.appendChild(el('div', 'sugg', 'Suggestion: ' + f.suggestion));
  d.addEventListener('click', function(){ highlightFinding(id); });
  return d;
}
function drawFindings(){
  var box = $('findings'); box.textContent = '';
  var all = $('all-findings').checked, shown = 0, total = D.findings.length;
  D.groups.forEach(function(g, gi){
    total += g.findings.length;
    if (!all && gi !== state.group) return;
    g.findings.forEach(function(f, k){ box.appendChild(findingBox('g' + gi + '-' + k, f, g.hosts, g.size)); shown++; });
  });
  D.findings.forEach(function(f, k){ box.appendChild(findingBox('r' + k, f, '', 0)); shown++; });
  var others = total - shown;
  $('findings-status').textContent = (shown ? '' : 'No findings here. ') + (others ? others + ' more finding(s) in other groups.' : '');
}
$('all-findings').addEventListener('change', function(){ drawFindings(); if (state.finding !== null) { var fe = document.querySelector('.finding[data-finding="' + state.finding + '"]'); if (fe) fe.classList.add('sel'); } });
function clearHighlight(){ document.querySelectorAll('.hl').forEach(function(e){ e.classList.remove('hl'); }); document.querySelectorAll('.finding.sel').forEach(function(e){ e.classList.remove('sel'); }); }
function highlightFinding(id){
  var of = findingOf(id), f = of.f;
  if (of.group >= 0 && of.group !== state.group) selectGroup(of.group);
  clearHighlight();
  state.finding = id;
  var fe = document.querySelector('.finding[data-finding="' + id + '"]'); if (fe) fe.classList.add('sel');
  var cpus = parseList(f.resources), node = cur(), count = 0;
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
function inScope(p){ return state.allGroups || D.processes[p].group === state.group; }
function hostOf(p){ return D.groups[p.group] ? D.groups[p.group].node.host : '?'; }
// Flows per group and threads per process, indexed once: switching groups must not rescan every flow.
var flowsOfGroup = D.groups.map(function(){ return []; }), threadsOf = D.processes.map(function(){ return 0; });
D.flows.forEach(function(f){ var p = f[FC.process]; threadsOf[p]++; var g = D.processes[p].group; if (flowsOfGroup[g]) flowsOfGroup[g].push(f); });
var flowTable = makeTable('flows', [
  {name: 'host'}, {name: 'rank'}, {name: 'pid'}, {name: 'tid'}, {name: 'thread name'}, {name: 'runtime'}, {name: 'kind'},
  {name: 'cpuset'}, {name: 'CPU time', fmt: function(v){ return v === null || v < 0 ? '-' : fmtMs(v / 1000); }},
  {name: 'lifetime', fmt: function(v){ return fmtMs(v / 1e6); }}, {name: 'state'}], function(){
  var rows = [];
  (state.allGroups || !flowsOfGroup[state.group] ? D.flows : flowsOfGroup[state.group]).forEach(function(f){
    var p = D.processes[f[FC.process]]; if (!inScope(f[FC.process])) return;
    rows.push([hostOf(p), p.rank, p.pid, f[FC.tid], f[FC.name], D.runtimes[f[FC.runtime]].name, f[FC.kind], f[FC.cpuset],
      f[FC.cpu_us], Math.max(0, f[FC.end_ns] - f[FC.start_ns]), f[FC.state] + (p.end && p.end !== 'exit' && p.end !== 'return' ? ' (' + p.end + ')' : '')]);
  });
  return rows;
});
var procTable = makeTable('procs', [{name: 'host'}, {name: 'rank'}, {name: 'pid'}, {name: 'name'}, {name: 'command line', wrap: true}, {name: 'threads'}, {name: 'launcher'}, {name: 'end'}], function(){
  var rows = [];
  D.processes.forEach(function(p, i){ if (!inScope(i)) return; rows.push([hostOf(p), p.rank, p.pid, p.name, p.cmdline, threadsOf[i], p.launcher, p.end]); });
  return rows;
});
$('flow-filter').addEventListener('input', function(){ flowTable.filter = this.value; procTable.filter = this.value; flowTable.render(); procTable.render(); });
$('all-groups').addEventListener('change', function(){ state.allGroups = this.checked; flowTable.render(); procTable.render(); });

// ---- Call sites and data objects ---------------------------------------------------------
// A sortable table of call sites x levels, and a heatmap of each object's samples per level.
var siteTable = null;
function drawCode(){
  var n = D.groups.length ? cur() : null, mem = n && n.memory, sites = mem && mem.sites ? mem.sites : [], objects = mem && mem.objects ? mem.objects : [];
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
  var flows = flowsOfGroup[state.group] || [];
  if (!flows.length) { box.appendChild(el('div', 'muted', 'No flows on this node.')); return; }
  var load = cur().load;
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

// ---- Group selection ---------------------------------------------------------------------
function selectGroup(gi){
  if (!(gi >= 0 && gi < D.groups.length)) return;
  state.group = gi; sel.value = String(gi);
  grid.querySelectorAll('.cell').forEach(function(c){ c.classList.toggle('sel', c.getAttribute('data-group') === String(gi)); });
  var g = D.groups[gi], n = g.node;
  $('node-title').textContent = n.host + (g.size > 1 ? ', drawn for the ' + nodesWord(g.size) + ' of ' + g.hosts : '') + ': ' +
    (n.cpus_available !== undefined ? n.cpus_available + ' of ' + n.cpus_total + ' PUs, ' + n.cores_available + ' cores available' : '') + (n.topology === 'cpusets-seen' ? ' (no topology recorded: rebuilt from the cpusets seen)' : '');
  $('node-title').setAttribute('data-size', String(g.size));
  $('hl-status').textContent = '';
  drawTopology(); fillLevels(); colour(); drawFindings(); drawTimeline(); flowTable.render(); procTable.render(); drawCode();
}

// The worst group is drawn first: at 1,000 nodes, the odd one.
if (D.groups.length) selectGroup(0); else { drawFindings(); $('code-section').style.display = 'none'; $('topo').appendChild(el('div', 'muted', 'No node in this run.')); flowTable.render(); procTable.render(); }
window.stacksageRenderMs = performance.now() - t0;
document.body.setAttribute('data-ready', '1');
})();
