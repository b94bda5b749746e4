#!/usr/bin/env python3
"""Browser test of the rstorm UI pages.

Drives Debian's chromium through chromedriver's W3C WebDriver HTTP protocol
(standard library only) against a running rstorm-ui:

  tests/ui/browser_test.py --url http://127.0.0.1:8080 --topology wordcount \
      --screenshots /tmp/ui-shots [--timeout 90]

Steps: the cluster page, the topology page (tables, graph, placement map), a
bolt's component page, deactivate / activate from the topology page, and no
SEVERE browser console entries. Exits 0 when every step passed; otherwise
prints the failing step and what was seen, saves failure.png and exits 1.
"""

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'  # W3C web element key
POLL = 0.25


class StepFailed(Exception):
    pass


class WebDriverError(Exception):
    def __init__(self, status, error, message):
        super().__init__('%s: %s' % (error, message))
        self.status = status
        self.error = error


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Driver:
    """A minimal W3C WebDriver client."""

    def __init__(self, port, timeout):
        self.base = 'http://127.0.0.1:%d' % port
        self.timeout = timeout
        self.session = None

    def call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        if method == 'POST' and data is None:
            data = b'{}'
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json; charset=utf-8'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                answer = json.loads(r.read().decode() or '{}')
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors='replace')
            try:
                value = json.loads(text).get('value', {})
            except ValueError:
                value = {'error': 'http %d' % e.code, 'message': text[:500]}
            if not isinstance(value, dict):
                value = {'error': 'http %d' % e.code, 'message': str(value)}
            raise WebDriverError(e.code, value.get('error', ''), value.get('message', '').split('\n')[0])
        return answer.get('value')

    def s(self, method, path, body=None, timeout=60):
        return self.call(method, '/session/%s%s' % (self.session, path), body, timeout)

    def start(self, user_data_dir):
        args = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--disable-dev-shm-usage', '--window-size=1400,1000', '--user-data-dir=' + user_data_dir]
        caps = {'capabilities': {'alwaysMatch': {
            'browserName': 'chrome',
            'unhandledPromptBehavior': 'ignore',
            'goog:chromeOptions': {'binary': CHROMIUM, 'args': args},
            'goog:loggingPrefs': {'browser': 'ALL'},
        }}}
        value = self.call('POST', '/session', caps, timeout=120)
        self.session = value['sessionId']

    def quit(self):
        if self.session:
            try:
                self.call('DELETE', '/session/' + self.session, timeout=20)
            except Exception:
                pass
            self.session = None

    # ---- page helpers ----
    def go(self, url):
        self.s('POST', '/url', {'url': url}, timeout=120)

    def url(self):
        return self.s('GET', '/url')

    def js(self, script, *args):
        return self.s('POST', '/execute/sync', {'script': script, 'args': list(args)})

    def find(self, css):
        return [e[ELEMENT] for e in self.s('POST', '/elements', {'using': 'css selector', 'value': css})]

    def click(self, element_id):
        self.s('POST', '/element/%s/click' % element_id)

    def screenshot(self, path):
        png = base64.b64decode(self.s('GET', '/screenshot', timeout=60))
        with open(path, 'wb') as f:
            f.write(png)

    def alert_text(self):
        try:
            return self.s('GET', '/alert/text')
        except WebDriverError as e:
            if e.error == 'no such alert':
                return None
            raise

    def accept_alert(self):
        self.s('POST', '/alert/accept')

    def browser_log(self):
        """Console entries since the last call. Returns (entries, endpoint used)."""
        # chromedriver 156 answers POST /session/{id}/se/log; older ones the
        # legacy POST /session/{id}/log (GET .../log is an unknown command).
        tries = [('POST', '/se/log', {'type': 'browser'}), ('POST', '/log', {'type': 'browser'})]
        last = None
        for method, path, body in tries:
            try:
                value = self.s(method, path, body)
                if isinstance(value, list):
                    return value, '%s /session/{id}%s' % (method, path)
            except WebDriverError as e:
                last = e
        raise StepFailed('no chromedriver log endpoint answered: %s' % last)


def wait_for(what, check, timeout, describe=None):
    """Poll check() (returning a truthy result when done) until timeout seconds."""
    deadline = time.monotonic() + timeout
    seen = None
    while True:
        try:
            result = check()
            if result:
                return result
        except WebDriverError as e:
            if e.error in ('invalid session id', 'session not created'):
                raise
            seen = 'webdriver: %s' % e
        except OSError as e:  # chromedriver not listening yet
            seen = str(e)
        except StepFailed:
            raise
        if time.monotonic() >= deadline:
            if describe:
                try:
                    seen = describe()
                except Exception as e:  # describe is best effort
                    seen = 'could not describe the page: %s' % e
            raise StepFailed('timed out after %ds waiting for %s; seen: %s' % (timeout, what, seen))
        time.sleep(POLL)


# A snapshot of what the tests look at, for messages on failure.
PAGE_STATE = r"""
const q = (s) => document.querySelectorAll(s);
const t = (s) => { const e = document.querySelector(s); return e ? e.textContent.trim().slice(0, 300) : null; };
return {
  url: location.href,
  banner: (() => { const b = document.getElementById('error-banner'); return b && !b.hidden ? b.textContent.trim() : ''; })(),
  topologyRows: Array.from(q('#topologies .topology-row')).map((r) =>
    Array.from(r.cells).map((c) => c.textContent.trim()).join(' | ').slice(0, 120)),
  topologies: Array.from(q('#topologies .topology-row')).map((r) => [r.dataset.topology, r.dataset.key]),
  supervisors: q('#supervisors .supervisor').length,
  leader: q('#nimbuses .leader').length,
  status: t('#status'),
  spouts: q('#spouts .component-row').length,
  bolts: q('#bolts .component-row').length,
  graphNodes: q('svg#graph g.node').length,
  placementNodes: q('#placement .node').length,
  placementExecutors: q('#placement .executor').length,
  executorRows: q('#executors .executor-row').length,
};
"""


class DevCluster:
    """`rstorm dev-cluster` as a user starts it, with a topology submitted as the README says."""

    def __init__(self, bin_dir, library, name, timeout):
        import threading
        self.lines = []
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, 'rstorm'), 'dev-cluster', '--supervisors', '2', '--racks', '2',
             '--slots', '2', '-c', 'ui.sample.interval.secs=1'],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        reader = threading.Thread(target=self._read, daemon=True)
        reader.start()
        self.url = wait_for('rstorm dev-cluster to print the UI and the client config', self._started, timeout,
                            lambda: ''.join(self.lines[-20:]) + ' exit code %s' % self.proc.poll())
        config = [l.split(':', 1)[1].strip() for l in self.lines if l.startswith('client config:')][0]
        submit = subprocess.run([os.path.join(bin_dir, 'rstorm'), 'submit', library, '--name', name, '--wait',
                                 '--config', config], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout)
        if submit.returncode != 0:
            raise StepFailed('rstorm submit failed (exit %d): %s' % (submit.returncode, submit.stdout))
        print('dev cluster up, UI at %s, topology %r submitted' % (self.url, name))

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def _started(self):
        if self.proc.poll() is not None:
            raise StepFailed('rstorm dev-cluster exited: ' + ''.join(self.lines[-20:]))
        ui = [l.split()[1] for l in self.lines if l.strip().startswith('ui ')]
        return ui[0] if ui and any(l.startswith('client config:') for l in self.lines) else None

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # as Ctrl-C: it stops every daemon it started
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class LocalRun:
    """`rstorm local LIB --ui`: the same pages over a topology in one process; stopped by the UI's kill."""

    def __init__(self, bin_dir, library, timeout):
        import threading
        self.lines = []
        self.proc = subprocess.Popen([os.path.join(bin_dir, 'rstorm'), 'local', library, '--ui',
                                      '--report-interval', '600'],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.url = wait_for('rstorm local to print its UI address', self._started, timeout,
                            lambda: ''.join(self.lines[-20:]))
        print('rstorm local up, UI at %s' % self.url)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def _started(self):
        if self.proc.poll() is not None:
            raise StepFailed('rstorm local exited: ' + ''.join(self.lines[-20:]))
        ui = [l.split('UI at', 1)[1].strip() for l in self.lines if 'UI at' in l]
        return ui[0].rstrip('/') if ui else None

    def kill_through_ui(self, name, timeout):
        req = urllib.request.Request('%s/api/v1/topology/%s/kill/0' % (self.url, urllib.parse.quote(name)),
                                     data=b'', method='POST', headers={'X-Requested-By': 'browser-test'})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = json.loads(r.read())
        if body.get('status') != 'success':
            raise StepFailed('kill answered %r' % body)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise StepFailed('rstorm local still runs after the UI killed its topology')
        if code != 0:
            raise StepFailed('rstorm local exited %d after the kill: %s' % (code, ''.join(self.lines[-10:])))
        print('PASS 6 kill from the UI: rstorm local ended with exit code 0')

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--url', help='the UI, e.g. http://127.0.0.1:8080')
    ap.add_argument('--dev-cluster', metavar='BIN_DIR',
                    help='instead of --url: start `BIN_DIR/rstorm dev-cluster`, submit --topology-lib as '
                         '--topology, test its UI, and stop the cluster')
    ap.add_argument('--local', metavar='BIN_DIR',
                    help='instead of --url: run `BIN_DIR/rstorm local --topology-lib --ui`, test its UI '
                         '(--topology is the library\'s topology name), then kill it from the UI')
    ap.add_argument('--topology-lib', help='the topology library to submit with --dev-cluster or --local')
    ap.add_argument('--topology', required=True, help='name of a running topology')
    ap.add_argument('--screenshots', required=True, help='directory for the screenshots')
    ap.add_argument('--timeout', type=float, default=90, help='seconds each wait may take (default 90)')
    args = ap.parse_args()
    if sum(map(bool, (args.url, args.dev_cluster, args.local))) != 1 or \
            ((args.dev_cluster or args.local) and not args.topology_lib):
        ap.error('give --url, or --dev-cluster or --local with --topology-lib')
    cluster = None
    if args.dev_cluster or args.local:
        for binary in (CHROMIUM, CHROMEDRIVER):
            if not os.access(binary, os.X_OK):
                print('FAIL setup: %s is missing (apt-get install chromium chromium-driver)' % binary)
                return 1
        try:
            if args.local:
                cluster = LocalRun(args.local, args.topology_lib, args.timeout)
            else:
                cluster = DevCluster(args.dev_cluster, args.topology_lib, args.topology, args.timeout)
        except (StepFailed, OSError, subprocess.TimeoutExpired) as e:
            print('FAIL setup: %s' % e)
            return 1
        args.url = cluster.url
    try:
        code = run(args)
        if code == 0 and args.local:
            try:
                cluster.kill_through_ui(args.topology, args.timeout)
            except (StepFailed, OSError, ValueError) as e:
                print('FAIL 6 kill from the UI: %s' % e)
                return 1
        return code
    finally:
        if cluster:
            cluster.stop()


def run(args):
    base = args.url.rstrip('/')
    os.makedirs(args.screenshots, exist_ok=True)
    shot = lambda name: os.path.join(args.screenshots, name)
    timeout = args.timeout

    for binary in (CHROMIUM, CHROMEDRIVER):
        if not os.access(binary, os.X_OK):
            print('FAIL setup: %s is missing (apt-get install chromium chromium-driver)' % binary)
            return 1

    port = free_port()
    user_data = tempfile.mkdtemp(prefix='rstorm-ui-chrome-')
    driver_log = open(os.path.join(user_data, 'chromedriver.log'), 'w+')
    proc = subprocess.Popen([CHROMEDRIVER, '--port=%d' % port], stdout=driver_log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    d = Driver(port, timeout)
    step = 'setup'
    log_endpoint = None
    severe = []

    def state():
        return d.js(PAGE_STATE)

    def collect_log():
        nonlocal log_endpoint
        entries, log_endpoint = d.browser_log()
        for e in entries:
            if str(e.get('level', '')).upper() == 'SEVERE':
                severe.append(e)
        return entries

    try:
        # chromedriver up?
        wait_for('chromedriver to listen on port %d' % port,
                 lambda: proc.poll() is None and d.call('GET', '/status', timeout=5).get('ready'), 30,
                 lambda: 'exit code %s' % proc.poll())
        d.start(user_data)

        # ---- 1. cluster page ----
        step = '1 cluster page'
        d.go(base + '/')

        def cluster_ready():
            s = state()
            return (any(args.topology in names for names in s['topologies']) and s['supervisors'] >= 1
                    and s['leader'] >= 1) and s
        s = wait_for('topology %r in #topologies, a supervisor and a nimbus leader' % args.topology,
                     cluster_ready, timeout, state)
        d.screenshot(shot('cluster.png'))
        print('PASS 1 cluster page: %d supervisor(s), leader shown, topology %r listed'
              % (s['supervisors'], args.topology))

        # ---- 2. topology page ----
        step = '2 topology page'
        # The row's name link (rows carry data-topology=<name> and data-key=<id>).
        def click_topology():
            for row in d.find('#topologies .topology-row'):
                names = [d.s('GET', '/element/%s/attribute/%s' % (row, a)) for a in ('data-topology', 'data-key')]
                if args.topology in names:
                    links = d.s('POST', '/element/%s/elements' % row, {'using': 'css selector', 'value': 'a'})
                    if links:
                        d.click(links[0][ELEMENT])
                        return True
            return False
        wait_for('a link to topology %r' % args.topology, click_topology, timeout, state)
        wait_for('the topology page to open', lambda: '/topology.html' in d.url(), timeout, d.url)
        topology_url = d.url()

        def topology_ready():
            s = state()
            rows = s['spouts'] + s['bolts']
            return (s['status'] == 'ACTIVE' and s['spouts'] >= 1 and s['bolts'] >= 1
                    and s['graphNodes'] == rows and s['placementExecutors'] >= 1
                    and s['placementNodes'] >= 1) and s
        s = wait_for('#status ACTIVE, spout and bolt rows, one graph node per component, placement nodes and '
                     'executors', topology_ready, timeout, state)
        d.js('window.scrollTo(0, 0);')
        d.screenshot(shot('topology.png'))
        d.js("const g = document.getElementById('graph'); (g.closest('section') || g).scrollIntoView({block: 'start'}); window.scrollBy(0, -60);")
        d.screenshot(shot('graph.png'))
        d.js("const p = document.getElementById('placement'); (p.closest('section') || p).scrollIntoView({block: 'start'}); window.scrollBy(0, -60);")
        d.screenshot(shot('placement.png'))
        d.js('window.scrollTo(0, 0);')
        print('PASS 2 topology page: status ACTIVE, %d spout(s), %d bolt(s), %d graph nodes, '
              '%d placement node(s), %d executor chip(s)'
              % (s['spouts'], s['bolts'], s['graphNodes'], s['placementNodes'], s['placementExecutors']))

        # ---- 3. component page ----
        step = '3 component page'
        bolt = {}

        def click_bolt():
            rows = d.find('#bolts .component-row')
            for row in rows:
                links = d.s('POST', '/element/%s/elements' % row, {'using': 'css selector', 'value': 'a'})
                if links:
                    bolt['name'] = d.s('GET', '/element/%s/text' % links[0][ELEMENT])
                    d.click(links[0][ELEMENT])
                    return True
            return False
        wait_for('a bolt link in #bolts', click_bolt, timeout, state)
        wait_for('the component page to open', lambda: '/component.html' in d.url(), timeout, d.url)
        s = wait_for('#executors .executor-row', lambda: state()['executorRows'] >= 1 and state(), timeout, state)
        d.screenshot(shot('component.png'))
        print('PASS 3 component page of bolt %r: %d executor row(s)' % (bolt.get('name'), s['executorRows']))

        # ---- 4. deactivate / activate ----
        step = '4 deactivate/activate'
        d.go(topology_url)
        wait_for('#status ACTIVE and #deactivate enabled',
                 lambda: state()['status'] == 'ACTIVE' and d.js(
                     "const b = document.getElementById('deactivate'); return !!b && !b.disabled;"),
                 timeout, state)

        def press(button_id, want):
            deadline = time.monotonic() + timeout
            d.click(d.find('#' + button_id)[0])
            # A confirm() may come up: accept it.
            accepted = None
            end = time.monotonic() + 3
            while time.monotonic() < end:
                text = d.alert_text()
                if text is not None:
                    accepted = text
                    d.accept_alert()
                    break
                if d.js("return document.getElementById('action-message').textContent;"):
                    break
                time.sleep(POLL)
            wait_for('#status %s after %s' % (want, button_id),
                     lambda: state()['status'] == want, max(1, deadline - time.monotonic()), state)
            return accepted

        confirm = press('deactivate', 'INACTIVE')
        print('PASS 4a deactivate: #status INACTIVE%s'
              % (' (accepted confirm "%s")' % confirm if confirm else ''))
        wait_for('#activate enabled',
                 lambda: d.js("const b = document.getElementById('activate'); return !!b && !b.disabled;"),
                 timeout, state)
        confirm = press('activate', 'ACTIVE')
        print('PASS 4b activate: #status ACTIVE%s' % (' (accepted confirm "%s")' % confirm if confirm else ''))

        # ---- 5. browser console ----
        step = '5 browser console'
        entries = collect_log()
        if severe:
            for e in severe:
                print('  SEVERE %s' % e.get('message'))
            raise StepFailed('%d SEVERE console entr%s' % (len(severe), 'y' if len(severe) == 1 else 'ies'))
        print('PASS 5 browser console: no SEVERE entries (%d entries read with %s)'
              % (len(entries), log_endpoint))
        print('ALL PASSED; screenshots in %s' % args.screenshots)
        return 0
    except (StepFailed, WebDriverError, OSError, ValueError, KeyError) as e:
        print('FAIL %s: %s' % (step, e))
        try:
            if d.session:
                if d.alert_text() is not None:
                    d.accept_alert()
                d.screenshot(shot('failure.png'))
                print('  saved %s' % shot('failure.png'))
                try:
                    collect_log()
                    for entry in severe:
                        print('  SEVERE %s' % entry.get('message'))
                except Exception:
                    pass
        except Exception as e2:
            print('  (no failure screenshot: %s)' % e2)
        if not d.session:
            driver_log.seek(0)
            tail = driver_log.read()[-2000:]
            if tail:
                print('  chromedriver output:\n' + tail)
        return 1
    finally:
        d.quit()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # chromedriver's own process group
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        driver_log.close()
        shutil.rmtree(user_data, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
