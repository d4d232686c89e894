// The HTML report in a real browser: Debian's chromium, headless, driven
// through the Chrome DevTools Protocol over --remote-debugging-pipe (fds 3
// and 4, NUL-separated JSON messages, as Playwright does), with no npm
// package. Node 18 or newer.
//
//   node html_report_browser.mjs --cli stacksage --generator stacksage_html_run --artifacts DIR
//       writes the 160-PU demo run, renders its page with `stacksage report --html`, and checks
//       in the browser: no console error, 160 PU boxes, heatmap levels switch, a clicked finding
//       highlights its PUs, the injected thread name and command line stay text, hover tooltips,
//       group switching, table sorting and filtering; saves DIR/html-report.png. Then a six-node
//       run with one odd node: one section per node group as the analysis grouped them (odd one
//       first, hosts in hostlist notation, how many nodes each stands for), one cell per group
//       for its drawn node coloured by its worst finding, a click on a cell opens that group,
//       the host finder; saves DIR/html-report-overview.png. Then a run of 300 alike nodes and
//       a few odd ones: four sections, the odd nodes' own, counts, the drawn node of a group of
//       two, saves DIR/html-report-groups.png. With --attributed
//       PROGRAM (stacksage_attributed_page): the page of a run with call sites and data objects,
//       its sortable table of call sites x levels and its heatmap per object.
//   node html_report_browser.mjs --bench PAGE [--runs N] [--screenshot PNG]
//       loads PAGE N times (default 5), each in a new tab, and prints (JSON) the time from
//       navigation to the first painted frame after the page's script finished rendering.
//
// Exit status: 0 passed, 1 failed, 77 skipped (no chromium).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a.startsWith('--')) args[a.slice(2)] = (i + 1 < process.argv.length && !process.argv[i + 1].startsWith('--')) ? process.argv[++i] : true;
}

function findChromium() {
  const candidates = [process.env.STACKSAGE_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
  for (const c of candidates) if (fs.existsSync(c)) return c;
  return null;
}

class Browser {
  static async launch(executable) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'stacksage-chromium-'));
    const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions',
      '--disable-default-apps', '--disable-dev-shm-usage', '--mute-audio', '--hide-scrollbars', `--user-data-dir=${profile}`,
      '--remote-debugging-pipe', 'about:blank'];
    const child = spawn(executable, flags, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    const b = new Browser(child, profile);
    let stderr = '';
    child.stderr.on('data', d => { stderr += d; });
    child.on('exit', code => { b.exited = true; for (const [, p] of b.pending) p.reject(new Error(`chromium exited (${code}): ${stderr.slice(-2000)}`)); b.pending.clear(); });
    await b.send('Target.setDiscoverTargets', { discover: true });
    return b;
  }
  constructor(child, profile) {
    this.child = child; this.profile = profile; this.id = 0; this.pending = new Map(); this.listeners = []; this.buffer = '';
    this.out = child.stdio[3]; this.in = child.stdio[4];
    this.in.setEncoding('utf8');
    this.in.on('data', chunk => {
      this.buffer += chunk;
      let at;
      while ((at = this.buffer.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, at));
        this.buffer = this.buffer.slice(at + 1);
        if (msg.id !== undefined && this.pending.has(msg.id)) {
          const p = this.pending.get(msg.id); this.pending.delete(msg.id);
          if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`)); else p.resolve(msg.result);
        } else for (const l of this.listeners) l(msg);
      }
    });
  }
  send(method, params = {}, sessionId = undefined) {
    const id = ++this.id;
    const msg = { id, method, params }; if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.out.write(JSON.stringify(msg) + '\0');
    });
  }
  on(fn) { this.listeners.push(fn); }
  async newPage(width = 1500, height = 1000) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId);
    await page.send('Page.enable'); await page.send('Runtime.enable'); await page.send('Log.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    return page;
  }
  async close() {
    try { await Promise.race([this.send('Browser.close'), new Promise(r => setTimeout(r, 3000))]); } catch (e) { /* already gone */ }
    if (!this.exited) this.child.kill('SIGKILL');
    // Chromium's helper processes may still be writing into the profile for
    // a moment after the browser process is gone: wait for the exit, retry
    // the removal, and never let cleanup fail the test.
    const deadline = Date.now() + 5000;
    while (!this.exited && Date.now() < deadline) await new Promise(r => setTimeout(r, 50));
    try {
      fs.rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.log(`note: could not remove ${this.profile}: ${e.message}`);
    }
  }
}

class Page {
  constructor(browser, sessionId) {
    this.b = browser; this.sessionId = sessionId; this.errors = []; this.loaded = null;
    browser.on(msg => {
      if (msg.sessionId !== sessionId) return;
      if (msg.method === 'Runtime.consoleAPICalled' && (msg.params.type === 'error' || msg.params.type === 'assert'))
        this.errors.push('console.' + msg.params.type + ': ' + msg.params.args.map(a => a.value ?? a.description).join(' '));
      if (msg.method === 'Runtime.exceptionThrown') this.errors.push('exception: ' + (msg.params.exceptionDetails.exception?.description || msg.params.exceptionDetails.text));
      if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') this.errors.push('log: ' + msg.params.entry.text);
      if (msg.method === 'Page.loadEventFired' && this.loaded) { this.loaded(); this.loaded = null; }
    });
  }
  send(method, params) { return this.b.send(method, params, this.sessionId); }
  async goto(url) {
    const loaded = new Promise(r => { this.loaded = r; });
    await this.send('Page.navigate', { url });
    await loaded;
  }
  async eval(expression) {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error('evaluate failed: ' + (r.exceptionDetails.exception?.description || r.exceptionDetails.text) + '\n' + expression);
    return r.result.value;
  }
  async waitFor(expression, timeoutMs = 10000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (await this.eval(expression)) return;
      if (Date.now() > until) throw new Error('timed out waiting for ' + expression);
      await new Promise(r => setTimeout(r, 20));
    }
  }
  // A real mouse click at the centre of the element the selector finds.
  async click(selector) {
    const box = await this.eval(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return null; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`);
    if (!box) throw new Error('nothing to click: ' + selector);
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased'])
      await this.send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  }
  async hover(selector) {
    const box = await this.eval(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`);
    await this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: box.x, y: box.y });
  }
  // Chooses an option as a user would: the value changes and 'change' fires.
  async select(selector, value) {
    await this.eval(`(() => { const s = document.querySelector(${JSON.stringify(selector)}); s.value = ${JSON.stringify(value)}; s.dispatchEvent(new Event('change', {bubbles: true})); })()`);
  }
  async screenshot(file) {
    await this.eval('window.scrollTo(0, 0)');
    const { cssContentSize } = await this.send('Page.getLayoutMetrics');
    const height = Math.min(Math.ceil(cssContentSize.height), +(args['screenshot-height'] || 6000));
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: Math.ceil(cssContentSize.width), height, scale: 1 } });
    fs.writeFileSync(file, Buffer.from(data, 'base64'));
  }
}

let failures = 0;
function check(ok, what, got) {
  if (ok) console.log('ok   ' + what);
  else { failures++; console.log('FAIL ' + what + (got !== undefined ? ' (got ' + JSON.stringify(got) + ')' : '')); }
}

async function functionalTest(chromium) {
  const artifacts = path.resolve(args.artifacts || 'test-artifacts/browser');
  fs.mkdirSync(artifacts, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stacksage-browser-'));
  const run = path.join(work, 'run'), html = path.join(artifacts, 'html-report.html');
  execFileSync(args.generator, ['demo', run], { stdio: 'inherit' });
  execFileSync(args.cli, ['report', run, '--html', html], { stdio: ['ignore', 'ignore', 'inherit'] });
  const injectedName = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
  const injectedExe = '/opt/app/bin/app<img src=x onerror=window.__pwned=3>&amp;</script>';

  const browser = await Browser.launch(chromium);
  try {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(html).href);
    await page.waitFor("document.body && document.body.getAttribute('data-ready') === '1'");
    check(page.errors.length === 0, 'the page loads with no console error', page.errors);

    // The real 160-PU Sapphire Rapids node is drawn first.
    check(await page.eval("document.getElementById('group-select').selectedOptions[0].textContent") === 'n01', 'n01\'s group (n01 alone) is selected first');
    const pus = await page.eval("document.querySelectorAll('#topo .pu').length");
    check(pus === 160, '160 PU boxes are drawn for the 160-PU topology', pus);
    const packages = await page.eval("document.querySelectorAll('#topo > .box.package').length");
    check(packages === 2, 'two package boxes', packages);
    const puNumbers = await page.eval("Array.from(document.querySelectorAll('#topo .pu')).map(e => +e.textContent).sort((a, b) => a - b).join(',')");
    check(puNumbers === Array.from({ length: 160 }, (_, i) => i).join(','), 'the PU boxes are PUs 0-159, each once');
    const gridCells = await page.eval("document.querySelectorAll('#grid .cell').length");
    check(gridCells === 2, 'the overview has one cell per group, here one per node (n01 and n02 differ)', gridCells);
    check(await page.eval("document.querySelector('#grid .cell[data-group=\"0\"]').classList.contains('sev-warning')"), 'n01\'s cell is coloured by its worst finding (warning)');

    // Flows-allowed colours: PU 40 over-subscribed (red), PU 3 one flow (green), PU 100 idle.
    const bg = n => page.eval(`getComputedStyle(Array.from(document.querySelectorAll('#topo .pu')).find(e => e.textContent === '${n}')).backgroundColor`);
    check(await bg(40) === 'rgb(224, 83, 63)', 'PU 40 is coloured over-subscribed', await bg(40));
    check(await bg(3) === 'rgb(124, 196, 127)', 'PU 3 is coloured exactly one flow', await bg(3));
    check(await bg(100) === 'rgb(228, 231, 235)', 'PU 100 is coloured idle', await bg(100));

    // Heatmap levels.
    await page.select('#mode', 'memory');
    const levels = await page.eval("Array.from(document.querySelectorAll('#level option')).map(o => o.value).join(',')");
    check(levels === 'L1,L2,L3,local_dram,remote_dram', 'the level selector lists the sampled levels', levels);
    await page.select('#level', 'L1');
    const l1pu0 = await bg(0), l1pu7 = await bg(7), l1legend = await page.eval("document.getElementById('legend').textContent");
    check(l1pu0 !== 'rgb(255, 255, 255)' && l1pu7 !== l1pu0, 'L1: PUs 0 and 7 are shaded by their counts', [l1pu0, l1pu7]);
    check(l1legend.includes('served by L1'), 'the legend names the level', l1legend);
    await page.select('#level', 'remote_dram');
    check(await bg(0) === 'rgb(255, 255, 255)' && await bg(5) !== 'rgb(255, 255, 255)', 'remote DRAM: PU 0 has none, PU 5 some', [await bg(0), await bg(5)]);
    check((await page.eval("document.getElementById('legend').textContent")).includes('served by remote_dram'), 'the legend follows the level switch');
    await page.hover('#topo .pu[data-pu]:first-child');
    const tip = await page.eval("document.getElementById('tip').style.display === 'block' ? document.getElementById('tip').textContent : ''");
    check(/PU P#\d+ on n01/.test(tip) && tip.includes('remote_dram:'), 'hovering a PU shows its numbers', tip);
    await page.select('#mode', 'cpu');
    check((await page.eval("document.getElementById('legend').textContent")).includes('CPU time per PU'), 'CPU time mode has its legend');

    // Clicking a finding highlights its PUs.
    const index = await page.eval("(() => { const d = JSON.parse(document.getElementById('stacksage-data').textContent); const g = d.groups.findIndex(g => g.hosts === 'n01'); const k = g < 0 ? -1 : d.groups[g].findings.findIndex(f => f.code === 'overloaded-resources'); return k < 0 ? '' : 'g' + g + '-' + k; })()");
    check(index !== '' && await page.eval(`!!document.querySelector('.finding[data-finding="${index}"]')`), 'the over-subscription finding is listed', index);
    await page.click(`.finding[data-finding="${index}"]`);
    const lit = await page.eval("Array.from(document.querySelectorAll('#topo .pu.hl')).map(e => e.textContent).sort((a, b) => a - b).join(',')");
    check(lit === '40,41,42,43', 'clicking it highlights PUs 40-43', lit);
    const litCores = await page.eval("document.querySelectorAll('#topo .box.core.hl').length");
    check(litCores === 4, 'and their 4 cores', litCores);
    check(await page.eval(`document.querySelector('.finding[data-finding="${index}"]').classList.contains('sel')`), 'the clicked finding is marked');

    // The injections stay text.
    await page.eval("document.getElementById('all-groups').click()");
    check(await page.eval('window.__pwned === undefined'), 'no injected script or handler ran');
    check(await page.eval("document.querySelectorAll('img, script').length") === 2, 'no element was injected (only the two scripts of the page)');
    const cells = await page.eval("Array.from(document.querySelectorAll('#flows td')).map(td => td.textContent)");
    check(cells.includes(injectedName), 'the injected thread name is shown as text in the flow table');
    const cmd = await page.eval("Array.from(document.querySelectorAll('#procs td')).map(td => td.textContent)");
    check(cmd.some(c => c.includes(injectedExe)), 'the injected command line is shown as text');
    const titles = await page.eval("Array.from(document.querySelectorAll('#timeline title')).map(t => t.textContent).join('\\n')");
    check(titles.includes(injectedName), 'the timeline tooltip shows the name as text');

    // Table: filter and sort.
    await page.eval("(() => { const f = document.getElementById('flow-filter'); f.value = 'n02'; f.dispatchEvent(new Event('input')); })()");
    const filtered = await page.eval("document.querySelectorAll('#flows tbody tr').length");
    check(filtered === 8, 'filtering the flows by host keeps n02\'s 8', filtered);
    await page.eval("(() => { const f = document.getElementById('flow-filter'); f.value = ''; f.dispatchEvent(new Event('input')); })()");
    await page.click('#flows th[data-col="3"]');
    await page.click('#flows th[data-col="3"]');
    const tids = await page.eval("Array.from(document.querySelectorAll('#flows tbody tr')).map(r => +r.children[3].textContent)");
    check(tids.length === 24 && tids.every((t, i) => i === 0 || tids[i - 1] >= t), 'sorting by tid (descending after two clicks)', tids.slice(0, 4));

    // Timeline: lifetimes per runtime and the affinity change.
    const bars = await page.eval("document.querySelectorAll('#timeline rect[data-tid]').length");
    check(bars === 16, 'the timeline draws n01\'s 16 flows', bars);
    check(await page.eval("document.querySelectorAll('#timeline rect.affinity').length") === 1, 'and one affinity change');
    // The load over time (the analysis's series): one strip per CPU the flows may use, PUs 40-43
    // over-demanded (8 threads on 4 PUs: 2 wanting each), the window shaded, the busy threads drawn.
    const rows = await page.eval("Array.from(document.querySelectorAll('#timeline g.load-row')).map(g => g.getAttribute('data-cpus'))");
    check(rows.length === 13 && rows.includes('40') && rows.includes('8'), 'the load strips: one per CPU the flows may use (0-8, 40-43)', rows);
    const overBins = await page.eval("Array.from(document.querySelectorAll('#timeline g.load-row[data-cpus=\"40\"] rect.load-bin')).map(r => +r.getAttribute('data-demand'))");
    check(overBins.length > 100 && overBins.every(d => d > 1.9 && d < 2.1), 'PU 40\'s strip: 2 threads wanting it throughout', overBins.slice(0, 4));
    const fineBins = await page.eval("Array.from(document.querySelectorAll('#timeline g.load-row[data-cpus=\"3\"] rect.load-bin')).map(r => +r.getAttribute('data-demand'))");
    check(fineBins.length > 100 && fineBins.every(d => d <= 1), 'PU 3\'s strip: never more than one thread', fineBins.slice(0, 4));
    check(await page.eval("getComputedStyle(document.querySelector('#timeline g.load-row[data-cpus=\"40\"] rect.load-bin')).fill") !== await page.eval("getComputedStyle(document.querySelector('#timeline g.load-row[data-cpus=\"3\"] rect.load-bin')).fill"),
      'over-demanded bins are coloured apart from bins within capacity');
    const shade = await page.eval("(() => { const w = document.querySelectorAll('#timeline rect.over-window'); if (w.length !== 1) return null; const r = w[0].getBBox(), svg = w[0].ownerSVGElement.getBBox(); return {x: r.x, width: r.width, height: r.height, svgWidth: svg.width, title: w[0].textContent}; })()");
    check(shade !== null && shade.width > 0.8 * (shade.svgWidth - 180) && shade.height > 100 && /over-demanded from 0\.0\d\d s to (9\.9\d\d|10\.\d+) s/.test(shade.title),
      'the over-demanded window is shaded over the whole run, across the strips and the flows', shade);
    check(await page.eval("document.querySelectorAll('#timeline polyline.busy-series').length") === 1, 'the busy threads are drawn over time');
    const lightBars = await page.eval("Array.from(document.querySelectorAll('#timeline rect.flow')).map(r => r.getAttribute('fill-opacity') + ':' + r.classList.contains('service'))");
    check(lightBars.length === 16 && lightBars.every(b => b === '1:false'), 'active flows are drawn solid (this run has no service flow)', lightBars.slice(0, 3));

    // Screenshot of n01 with the finding highlighted and the memory heatmap.
    await page.eval("document.getElementById('all-groups').click()");
    await page.select('#mode', 'allowed');
    await page.click(`.finding[data-finding="${index}"]`);
    await page.screenshot(path.join(artifacts, 'html-report.png'));
    console.log('screenshot: ' + path.join(artifacts, 'html-report.png'));
    await page.select('#mode', 'memory');
    await page.select('#level', 'L1');
    args['screenshot-height'] = 760;
    await page.screenshot(path.join(artifacts, 'html-report-memory-L1.png'));
    delete args['screenshot-height'];

    // Another group (n02 alone) from the overview.
    await page.click('#grid .cell[data-group="1"]');
    const pus2 = await page.eval("document.querySelectorAll('#topo .pu').length");
    check(pus2 === 16, 'clicking n02\'s cell draws its 16 PUs', pus2);
    check(await page.eval("document.getElementById('level').disabled"), 'n02 has no memory samples: no level to choose');
    const n02Bars = await page.eval("Array.from(document.querySelectorAll('#timeline rect.flow')).map(r => (r.classList.contains('service') ? 'service:' : 'active:') + r.getAttribute('fill-opacity'))");
    check(n02Bars.length === 8 && n02Bars.filter(b => b === 'service:0.25').length === 1 && n02Bars.filter(b => b === 'active:1').length === 7,
      'n02\'s idle main thread (a service flow) is drawn light, its 7 workers solid', n02Bars);
    check(await page.eval("document.querySelectorAll('#timeline rect.over-window').length") === 0, 'n02 was never over-demanded: nothing shaded');
    check(page.errors.length === 0, 'still no console error', page.errors);
    await overviewTest(browser, work, artifacts);
    await groupsTest(browser, work, artifacts);
    if (args.attributed) await attributionTest(browser, work, artifacts);
  } finally {
    await browser.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

// Call sites and data objects: the sortable table of call sites x levels and
// the heatmap per object, on the page of a run of known shape
// (stacksage_attributed_page, tests/support/attributed_run.hpp).
async function attributionTest(browser, work, artifacts) {
  const run = path.join(work, 'attributed'), html = path.join(artifacts, 'html-report-call-sites.html');
  execFileSync(args.attributed, [run, html], { stdio: 'inherit' });
  const page = await browser.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.waitFor("document.body && document.body.getAttribute('data-ready') === '1'");
  check(page.errors.length === 0, 'the call-site page loads with no console error', page.errors);
  const header = await page.eval("Array.from(document.querySelectorAll('#sites th')).map(t => t.textContent).join('|')");
  check(header === 'call site|call path|L1|local_dram|remote_dram|first_touch|all', 'the call-site table has a column per level', header);
  const column = c => page.eval(`Array.from(document.querySelectorAll('#sites tbody tr')).map(r => r.children[${c}].textContent).join('|')`);
  const sites = await column(0);
  check(/^compute_mesh \(attributed_summary\.hpp:\d+\)\|init_mesh \(attributed_summary\.hpp:\d+\)$/.test(sites),
    'the call sites are listed, most samples first', sites);
  check((await column(1)).includes('init_mesh (attributed_summary.hpp:') && (await column(1)).includes(' < setup_mesh ('),
    'each site shows its call path', await column(1));
  // Sort by first touches, descending: init_mesh's 92 first.
  await page.eval("document.querySelector('#sites th[data-col=\"5\"]').click()");
  await page.eval("document.querySelector('#sites th[data-col=\"5\"]').click()");
  check((await column(5)) === '92|8', 'a click on the first-touch column sorts by it (twice: descending)', await column(5));
  check((await column(0)).startsWith('init_mesh'), 'init_mesh comes first by first touches', await column(0));
  await page.eval("document.querySelector('#sites th[data-col=\"4\"]').click()");
  check((await column(4)) === '0|600', 'a click on remote_dram sorts by it, ascending', await column(4));
  // The heatmap per object: one row each, its cells shaded by the row's largest.
  const objects = await page.eval("Array.from(document.querySelectorAll('#objects tr')).slice(1).map(r => r.children[0].textContent + '=' + Array.from(r.children).slice(2).map(c => c.textContent).join(',')).join('|')");
  check(objects.startsWith('heap block of 80 MiB allocated at attributed_summary.hpp:') && objects.includes(' in alloc_mesh=,,600,100|') &&
    objects.includes('static `stacksage_test_mesh_table` in stacksage_attributed_page=300,,,') && objects.includes('stack of thread 471101=,100,,'),
    'the object heatmap has a row per object and a cell per level', objects);
  const shades = await page.eval("(() => { const r = document.querySelectorAll('#objects tr')[1].children; return [getComputedStyle(r[4]).backgroundColor, getComputedStyle(r[2]).backgroundColor]; })()");
  check(shades[0] !== shades[1] && shades[1] === 'rgb(255, 255, 255)', 'the object row\'s largest cell is shaded, an empty one white', shades);
  check(page.errors.length === 0, 'still no console error after sorting', page.errors);
  await page.eval("document.getElementById('code-section').scrollIntoView()");
  await page.screenshot(path.join(artifacts, 'html-report-call-sites.png'));
}

// The node overview: one section per group, one cell per group, colours, a click into a group, the host finder.
async function overviewTest(browser, work, artifacts) {
  const run = path.join(work, 'cluster'), html = path.join(artifacts, 'html-report-cluster.html');
  execFileSync(args.generator, ['cluster', run], { stdio: 'inherit' });
  execFileSync(args.cli, ['report', run, '--html', html], { stdio: ['ignore', 'ignore', 'inherit'] });
  const page = await browser.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.waitFor("document.body && document.body.getAttribute('data-ready') === '1'");
  check(page.errors.length === 0, 'overview: the page loads with no console error', page.errors);
  check(await page.eval("document.getElementById('nodes-section').getBoundingClientRect().top < document.getElementById('topology-section').getBoundingClientRect().top"), 'overview: the page opens on the node overview');
  check(await page.eval("document.getElementById('group-select').selectedOptions[0].textContent") === 'n03', 'overview: the worst group, n03 alone, is drawn first');
  check((await page.eval("document.getElementById('node-title').textContent")).startsWith('n03: '), 'overview: n03 is drawn', await page.eval("document.getElementById('node-title').textContent"));
  const groups = await page.eval("Array.from(document.querySelectorAll('#grid .ngroup')).map(g => [g.getAttribute('data-hosts'), +g.getAttribute('data-size'), g.querySelector('.ghosts').textContent, g.querySelector('.gsize').textContent, g.querySelectorAll('.cell').length])");
  check(JSON.stringify(groups) === JSON.stringify([['n03', 1, 'n03', '1 node', 1], ['n[01-02,04-06]', 5, 'n[01-02,04-06]', '5 nodes', 1]]),
    'overview: the odd node is a section of its own, first; the others one section under their host range, saying it stands for 5 nodes', groups);
  const cells = await page.eval("Array.from(document.querySelectorAll('#grid .cell')).map(c => c.textContent)");
  check(JSON.stringify(cells) === JSON.stringify(['n03', 'n01 for 5 nodes']), 'overview: one cell per group, naming the node drawn for it', cells);
  const options = await page.eval("Array.from(document.querySelectorAll('#group-select option')).map(o => o.textContent)");
  check(JSON.stringify(options) === JSON.stringify(['n03', 'n[01-02,04-06] (5 nodes)']), 'overview: the selector lists the groups with their sizes', options);
  // The worst severity of each drawn node, from its group's findings and the run-wide ones, and its cell's colour.
  const expected = await page.eval(`(() => {
    const d = JSON.parse(document.getElementById('stacksage-data').textContent), rank = {info: 1, warning: 2, error: 3}, name = ['none', 'info', 'warning', 'error'];
    return d.groups.map(g => name[g.findings.concat(d.findings).reduce((w, f) => Math.max(w, rank[f.severity]), 0)]);
  })()`);
  check(JSON.stringify(expected) === JSON.stringify(['warning', 'none']), 'overview: n03 has a warning, the others no finding', expected);
  const colours = { none: 'rgb(217, 242, 217)', info: 'rgb(214, 232, 250)', warning: 'rgb(255, 215, 122)', error: 'rgb(240, 138, 128)' };
  const got = await page.eval("Array.from(document.querySelectorAll('#grid .cell')).map(c => [+c.getAttribute('data-group'), getComputedStyle(c).backgroundColor])");
  check(got.length === 2 && got.every(([i, bg]) => bg === colours[expected[i]]), 'overview: each cell has the colour of its drawn node\'s worst finding', got);
  const groupFinding = await page.eval("document.querySelector('#grid .ngroup .gfinding') ? document.querySelector('#grid .ngroup .gfinding').textContent : ''");
  check(groupFinding.startsWith('warning') && groupFinding.includes('had more threads to run than they could run at once'), 'overview: the odd group shows its finding', groupFinding);
  await page.click('#grid .cell[data-group="1"]');
  check(await page.eval("document.getElementById('group-select').selectedOptions[0].textContent") === 'n[01-02,04-06] (5 nodes)', 'overview: clicking the group\'s cell selects the group');
  const title = await page.eval("document.getElementById('node-title').textContent");
  check(title.startsWith('n01, drawn for the 5 nodes of n[01-02,04-06]: '), 'overview: and draws its first node, saying for how many nodes', title);
  check(await page.eval("document.querySelectorAll('#topo .pu').length") === 2, 'overview: n01\'s 2 PUs are drawn');
  check(await page.eval("document.querySelector('#grid .cell[data-group=\"1\"]').classList.contains('sel')"), 'overview: the group\'s cell is marked selected');
  // The host finder: n03 is in its own section, n05 in the group of five.
  const find = async host => { await page.eval(`(() => { const f = document.getElementById('host-find'); f.value = ${JSON.stringify(host)}; f.dispatchEvent(new Event('input')); })()`); return page.eval("[document.getElementById('host-found').textContent, document.getElementById('group-select').value]"); };
  let found = await find('n03');
  check(found[0] === 'n03 is in n03' && found[1] === '0', 'overview: finding n03 selects its own section', found);
  found = await find('n05');
  check(found[0] === 'n05 is in n[01-02,04-06] (5 nodes, drawn from n01)' && found[1] === '1', 'overview: finding n05 selects the group of five, drawn from n01', found);
  found = await find('n07');
  check(found[0] === 'no node n07 in this run', 'overview: a host not in the run is said to be absent', found);
  await page.screenshot(path.join(artifacts, 'html-report-overview.png'));
  check(page.errors.length === 0, 'overview: still no console error', page.errors);
}

// A job of 300 alike nodes and a few odd ones (stacksage_html_run groups): one section per
// group, the odd nodes' own with their findings, how many nodes each stands for, the header's
// counts of the whole run, and a group of two drawn from its first node.
async function groupsTest(browser, work, artifacts) {
  const run = path.join(work, 'groups'), html = path.join(artifacts, 'html-report-groups.html');
  execFileSync(args.generator, ['groups', run, '300'], { stdio: 'inherit' });
  execFileSync(args.cli, ['report', run, '--html', html], { stdio: ['ignore', 'ignore', 'inherit'] });
  const page = await browser.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.waitFor("document.body && document.body.getAttribute('data-ready') === '1'");
  check(page.errors.length === 0, 'groups: the page loads with no console error', page.errors);
  const sections = await page.eval("Array.from(document.querySelectorAll('#grid .ngroup')).map(g => [g.getAttribute('data-hosts'), +g.getAttribute('data-size'), g.querySelector('.gsize').textContent, g.querySelectorAll('.gfinding').length, g.querySelectorAll('.cell').length])");
  const byHosts = Object.fromEntries(sections.map(s => [s[0], s]));
  check(sections.length === 4, 'groups: four sections for 300 nodes', sections);
  check(byHosts['n012'] && byHosts['n012'][1] === 1 && byHosts['n012'][2] === '1 node' && byHosts['n012'][3] >= 1, 'groups: the half-idle n012 has its own section with its warnings', byHosts['n012']);
  check(byHosts['n021'] && byHosts['n021'][1] === 1 && byHosts['n021'][3] >= 1, 'groups: the odd n021 has its own section with its warning', byHosts['n021']);
  check(byHosts['n[007,030]'] && byHosts['n[007,030]'][2] === '2 nodes' && byHosts['n[007,030]'][3] >= 1, 'groups: the over-subscribed n007 and n030 are one section of 2 nodes', byHosts['n[007,030]']);
  const rest = 'n[001-006,008-011,013-020,022-029,031-300]';
  check(byHosts[rest] && byHosts[rest][2] === '296 nodes' && byHosts[rest][3] === 0, 'groups: the 296 alike nodes are one section without findings', byHosts[rest]);
  check(sections.every(s => s[4] === 1), 'groups: one cell per section', sections.map(s => s[4]));
  check(sections.reduce((n, s) => n + s[1], 0) === 300, 'groups: the sections stand for the 300 nodes, each once');
  check(sections.slice(0, 3).every(s => s[1] <= 2) && sections[3][0] === rest, 'groups: the odd sections come first, the alike nodes last');
  const counts = await page.eval("Object.fromEntries(Array.from(document.querySelectorAll('#counts span')).map(s => [s.getAttribute('data-count'), +s.getAttribute('data-value')]))");
  check(counts.nodes === 300 && counts['node groups'] === 4 && counts.processes === 600 && counts.warnings >= 4, 'groups: the header counts the whole run', counts);
  // The group of two, drawn from n007: its over-subscribed PUs, its finding, its flows.
  const gi = await page.eval(`Array.from(document.querySelectorAll('#grid .ngroup')).findIndex(g => g.getAttribute('data-hosts') === 'n[007,030]')`);
  await page.click(`#grid .cell[data-group="${gi}"]`);
  const title = await page.eval("document.getElementById('node-title').textContent");
  check(title.startsWith('n007, drawn for the 2 nodes of n[007,030]: '), 'groups: the group of two is drawn from n007', title);
  const red = await page.eval("Array.from(document.querySelectorAll('#topo .pu')).filter(e => getComputedStyle(e).backgroundColor === 'rgb(224, 83, 63)').length");
  check(red === 8, 'groups: its 8 over-subscribed PUs are coloured so', red);
  const heads = await page.eval("Array.from(document.querySelectorAll('#findings .finding > div:first-child b')).map(b => b.textContent)");
  check(heads.length >= 1 && heads.every(h => h === 'WARNING n[007,030] (2 nodes): '), 'groups: the findings are the group\'s, naming its hosts and size', heads);
  const bars = await page.eval("document.querySelectorAll('#timeline rect.flow').length");
  check(bars === 16, 'groups: the timeline draws n007\'s 16 flows', bars);
  const rows = await page.eval("Array.from(document.querySelectorAll('#flows tbody tr')).map(r => r.children[0].textContent)");
  check(rows.length === 16 && rows.every(h => h === 'n007'), 'groups: the flow table lists n007\'s flows', rows.slice(0, 3));
  await page.screenshot(path.join(artifacts, 'html-report-groups.png'));
  check(page.errors.length === 0, 'groups: still no console error', page.errors);
}

async function bench(chromium) {
  const url = pathToFileURL(path.resolve(args.bench)).href, runs = +(args.runs || 5);
  const browser = await Browser.launch(chromium);
  const results = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      const t0 = Date.now();
      await page.goto(url);
      await page.waitFor("document.body && document.body.getAttribute('data-ready') === '1'", 60000);
      // Then the first frame with that DOM: style, layout and paint included.
      await page.eval('new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))');
      const wall = Date.now() - t0;
      const script = await page.eval('window.stacksageRenderMs');
      const pus = await page.eval("document.querySelectorAll('#topo .pu').length");
      // Switching to another group redraws its node's topology, findings, timeline and tables.
      const other = Math.min(7, (await page.eval("document.querySelectorAll('#grid .cell').length")) - 1);
      const switchMs = await page.eval(`(() => { const t = performance.now(); document.querySelector('#grid .cell[data-group="${other}"]').click(); return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t)))); })()`);
      results.push({ load_to_rendered_ms: wall, script_ms: Math.round(script), switch_group_ms: Math.round(switchMs), pus_drawn: pus, errors: page.errors.length });
      if (args.screenshot && i === runs - 1) await page.screenshot(args.screenshot);
      await page.send('Page.close').catch(() => {});
    }
  } finally { await browser.close(); }
  const walls = results.map(r => r.load_to_rendered_ms).sort((a, b) => a - b);
  const summary = { page: args.bench, bytes: fs.statSync(args.bench).size, runs: results, median_ms: walls[Math.floor(walls.length / 2)], max_ms: walls[walls.length - 1] };
  console.log(JSON.stringify(summary, null, 1));
  console.log(`render: median ${summary.median_ms} ms, max ${summary.max_ms} ms over ${results.length} loads, switching groups ${Math.max(...results.map(r => r.switch_group_ms))} ms at most (${results[0].pus_drawn} PUs drawn, ${results.reduce((n, r) => n + r.errors, 0)} console errors); page ${summary.bytes} bytes`);
  if (results.some(r => r.errors)) failures++;
}

const chromium = findChromium();
if (!chromium) {
  console.log('SKIP: chromium is not installed (scripts/install-deps.sh installs it; `make test` runs it)');
  process.exit(77);
}
try {
  if (args.bench) await bench(chromium); else await functionalTest(chromium);
} catch (e) {
  console.log('FAIL ' + (e.stack || e));
  failures++;
}
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
