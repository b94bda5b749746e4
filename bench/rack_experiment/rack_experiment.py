#!/usr/bin/env python3
"""R-Storm's experiment on an emulated two-rack cluster, resource-aware against round-robin.

Builds, on this one machine, a cluster of network namespaces (one per node, a bridge per rack,
one shaped link between the racks, a dual-homed master namespace for ZooKeeper and nimbus),
gives each node a CPU quota with a cgroup, starts a real rstorm-supervisor per node, then for
each paper topology, variant and scheduler submits the topology, lets it warm up, measures
sink throughput, CPU per node and the placement's network cost, kills it, and prints one
table of medians. Everything it creates is removed at the end, also on Ctrl-C or SIGTERM.

Run as root from the repository:  bench/rack_experiment/rack_experiment.py --build-dir build
See bench/rack_experiment/README.md for what is measured and how.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 4
ZOOKEEPER_PORT = 2181
NIMBUS_PORT = 6627
SLOT_BASE = 6700
QUEUE_PACKETS = 100
SCHEDULERS = ("round-robin", "resource-aware")
SHORT = {"round-robin": "rr", "resource-aware": "ra"}

# Daemon timeouts short enough for a ten-minute run, as in tests/cluster.
FAST_CONFIG = [
    "nimbus.supervisor.timeout.secs=20", "nimbus.task.timeout.secs=20",
    "nimbus.monitor.freq.secs=1", "nimbus.task.launch.secs=60",
    "supervisor.worker.timeout.secs=20", "supervisor.heartbeat.frequency.secs=1",
    "supervisor.monitor.frequency.secs=1", "supervisor.worker.shutdown.sleep.secs=1",
    "storm.zookeeper.session.timeout=20000", "storm.zookeeper.retry.interval=200",
    "storm.zookeeper.retry.intervalceiling.millis=1000",
]


class Refused(Exception):
    """A precondition this machine does not meet; the message says which."""


def log(msg):
    print(f"[rack-experiment {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(args, check=True, capture=True, timeout=120, netns=None):
    if netns:
        args = ["ip", "netns", "exec", netns] + list(args)
    r = subprocess.run(args, stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.STDOUT if capture else None, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({r.returncode}): {r.stdout}")
    return r


# --------------------------------------------------------------------------- cgroups

class Cgroups:
    """One cgroup per node (CPU quota) plus an unlimited one for the master, under a parent
    named after the run. Works with cgroup v2 (cpu.max, cpu.stat) and v1 (cpu.cfs_quota_us,
    cpuacct.usage)."""

    def __init__(self, name):
        self.name = name
        self.version, self.roots = self.detect()
        self.created = []  # directories, parents first

    @staticmethod
    def detect():
        mounts = {}
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype, opts = line.split()[:4]
                if fstype == "cgroup2":
                    mounts.setdefault("v2", mnt)
                elif fstype == "cgroup":
                    for o in opts.split(","):
                        if o in ("cpu", "cpuacct"):
                            mounts[o] = mnt
        v2 = mounts.get("v2")
        if v2 and os.path.exists(os.path.join(v2, "cgroup.controllers")):
            with open(os.path.join(v2, "cgroup.controllers")) as f:
                if "cpu" in f.read().split():
                    return 2, {"v2": v2}
        if "cpu" in mounts and "cpuacct" in mounts:
            return 1, {"cpu": mounts["cpu"], "cpuacct": mounts["cpuacct"]}
        raise Refused("no cgroup with a CPU controller: need cgroup v2 with 'cpu' in "
                      "cgroup.controllers, or cgroup v1 'cpu' and 'cpuacct' hierarchies mounted")

    def dirs(self, group):
        if self.version == 2:
            return [os.path.join(self.roots["v2"], self.name, group)]
        return [os.path.join(self.roots[c], self.name, group) for c in ("cpu", "cpuacct")]

    def create(self, groups, quotas):
        """groups: names; quotas: name -> cores (None: no limit)."""
        if self.version == 2:
            parent = os.path.join(self.roots["v2"], self.name)
            os.mkdir(parent)
            self.created.append(parent)
            try:
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write("+cpu")
            except OSError as e:
                raise Refused(f"cannot enable the cpu controller under {parent}: {e}")
        else:
            for c in ("cpu", "cpuacct"):
                parent = os.path.join(self.roots[c], self.name)
                os.mkdir(parent)
                self.created.append(parent)
        for g in groups:
            for d in self.dirs(g):
                os.mkdir(d)
                self.created.append(d)
            q = quotas.get(g)
            if q is not None:
                period = 100000
                quota = max(1000, int(q * period))
                if self.version == 2:
                    with open(os.path.join(self.dirs(g)[0], "cpu.max"), "w") as f:
                        f.write(f"{quota} {period}")
                else:
                    d = self.dirs(g)[0]
                    with open(os.path.join(d, "cpu.cfs_period_us"), "w") as f:
                        f.write(str(period))
                    with open(os.path.join(d, "cpu.cfs_quota_us"), "w") as f:
                        f.write(str(quota))

    def join_self(self, group):
        """Moves the calling process into `group` (used between fork and exec)."""
        for d in self.dirs(group):
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    def usage_seconds(self, group):
        if self.version == 2:
            with open(os.path.join(self.dirs(group)[0], "cpu.stat")) as f:
                for line in f:
                    k, v = line.split()
                    if k == "usage_usec":
                        return int(v) / 1e6
            return 0.0
        with open(os.path.join(self.dirs(group)[1], "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def throttled_seconds(self, group):
        stat = os.path.join(self.dirs(group)[0], "cpu.stat")
        try:
            with open(stat) as f:
                for line in f:
                    k, v = line.split()
                    if k == "throttled_usec":
                        return int(v) / 1e6
                    if k == "throttled_time":
                        return int(v) / 1e9
        except OSError:
            pass
        return 0.0

    def pids(self, group):
        out = set()
        for d in self.dirs(group):
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    out.update(int(x) for x in f.read().split())
            except OSError:
                pass
        return out

    def all_pids(self):
        out = set()
        for d in self.created:
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    out.update(int(x) for x in f.read().split())
            except OSError:
                pass
        return out

    def remove(self):
        for d in reversed(self.created):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)  # a killed process is still leaving
        self.created = []


# --------------------------------------------------------------------------- network

class Network:
    """Namespaces: <p>-sw (the two rack bridges and the inter-rack link), <p>-m (master,
    one leg on each rack bridge, so control traffic never crosses the racks' link) and
    <p>-n<i> per node. Node i of rack r is 10.77.r.k/16; the master is 10.77.0.r for rack r."""

    def __init__(self, prefix, racks, per_rack, node_rate, inter_rack_rate):
        self.prefix, self.racks, self.per_rack = prefix, racks, per_rack
        self.node_rate, self.inter_rack_rate = node_rate, inter_rack_rate
        self.namespaces = []
        self.sw, self.master = f"{prefix}-sw", f"{prefix}-m"

    def node_ns(self, i):
        return f"{self.prefix}-n{i}"

    def node_ip(self, i):
        rack, k = divmod(i - 1, self.per_rack)
        return f"10.77.{rack + 1}.{k + 1}"

    def rack_of(self, i):
        return (i - 1) // self.per_rack + 1

    def master_ip(self, rack):
        return f"10.77.0.{rack}"

    def add_ns(self, name):
        run(["ip", "netns", "add", name])
        self.namespaces.append(name)
        run(["ip", "link", "set", "lo", "up"], netns=name)

    def shape(self, ns, dev, rate):
        run(["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"], netns=ns)
        run(["tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
             "rate", rate, "ceil", rate], netns=ns)
        # A switch-like shallow buffer instead of the veth's 1000 packets (about 0.1 s at
        # 10 Mbit/s), so that a saturated link queues, drops and TCP backs off, as in a rack.
        run(["tc", "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "pfifo",
             "limit", str(QUEUE_PACKETS)], netns=ns)

    def veth_into(self, sw_end, other_end, other_ns, new_name):
        run(["ip", "link", "add", sw_end, "type", "veth", "peer", "name", other_end], netns=self.sw)
        run(["ip", "link", "set", other_end, "netns", other_ns], netns=self.sw)
        run(["ip", "link", "set", other_end, "name", new_name], netns=other_ns)

    def create(self):
        self.add_ns(self.sw)
        for r in range(1, self.racks + 1):
            run(["ip", "link", "add", f"br{r}", "type", "bridge"], netns=self.sw)
            run(["ip", "link", "set", f"br{r}", "up"], netns=self.sw)
        # The inter-rack link: rack r's uplink x<r>a..x<r>b to rack r+1, shaped both ways.
        for r in range(1, self.racks):
            a, b = f"x{r}a", f"x{r}b"
            run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], netns=self.sw)
            run(["ip", "link", "set", a, "master", f"br{r}"], netns=self.sw)
            run(["ip", "link", "set", b, "master", f"br{r + 1}"], netns=self.sw)
            for dev in (a, b):
                self.shape(self.sw, dev, self.inter_rack_rate)
                run(["ip", "link", "set", dev, "up"], netns=self.sw)
        self.add_ns(self.master)
        for key in ("all", "default"):
            run(["sysctl", "-q", "-w", f"net.ipv4.conf.{key}.arp_ignore=1"], netns=self.master)
            run(["sysctl", "-q", "-w", f"net.ipv4.conf.{key}.arp_announce=2"], netns=self.master)
            run(["sysctl", "-q", "-w", f"net.ipv4.conf.{key}.rp_filter=0"], netns=self.master)
        for r in range(1, self.racks + 1):
            dev = f"eth{r}"
            self.veth_into(f"m{r}", f"mt{r}", self.master, dev)
            run(["ip", "link", "set", f"m{r}", "master", f"br{r}"], netns=self.sw)
            run(["ip", "link", "set", f"m{r}", "up"], netns=self.sw)
            run(["sysctl", "-q", "-w", f"net.ipv4.conf.{dev}.arp_ignore=1"], netns=self.master)
            run(["ip", "addr", "add", f"{self.master_ip(r)}/32", "dev", dev], netns=self.master)
            run(["ip", "link", "set", dev, "up"], netns=self.master)
            run(["ip", "route", "add", f"10.77.{r}.0/24", "dev", dev, "src", self.master_ip(r)],
                netns=self.master)
        for i in range(1, self.racks * self.per_rack + 1):
            ns = self.node_ns(i)
            self.add_ns(ns)
            self.veth_into(f"n{i}", f"nt{i}", ns, "eth0")
            run(["ip", "link", "set", f"n{i}", "master", f"br{self.rack_of(i)}"], netns=self.sw)
            run(["ip", "link", "set", f"n{i}", "up"], netns=self.sw)
            run(["ip", "addr", "add", f"{self.node_ip(i)}/16", "dev", "eth0"], netns=ns)
            run(["ip", "link", "set", "eth0", "up"], netns=ns)
            self.shape(self.sw, f"n{i}", self.node_rate)  # to the node
            self.shape(ns, "eth0", self.node_rate)  # from the node

    def link_bytes(self):
        """(tx, rx) bytes of every switch-side device so far, read in one call. n<i> transmits
        to node i and receives from it; x<r>a transmits rack r to r+1, x<r>b the way back."""
        r = run(["sh", "-c", "for d in /sys/class/net/*; do echo ${d##*/} "
                             "$(cat $d/statistics/tx_bytes) $(cat $d/statistics/rx_bytes); done"],
                netns=self.sw, check=False)
        out = {}
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                out[parts[0]] = (int(parts[1]), int(parts[2]))
        return out

    def inter_rack_bytes(self, links):
        """Bytes sent over the inter-rack links, per direction: "1>2" is rack 1 to rack 2."""
        out = {}
        for r in range(1, self.racks):
            out[f"{r}>{r + 1}"] = links.get(f"x{r}a", (0, 0))[0]
            out[f"{r + 1}>{r}"] = links.get(f"x{r}b", (0, 0))[0]
        return out

    def node_bytes_out(self, links, nodes):
        return {i: links.get(f"n{i}", (0, 0))[1] for i in range(1, nodes + 1)}

    def remove(self):
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        self.namespaces = []


# --------------------------------------------------------------------------- processes

class Processes:
    """Every daemon this run starts, by pid; stop() stops supervisors first (they stop their
    workers), then nimbus and ZooKeeper, and finally SIGKILLs whatever is still in the run's
    cgroups (workers of a supervisor that did not stop in time)."""

    def __init__(self, cgroups):
        self.cgroups = cgroups
        self.procs = []  # (role, Popen)

    def start(self, role, args, netns, group, log_path):
        out = open(log_path, "ab")
        cg = self.cgroups

        def enter():
            cg.join_self(group)

        p = subprocess.Popen(["ip", "netns", "exec", netns] + args, stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             preexec_fn=enter, start_new_session=True)
        out.close()
        self.procs.append((role, p))
        return p

    @staticmethod
    def terminate(popens, grace):
        for p in popens:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + grace
        for p in popens:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop(self):
        order = ["supervisor", "nimbus", "zookeeper"]
        for role in order:
            self.terminate([p for r, p in self.procs if r == role], 25)
        for pid in self.cgroups.all_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.procs = []


# --------------------------------------------------------------------------- the experiment

class Experiment:
    def __init__(self, opts):
        self.o = opts
        self.bin = os.path.join(opts.build_dir, "bin")
        self.library = os.path.join(opts.build_dir, "lib", "libpaper_topologies.so")
        self.prefix = f"{opts.prefix}{os.getpid() % 10000}"
        self.nodes = opts.racks * opts.nodes_per_rack
        self.work = None
        self.cgroups = None
        self.net = None
        self.procs = None

    # ---- checks
    def preflight(self):
        if os.geteuid() != 0:
            raise Refused("must run as root: it creates network namespaces, tc qdiscs and cgroups")
        for b in ("rstorm", "rstorm-nimbus", "rstorm-supervisor", "rstorm-worker"):
            if not os.access(os.path.join(self.bin, b), os.X_OK):
                raise Refused(f"{os.path.join(self.bin, b)} is missing: build it first "
                              f"(cmake --build {self.o.build_dir} --target {b})")
        if not os.path.exists(self.library):
            raise Refused(f"{self.library} is missing: build the paper_topologies target")
        for tool in ("ip", "tc", "sysctl"):
            if shutil.which(tool) is None:
                raise Refused(f"'{tool}' is not installed (iproute2/procps)")
        if not os.path.exists(self.o.java) or not os.path.exists("/usr/share/java/zookeeper.jar"):
            raise Refused("ZooKeeper (Debian's zookeeper package and java) is not installed")
        probe = f"{self.prefix}-probe"
        r = run(["ip", "netns", "add", probe], check=False)
        if r.returncode != 0:
            raise Refused(f"network namespaces are not available: ip netns add: {r.stdout.strip()}")
        try:
            steps = [(["ip", "link", "add", "pbr", "type", "bridge"], "bridges"),
                     (["ip", "link", "add", "pva", "type", "veth", "peer", "name", "pvb"], "veth pairs"),
                     (["tc", "qdisc", "add", "dev", "pva", "root", "handle", "1:", "htb"], "tc htb"),
                     (["tc", "class", "add", "dev", "pva", "parent", "1:", "classid", "1:10", "htb",
                       "rate", "1mbit"], "tc htb classes")]
            for cmd, what in steps:
                r = run(cmd, check=False, netns=probe)
                if r.returncode != 0:
                    raise Refused(f"{what} are not available in this kernel: {' '.join(cmd)}: "
                                  f"{r.stdout.strip()}")
        finally:
            run(["ip", "netns", "del", probe], check=False)
        Cgroups.detect()
        leftovers = [l.split()[0] for l in run(["ip", "netns", "list"]).stdout.splitlines()
                     if l.startswith(self.o.prefix)]
        if leftovers:
            log(f"note: namespaces of an earlier run exist ({', '.join(leftovers[:4])}...); "
                f"'{sys.argv[0]} --cleanup' removes them")

    # ---- setup
    def setup(self):
        o = self.o
        self.work = tempfile.mkdtemp(prefix=f"rstorm-rack-{self.prefix}-")
        os.makedirs(os.path.join(self.work, "counts"))
        log(f"work dir {self.work}")
        self.cgroups = Cgroups(f"{self.prefix}")
        groups = ["master"] + [f"node-{i}" for i in range(1, self.nodes + 1)]
        quotas = {f"node-{i}": o.node_cpu_quota for i in range(1, self.nodes + 1)}
        self.cgroups.create(groups, quotas)
        self.procs = Processes(self.cgroups)
        self.net = Network(self.prefix, o.racks, o.nodes_per_rack, o.node_rate, o.inter_rack_rate)
        self.net.create()
        log(f"network: {o.racks} racks x {o.nodes_per_rack} nodes, node links {o.node_rate}, "
            f"inter-rack link {o.inter_rack_rate} each way; cgroup v{self.cgroups.version}, "
            f"{o.node_cpu_quota:.3f} core per node for {o.node_cpu} CPU points")
        self.cluster_yaml = os.path.join(self.work, "emulated-cluster.yaml")
        self.write_cluster_description(self.cluster_yaml)
        self.start_master()
        self.start_supervisors()

    def write_cluster_description(self, path):
        """The emulated cluster as `rstorm schedule` reads it: the same ids, hosts, racks and
        capacities the supervisors register, for the dry-run prediction of every placement."""
        o = self.o
        slots = ", ".join(str(SLOT_BASE + k) for k in range(o.slots))
        lines = [f"defaults:\n  memory_mb: {o.node_memory:g}\n  cpu: {o.node_cpu:g}\n"
                 f"  slots: [{slots}]\nracks:"]
        for r in range(1, o.racks + 1):
            lines.append(f"  - name: rack-{r}\n    nodes:")
            for i in range(1, self.nodes + 1):
                if self.net.rack_of(i) == r:
                    lines.append(f"      - {{id: node-{i}, host: {self.net.node_ip(i)}}}")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def predict(self, topology, variant, scheduler):
        """`rstorm schedule --json` of the same library and config on the description."""
        args = [os.path.join(self.bin, "rstorm"), "schedule", "--cluster", self.cluster_yaml,
                "--scheduler", scheduler, "--json", self.library]
        for kv in self.topology_config(topology, variant, scheduler):
            args += ["-c", kv]
        r = run(args, check=False)
        if r.returncode != 0:
            return {"error": r.stdout.strip()}
        t = json.loads(r.stdout)["topologies"][0]
        return t.get("network", {})

    def write_yaml(self, path, zk_host, nimbus_host):
        with open(path, "w") as f:
            f.write(f'storm.zookeeper.servers: ["{zk_host}"]\nstorm.zookeeper.port: {ZOOKEEPER_PORT}\n'
                    f'nimbus.seeds: ["{nimbus_host}"]\nnimbus.thrift.port: {NIMBUS_PORT}\n')

    def daemon_args(self, config, local_dir):
        args = ["--config", config, "-c", f"storm.local.dir={local_dir}"]
        for kv in FAST_CONFIG:
            args += ["-c", kv]
        return args

    def start_master(self):
        d = os.path.join(self.work, "master")
        os.makedirs(os.path.join(d, "zk-data"))
        with open(os.path.join(d, "zoo.cfg"), "w") as f:
            f.write(f"tickTime=2000\ndataDir={d}/zk-data\nclientPort={ZOOKEEPER_PORT}\n"
                    "clientPortAddress=0.0.0.0\nadmin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok,srvr\nmaxSessionTimeout=60000\n")
        self.procs.start("zookeeper", [self.o.java, "-Xms16m", "-Xmx128m", "-XX:+UseSerialGC",
                                       "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
                                       "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
                                       "org.apache.zookeeper.server.ZooKeeperServerMain",
                                       f"{d}/zoo.cfg"],
                         self.net.master, "master", os.path.join(d, "zookeeper.log"))
        def answers_ruok():
            # A server still starting may take the connection and say nothing:
            # each probe waits a bounded time for the answer, then tries again.
            try:
                return run(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{ZOOKEEPER_PORT} || exit 1; "
                                          "printf ruok >&3; read -r -t 2 a <&3; printf %s \"$a\""],
                           check=False, timeout=10, netns=self.net.master).stdout.strip() == "imok"
            except subprocess.TimeoutExpired:
                return False
        self.poll(answers_ruok, 60, "ZooKeeper answers ruok", os.path.join(d, "zookeeper.log"))
        self.client_yaml = os.path.join(d, "client.yaml")
        self.write_yaml(self.client_yaml, "127.0.0.1", "127.0.0.1")
        args = [os.path.join(self.bin, "rstorm-nimbus")] + self.daemon_args(
            self.client_yaml, os.path.join(d, "nimbus-local")) + ["-c", "nimbus.thrift.host=0.0.0.0"]
        self.procs.start("nimbus", args, self.net.master, "master", os.path.join(d, "nimbus.log"))
        self.poll(lambda: self.cli(["list", "--json"], check=False).returncode == 0, 60,
                  "nimbus answers", os.path.join(d, "nimbus.log"))

    def start_supervisors(self):
        o = self.o
        slots = ",".join(str(SLOT_BASE + k) for k in range(o.slots))
        for r in range(1, o.racks + 1):
            self.write_yaml(os.path.join(self.work, f"rack-{r}.yaml"), self.net.master_ip(r),
                            self.net.master_ip(r))
        for i in range(1, self.nodes + 1):
            d = os.path.join(self.work, f"node-{i}")
            os.makedirs(d)
            r = self.net.rack_of(i)
            args = [os.path.join(self.bin, "rstorm-supervisor")] + self.daemon_args(
                os.path.join(self.work, f"rack-{r}.yaml"), d) + [
                "-c", f"supervisor.id=node-{i}", "-c", f"supervisor.rack=rack-{r}",
                "-c", f"storm.local.hostname={self.net.node_ip(i)}",
                "-c", f"supervisor.slots.ports=[{slots}]",
                "-c", f"supervisor.memory.capacity.mb={o.node_memory}",
                "-c", f"supervisor.cpu.capacity={o.node_cpu}"]
            self.procs.start("supervisor", args, self.net.node_ns(i), f"node-{i}",
                             os.path.join(d, "supervisor.log"))

        def registered():
            r = self.cli(["cluster", "--json"], check=False)
            if r.returncode != 0:
                return False
            return len(self.supervisors_of(json.loads(r.stdout))) == self.nodes
        self.poll(registered, 120, f"all {self.nodes} supervisors register",
                  os.path.join(self.work, "node-1", "supervisor.log"))
        info = json.loads(self.cli(["cluster", "--json"]).stdout)
        self.registered = self.supervisors_of(info)
        log(f"{len(self.registered)} supervisors registered: " + ", ".join(
            f"{s.get('id')}@{s.get('host')}/{s.get('rack')}" for s in self.registered[:3]) + ", ...")

    @staticmethod
    def supervisors_of(cluster_json):
        for key in ("supervisors", "nodes"):
            if isinstance(cluster_json.get(key), list):
                return cluster_json[key]
        return []

    def cli(self, args, check=True, timeout=180):
        return run([os.path.join(self.bin, "rstorm")] + args + ["--config", self.client_yaml],
                   check=check, netns=self.net.master, timeout=timeout)

    def poll(self, ready, timeout, what, log_path=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if ready():
                return
            for role, p in self.procs.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{role} (pid {p.pid}) exited with {p.returncode} while "
                                       f"waiting until {what}{self.tail(log_path)}")
            time.sleep(0.5)
        raise RuntimeError(f"timed out after {timeout} s waiting until {what}{self.tail(log_path)}")

    @staticmethod
    def tail(path):
        if not path or not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f"; {path} ends with:\n" + "".join(f.readlines()[-15:])

    # ---- one measurement
    def sink_total(self, name, sinks):
        total, failed, emitted = 0, 0, 0
        counts = os.path.join(self.work, "counts")
        for fn in os.listdir(counts):
            if not fn.startswith(name + ".") or not fn.endswith(".json"):
                continue
            component = fn[len(name) + 1:].rsplit(".", 2)[0]
            try:
                with open(os.path.join(counts, fn)) as f:
                    c = json.load(f)
            except (OSError, ValueError):
                continue
            if "received" in c and component in sinks:
                total += c["received"]
            if "emitted" in c:
                emitted += c["emitted"]
                failed += c.get("failed", 0)
        return total, emitted, failed

    def topology_config(self, topology, variant, scheduler):
        o = self.o
        core_per_point = o.node_cpu_quota / o.node_cpu
        kv = [f"paper.topology={topology}", f"paper.variant={variant}",
              f"topology.scheduler.strategy={scheduler}", f"topology.workers={o.rr_workers}",
              f"paper.counter.dir={os.path.join(self.work, 'counts')}",
              f"paper.cpu.core.per.point={core_per_point}", f"paper.cpu.load={o.cpu_load}",
              f"paper.acking={'true' if o.acking else 'false'}",
              "topology.message.timeout.secs=30"]
        if o.max_spout_pending > 0:
            kv.append(f"topology.max.spout.pending={o.max_spout_pending}")
        if variant == "network":
            kv.append(f"paper.payload.bytes={o.payload_bytes}")
        else:
            kv.append(f"paper.spout.rate={o.cpu_spout_rate}")
        return kv

    def measure(self, topology, variant, scheduler, repeat):
        o = self.o
        name = f"{topology}-{variant}-{SHORT[scheduler]}-{repeat}"
        args = ["submit", self.library, "--name", name, "--wait", "--wait-timeout", "120"]
        for kv in self.topology_config(topology, variant, scheduler):
            args += ["-c", kv]
        log(f"{name}: submit")
        r = self.cli(args, check=False, timeout=240)
        if r.returncode != 0:
            return {"name": name, "error": f"submit failed: {r.stdout.strip()}"}
        try:
            placement = json.loads(self.cli(["describe", name, "--json"]).stdout)
            sinks = self.sinks_of(topology)
            nodes_used = sorted({e["node"] for e in placement["executors"]})
            workers = sorted({(e["node"], e["port"]) for e in placement["executors"]})
            time.sleep(o.warmup)
            samples = [self.sample(name, sinks)]
            for _ in range(o.windows):
                time.sleep(o.window)
                samples.append(self.sample(name, sinks))
            placement_after = json.loads(self.cli(["describe", name, "--json"]).stdout)
            out = self.summarise(name, topology, variant, scheduler, placement, placement_after,
                                 nodes_used, workers, samples)
            out["predicted_network"] = self.predict(topology, variant, scheduler)
            return out
        finally:
            log(f"{name}: kill")
            self.cli(["kill", name, "--wait", "1"], check=False, timeout=240)
            self.wait_workers_gone(name)

    def sample(self, name, sinks):
        received, emitted, failed = self.sink_total(name, sinks)
        links = self.net.link_bytes()
        cpu = {i: self.cgroups.usage_seconds(f"node-{i}") for i in range(1, self.nodes + 1)}
        throttled = {i: self.cgroups.throttled_seconds(f"node-{i}") for i in range(1, self.nodes + 1)}
        return {"t": time.time(), "received": received, "emitted": emitted, "failed": failed,
                "cpu": cpu, "throttled": throttled, "inter_rack_bytes": self.net.inter_rack_bytes(links),
                "node_bytes_out": self.net.node_bytes_out(links, self.nodes)}

    def sinks_of(self, topology):
        sinks = {"linear": ["b3"], "diamond": ["sink"], "star": ["sink1", "sink2"],
                 "page-load": ["sink"], "processing": ["output1", "output2"]}
        return set(sinks[topology])

    def summarise(self, name, topology, variant, scheduler, placement, placement_after, nodes_used,
                  workers, samples):
        o = self.o
        rates, utils, util_all = [], [], []
        for a, b in zip(samples, samples[1:]):
            dt = b["t"] - a["t"]
            rates.append((b["received"] - a["received"]) / dt)
            used = sum(b["cpu"][n] - a["cpu"][n] for n in range(1, self.nodes + 1))
            used_on = sum(b["cpu"][int(n.split("-")[1])] - a["cpu"][int(n.split("-")[1])]
                          for n in nodes_used)
            utils.append(used_on / (dt * o.node_cpu_quota * len(nodes_used)))
            util_all.append(used / (dt * o.node_cpu_quota * self.nodes))
        first, last = samples[0], samples[-1]
        span = last["t"] - first["t"]
        per_node = {f"node-{n}": round((last["cpu"][n] - first["cpu"][n]) / span / o.node_cpu_quota, 3)
                    for n in range(1, self.nodes + 1)}
        throttled = {f"node-{n}": round((last["throttled"][n] - first["throttled"][n]) / span, 3)
                     for n in range(1, self.nodes + 1)}
        net = placement["network"]
        weighted = net["same_node"] + 2 * net["same_rack"] + 3 * net["cross_rack"]
        out = {
            "name": name, "topology": topology, "variant": variant, "scheduler": scheduler,
            "throughput": statistics.median(rates), "window_throughputs": [round(x, 1) for x in rates],
            "cpu_utilisation": statistics.median(utils),
            "cpu_utilisation_all_nodes": statistics.median(util_all),
            "node_cpu_utilisation": per_node, "node_throttled_fraction": throttled,
            "nodes_used": nodes_used, "workers": len(workers), "network": net,
            "network_cost_weighted": weighted,
            "inter_rack_mbit_s": round(sum(last["inter_rack_bytes"].values()) * 8 / span / 1e6
                                       - sum(first["inter_rack_bytes"].values()) * 8 / span / 1e6, 3),
            "inter_rack_mbit_s_by_direction": {
                k: round((last["inter_rack_bytes"][k] - first["inter_rack_bytes"][k]) * 8 / span / 1e6, 3)
                for k in last["inter_rack_bytes"]},
            "node_link_out_mbit_s": {
                f"node-{n}": round((last["node_bytes_out"][n] - first["node_bytes_out"][n]) * 8 / span / 1e6, 3)
                for n in range(1, self.nodes + 1)},
            "spout_emitted": last["emitted"], "spout_failed": last["failed"],
            "sink_received": last["received"],
            "placement_stable": placement["assignment_version"] == placement_after["assignment_version"],
            "warnings": placement.get("warnings", []),
        }
        log(f"{name}: {out['throughput']:.1f} tuples/s at the sinks, CPU {out['cpu_utilisation']:.0%} of "
            f"{len(nodes_used)} nodes used, {net['cross_rack']} cross-rack pairs, inter-rack "
            f"{out['inter_rack_mbit_s']} Mbit/s, {len(workers)} workers")
        return out

    def wait_workers_gone(self, name):
        # Each node's cgroup holds its supervisor and its workers: wait for the supervisor alone.
        deadline = time.time() + 60
        supervisor_pids = {p.pid for r, p in self.procs.procs if r == "supervisor"}
        while time.time() < deadline:
            extra = [pid for i in range(1, self.nodes + 1)
                     for pid in self.cgroups.pids(f"node-{i}") if pid not in supervisor_pids]
            if not extra:
                return
            time.sleep(0.5)
        log(f"{name}: workers still running 60 s after kill: {extra[:8]}")

    # ---- the whole run
    def run_all(self):
        o = self.o
        runs = []
        for topology in o.topologies:
            for variant in o.variants:
                for repeat in range(1, o.repeats + 1):
                    for scheduler in SCHEDULERS:
                        runs.append(self.measure(topology, variant, scheduler, repeat))
        return runs

    def teardown(self):
        if self.procs:
            log("stopping supervisors, nimbus and ZooKeeper")
            self.procs.stop()
        if self.net:
            self.net.remove()
        if self.cgroups:
            self.cgroups.remove()
        if self.work and not self.o.keep_work_dir:
            shutil.rmtree(self.work, ignore_errors=True)
        elif self.work:
            log(f"logs kept in {self.work}")


# --------------------------------------------------------------------------- report

def median_of(runs, key):
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else None


def table(runs, opts):
    rows = []
    for topology in opts.topologies:
        for variant in opts.variants:
            by = {s: [r for r in runs if r.get("topology") == topology and r.get("variant") == variant
                      and r.get("scheduler") == s and "error" not in r] for s in SCHEDULERS}
            rr, ra = by["round-robin"], by["resource-aware"]
            row = {"topology": topology, "variant": variant, "repeats": min(len(rr), len(ra))}
            for label, group in (("rr", rr), ("ra", ra)):
                row[f"{label}_throughput"] = median_of(group, "throughput")
                row[f"{label}_cpu_utilisation"] = median_of(group, "cpu_utilisation")
                row[f"{label}_cross_rack_pairs"] = median_of(
                    [{"x": g["network"]["cross_rack"]} for g in group], "x")
                row[f"{label}_nodes"] = median_of([{"x": len(g["nodes_used"])} for g in group], "x")
                row[f"{label}_inter_rack_mbit_s"] = median_of(group, "inter_rack_mbit_s")
            row["throughput_ratio"] = (row["ra_throughput"] / row["rr_throughput"]
                                       if row["rr_throughput"] and row["ra_throughput"] is not None else None)
            row["cpu_utilisation_ratio"] = (row["ra_cpu_utilisation"] / row["rr_cpu_utilisation"]
                                            if row["rr_cpu_utilisation"] and row["ra_cpu_utilisation"] is not None
                                            else None)
            metric = row["throughput_ratio"] if variant == "network" else row["cpu_utilisation_ratio"]
            row["goal"] = "throughput >= 1.3x" if variant == "network" else "CPU utilisation >= 1.3x"
            row["meets_goal"] = metric is not None and metric >= 1.3
            rows.append(row)
    return rows


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows, opts):
    head = ("topology", "variant", "RR tuples/s", "RA tuples/s", "ratio", "RR CPU", "RA CPU",
            "CPU ratio", "RR x-rack", "RA x-rack", "RR nodes", "RA nodes", "goal met")
    lines = [head]
    for r in rows:
        lines.append((r["topology"], r["variant"], fmt(r["rr_throughput"], ".0f"),
                      fmt(r["ra_throughput"], ".0f"), fmt(r["throughput_ratio"], ".2f") + "x",
                      fmt(r["rr_cpu_utilisation"] and 100 * r["rr_cpu_utilisation"], ".0f") + "%",
                      fmt(r["ra_cpu_utilisation"] and 100 * r["ra_cpu_utilisation"], ".0f") + "%",
                      fmt(r["cpu_utilisation_ratio"], ".2f") + "x",
                      fmt(r["rr_cross_rack_pairs"], ".0f"), fmt(r["ra_cross_rack_pairs"], ".0f"),
                      fmt(r["rr_nodes"], ".0f"), fmt(r["ra_nodes"], ".0f"),
                      ("yes" if r["meets_goal"] else "NO") + f" ({r['goal']})"))
    widths = [max(len(str(l[c])) for l in lines) for c in range(len(head))]
    for k, l in enumerate(lines):
        print("  ".join(str(v).rjust(widths[c]) if c >= 2 and c < len(head) - 1 else str(v).ljust(widths[c])
                        for c, v in enumerate(l)))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def settings_of(opts):
    return {"racks": opts.racks, "nodes_per_rack": opts.nodes_per_rack,
            "node_link_rate": opts.node_rate, "inter_rack_rate": opts.inter_rack_rate,
            "node_cpu_quota_cores": opts.node_cpu_quota, "node_cpu_points": opts.node_cpu,
            "node_memory_mb": opts.node_memory, "slots": opts.slots,
            "round_robin_workers": opts.rr_workers, "payload_bytes": opts.payload_bytes,
            "cpu_spout_rate": opts.cpu_spout_rate, "cpu_load": opts.cpu_load,
            "acking": opts.acking, "max_spout_pending": opts.max_spout_pending,
            "warmup_s": opts.warmup, "windows": opts.windows, "window_s": opts.window,
            "repeats": opts.repeats, "machine_cores": os.cpu_count()}


# --------------------------------------------------------------------------- main

def cleanup_leftovers(prefix):
    """Removes namespaces and cgroups an interrupted run (SIGKILL) left, killing the processes
    still in those cgroups: they can only be that run's daemons and workers."""
    try:
        version, roots = Cgroups.detect()
    except Refused:
        version, roots = None, {}
    for root in roots.values():
        for entry in os.listdir(root):
            if entry.startswith(prefix):
                for dirpath, dirnames, filenames in os.walk(os.path.join(root, entry), topdown=False):
                    try:
                        with open(os.path.join(dirpath, "cgroup.procs")) as f:
                            for pid in f.read().split():
                                try:
                                    os.kill(int(pid), signal.SIGKILL)
                                except ProcessLookupError:
                                    pass
                    except OSError:
                        pass
                time.sleep(0.5)
                for dirpath, dirnames, filenames in os.walk(os.path.join(root, entry), topdown=False):
                    try:
                        os.rmdir(dirpath)
                        log(f"removed cgroup {dirpath}")
                    except OSError as e:
                        log(f"cannot remove {dirpath}: {e}")
    # The run's own clients (an `rstorm submit --wait` it had started) are in no
    # node's cgroup: find them by the work dir on their command line.
    marker = f"rstorm-rack-{prefix}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker in f.read():
                    os.kill(int(pid), signal.SIGKILL)
                    log(f"killed leftover process {pid}")
        except (OSError, ProcessLookupError):
            pass
    for line in run(["ip", "netns", "list"]).stdout.splitlines():
        ns = line.split()[0] if line.strip() else ""
        if ns.startswith(prefix):
            run(["ip", "netns", "del", ns], check=False)
            log(f"removed namespace {ns}")
    tmp = tempfile.gettempdir()
    for entry in os.listdir(tmp):
        if entry.startswith(f"rstorm-rack-{prefix}"):
            shutil.rmtree(os.path.join(tmp, entry), ignore_errors=True)
            log(f"removed work dir {os.path.join(tmp, entry)}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--build-dir", default=os.path.join(here, "..", "..", "build"))
    p.add_argument("--topologies", default="linear,diamond,star")
    p.add_argument("--variants", default="network,cpu")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=float, default=6, help="seconds after submit before measuring")
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--window", type=float, default=3, help="seconds per window")
    p.add_argument("--racks", type=int, default=2)
    p.add_argument("--nodes-per-rack", type=int, default=6)
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--node-cpu", type=float, default=400, help="CPU points per node (100 = one core)")
    p.add_argument("--node-cpu-quota", type=float, default=0.12,
                   help="share of a real core a node's cgroup may use (cpu.max / cfs quota)")
    p.add_argument("--node-memory", type=float, default=4096)
    p.add_argument("--node-rate", default="20mbit", help="each node's link to its rack (tc htb)")
    p.add_argument("--inter-rack-rate", default="10mbit",
                   help="the link between racks, each way (default: 12:1 oversubscribed uplink "
                        "for 6 nodes at 20mbit)")
    p.add_argument("--rr-workers", type=int, default=12, help="topology.workers for round-robin")
    p.add_argument("--payload-bytes", type=int, default=4096, help="network-bound tuple payload")
    p.add_argument("--cpu-spout-rate", type=float, default=40,
                   help="CPU-bound variant: tuples/s per spout executor")
    p.add_argument("--cpu-load", type=float, default=0.5,
                   help="CPU-bound variant: share of its points an executor uses at that rate")
    p.add_argument("--max-spout-pending", type=int, default=200)
    p.add_argument("--no-acking", dest="acking", action="store_false")
    p.add_argument("--smoke", action="store_true",
                   help="small and short: 2 racks x 2 nodes, linear network-bound, one repeat")
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of a table")
    p.add_argument("--out", help="also write the JSON result to this file")
    p.add_argument("--keep-work-dir", action="store_true")
    p.add_argument("--java", default="/usr/bin/java")
    p.add_argument("--prefix", default="rsx", help="name prefix of namespaces and cgroups")
    p.add_argument("--cleanup", action="store_true",
                   help="only remove what an interrupted run left (namespaces, cgroups, processes)")
    o = p.parse_args(argv)
    if o.smoke:
        o.nodes_per_rack, o.repeats, o.windows, o.window, o.warmup = 2, 1, 1, 4, 4
        if o.topologies == "linear,diamond,star":
            o.topologies = "linear"
        if o.variants == "network,cpu":
            o.variants = "network"
        o.rr_workers = min(o.rr_workers, o.racks * o.nodes_per_rack * o.slots)
    o.topologies = [t for t in o.topologies.split(",") if t]
    o.variants = [v for v in o.variants.split(",") if v]
    o.build_dir = os.path.abspath(o.build_dir)
    for v in o.variants:
        if v not in ("network", "cpu"):
            p.error(f"--variants: '{v}' is neither network nor cpu")
    for t in o.topologies:
        if t not in ("linear", "diamond", "star", "page-load", "processing"):
            p.error(f"--topologies: unknown topology '{t}'")
    return o


def main(argv):
    opts = parse_args(argv)
    if opts.cleanup:
        if os.geteuid() != 0:
            print("rack-experiment: --cleanup must run as root", file=sys.stderr)
            return EXIT_UNSUPPORTED
        cleanup_leftovers(opts.prefix)
        return EXIT_OK
    exp = Experiment(opts)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    started = time.time()
    try:
        exp.preflight()
        exp.setup()
        runs = exp.run_all()
    except Refused as e:
        print(f"rack-experiment: refused: {e}", file=sys.stderr)
        return EXIT_UNSUPPORTED
    except KeyboardInterrupt:
        print("rack-experiment: interrupted; tearing down", file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:  # noqa: BLE001 - report, then tear down
        print(f"rack-experiment: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let teardown finish
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        exp.teardown()
    rows = table(runs, opts)
    result = {"settings": settings_of(opts), "rows": rows, "runs": runs,
              "supervisors": exp.registered if hasattr(exp, "registered") else [],
              "duration_s": round(time.time() - started, 1)}
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump(result, f, indent=2)
    if opts.json:
        print(json.dumps(result, indent=2))
    else:
        s = result["settings"]
        print(f"R-Storm experiment: {s['racks']} racks x {s['nodes_per_rack']} nodes, node links "
              f"{s['node_link_rate']}, inter-rack {s['inter_rack_rate']} each way, "
              f"{s['node_cpu_quota_cores']} core per node ({s['node_cpu_points']:.0f} points), "
              f"medians of {s['repeats']} x {s['windows']} windows of {s['window_s']} s; "
              f"{result['duration_s']} s in all")
        print_table(rows, opts)
        for r in runs:
            if "error" in r:
                print(f"  {r['name']}: {r['error']}")
    failed = any("error" in r for r in runs)
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
