#!/usr/bin/env python3
"""The independent kill scenario (docs/development.md, "The independent kill scenario").

An Apache Kafka 4.1 broker (KRaft, one node, loopback, jars from Maven Central cached outside the repo),
a Java producer (kafka-clients 4.1, idempotent, acks=all), mailstats in embedded mode as its own
process (`node --import tsx main.ts`), SIGKILLed at seeded random instants (while consuming, and once
within about a second of a restart) and started again; then every list's automation.stats answer
compared day by day with an independent model (check.py), and the dead-letter topic with the poison
messages sent. Shares no code with mailstats or its test harness.

    python3 scripts/independent-kill/run.py [--seed N] [--valid 300000 --dups 15000 --poison 1000]
                                            [--duration 240] [--kills 6] [--work DIR] [--keep]

Exits 1 on any record counted twice, lost or misdated, a poison message missing from the dead-letter
topic, or a producer failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import check  # noqa: E402
import scenario  # noqa: E402

KAFKA_VERSION = "4.1.1"
GROUP = "mailstats-ingest"
COMMIT_GUARD_S = 1.0
T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jars() -> Path:
    cache = Path(os.environ.get("MAILSTATS_CACHE_DIR", Path.home() / ".cache" / "mailstats"))
    base = cache / f"indep-kafka-{KAFKA_VERSION}"
    libs = base / "libs"
    if not (base / ".complete").exists():
        log(f"fetching Apache Kafka {KAFKA_VERSION} jars from Maven Central into {libs}")
        subprocess.run(["mvn", "-q", "-B", "-f", str(HERE / "pom.xml"), f"-Dkafka.version={KAFKA_VERSION}",
                        "dependency:copy-dependencies", f"-DoutputDirectory={libs}", "-DincludeScope=runtime"],
                       check=True)
        (base / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return libs


class Procs:
    """Every process this run starts, so that each is ended by its own id."""

    def __init__(self) -> None:
        self.all: list[subprocess.Popen] = []

    def start(self, cmd: list[str], **kw) -> subprocess.Popen:
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.all.append(p)
        return p

    @staticmethod
    def stop(p: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 20.0) -> None:
        if p.poll() is not None:
            return
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)

    def stop_all(self) -> None:
        for p in reversed(self.all):
            self.stop(p)
        left = [p.pid for p in self.all if p.poll() is None]
        if left:
            log(f"processes still running: {left}")


class Broker:
    def __init__(self, procs: Procs, workdir: Path, libs: Path, partitions: int) -> None:
        self.dir = workdir / "kafka"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port, self.cport = free_port(), free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.cp = f"{libs}/*"
        props = self.dir / "server.properties"
        # the settings of the distribution's config/server.properties, on loopback ports of our own
        props.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{self.cport}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.cport}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"log.dirs={self.dir / 'data'}",
            f"num.partitions={partitions}",
            "offsets.topic.replication.factor=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "",
        ]))
        (self.dir / "log4j2.properties").write_text("\n".join([
            "rootLogger.level=INFO",
            "rootLogger.appenderRef.f.ref=F",
            "appender.f.type=File",
            "appender.f.name=F",
            f"appender.f.fileName={self.dir / 'server.log'}",
            "appender.f.layout.type=PatternLayout",
            "appender.f.layout.pattern=[%d] %p %m (%c)%n",
            "",
        ]))
        self.props = props
        self.procs = procs

    def java(self, *args: str) -> list[str]:
        return ["java", "-Xms128m", "-Xmx768m", f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                "-cp", self.cp, *args]

    def start(self) -> None:
        cluster = subprocess.run(["java", "-cp", self.cp, "kafka.tools.StorageTool", "random-uuid"],
                                 capture_output=True, text=True, check=True).stdout.strip() or uuid.uuid4().hex
        subprocess.run(self.java("kafka.tools.StorageTool", "format", "-t", cluster, "-c", str(self.props)),
                       check=True, stdout=subprocess.DEVNULL)
        out = (self.dir / "stdout.log").open("w")
        self.proc = self.procs.start(self.java("kafka.Kafka", str(self.props)), stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited ({self.proc.returncode}); see {self.dir}/server.log")
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("broker did not listen within 120 s")
                time.sleep(0.3)
        log(f"Apache Kafka {KAFKA_VERSION} broker on {self.bootstrap} (pid {self.proc.pid})")

    def tool(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["java", "-cp", self.cp, str(HERE / "Admin.java"), args[0], self.bootstrap, *args[1:]],
                              check=True, **kw)


class Watcher:
    """Reads the group's committed offsets every 200 ms (Admin.java watch)."""

    def __init__(self, procs: Procs, broker: Broker, logfile: Path) -> None:
        self.commits: list[tuple[float, int]] = []
        self.lag: tuple[float, int, int, int] | None = None
        self.log = logfile.open("w")
        self.proc = procs.start(["java", "-cp", broker.cp, str(HERE / "Admin.java"), "watch", broker.bootstrap,
                                 GROUP, f"{scenario.EVENTS},{scenario.CATALOG}"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.log.write(line)
            self.log.flush()
            f = line.split()
            if f and f[0] == "C":
                self.commits.append((int(f[1]) / 1000, int(f[2])))
            elif f and f[0] == "L":
                self.lag = (int(f[1]) / 1000, int(f[2]), int(f[3]), int(f[4]))

    def first_commit_after(self, t: float) -> float | None:
        return next((c for c, _ in self.commits if c > t), None)


class Service:
    def __init__(self, procs: Procs, workdir: Path, bootstrap: str, partitions: int) -> None:
        self.procs = procs
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "CLICKHOUSE_"))}
        self.env.update({
            "KAFKA_BROKERS": bootstrap, "PORT": str(self.port), "HOST": "127.0.0.1",
            "DATA_DIR": str(workdir / "data"), "KAFKA_PARTITIONS": str(partitions), "SEED_DEMO": "false",
            "LOG_FORMAT": "json", "LOG_LEVEL": "info",
        })
        self.proc: subprocess.Popen | None = None
        self.starts: list[dict] = []

    def start(self) -> None:
        n = len(self.starts)
        out = (self.workdir / f"service-{n}.log").open("w")
        t = time.time()
        self.proc = self.procs.start(["node", "--import", "tsx", "main.ts"], cwd=REPO, env=self.env,
                                     stdout=out, stderr=subprocess.STDOUT)
        self.starts.append({"n": n, "spawned": t, "pid": self.proc.pid, "api_up": None, "killed": None})
        threading.Thread(target=self.watch_api, args=(self.starts[-1], self.proc), daemon=True).start()

    def watch_api(self, rec: dict, proc: subprocess.Popen) -> None:
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        rec["api_up"] = time.time()
                        return
            except Exception:
                pass
            time.sleep(0.1)

    def kill(self, why: str) -> None:
        assert self.proc
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.starts[-1]["killed"] = time.time()
        self.starts[-1]["kill_kind"] = why
        log(f"SIGKILL service #{self.starts[-1]['n']} ({why}), "
            f"{self.starts[-1]['killed'] - self.starts[-1]['spawned']:.1f} s after its spawn")


def wait_until(pred, timeout: float, what: str, step: float = 0.2) -> None:
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(step)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--valid", type=int, default=300_000)
    ap.add_argument("--dups", type=int, default=15_000)
    ap.add_argument("--poison", type=int, default=1_000)
    ap.add_argument("--duration", type=float, default=240.0)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--kills", type=int, default=6, help="SIGKILLs, one of them during a start-up (when >= 2)")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the broker's and the service's data")
    ap.add_argument("--settle-timeout", type=float, default=1200.0)
    ap.add_argument("--dlq-exactly-once", action="store_true",
                    help="fail on a poison message dead-lettered twice (ARCHITECTURE.md: the DLQ is at-least-once)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 2**31)
    work = a.work or Path(f"/tmp/mailstats-indep-kill-{seed}")
    log(f"independent kill scenario: seed {seed} (repeat: --seed {seed}), work dir {work}")
    if work.exists():
        subprocess.run(["rm", "-rf", str(work)], check=True)
    meta = scenario.generate(work, seed, a.valid, a.dups, a.poison, a.duration, a.partitions)
    log(f"stream: {meta['messages']} messages ({a.valid} valid, {a.dups} resent, {a.poison} poison, "
        f"{meta['catalog']} catalog) over {a.duration:.0f} s; lists "
        + ", ".join(f"{x['list_id']}:{x['final_zone'] or 'default'}" for x in meta["lists"])
        + f"; list {meta['redated_list']} moves Asia/Tokyo → America/Los_Angeles mid-stream")

    # the kill plan: 'consume' kills at seeded instants of the stream (each once the current process has
    # committed, so that it is consuming), and one 'start-up' kill right after a restart
    krng = random.Random(seed * 7919 + 1)
    consume = a.kills - (1 if a.kills >= 2 else 0)
    at = sorted(krng.uniform(0.04, 0.96) * a.duration for _ in range(consume))
    startup_after = krng.randrange(consume) if a.kills >= 2 else None  # after which consume kill
    startup_delay = krng.uniform(0.2, 1.2)
    plan = []
    for i, t in enumerate(at):
        plan.append({"kind": "consuming", "at": t, "extra": krng.uniform(0.2, 3.0)})
        if i == startup_after:
            plan.append({"kind": "start-up", "delay": startup_delay})
    log("kill plan: " + "; ".join(f"{p['kind']} at {p['at']:.1f} s" if "at" in p else
                                  f"{p['kind']} {p['delay']:.2f} s after the restart" for p in plan))

    libs = jars()
    procs = Procs()

    def on_term(signum, _frame):  # end what this run started (the finally below), then exit
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    loads: list[tuple[float, float]] = []
    failures: list[str] = []
    try:
        broker = Broker(procs, work, libs, a.partitions)
        broker.start()
        broker.tool("topics", str(a.partitions), scenario.EVENTS, scenario.CATALOG, scenario.DLQ)
        watcher = Watcher(procs, broker, work / "commits.log")
        service = Service(procs, work, broker.bootstrap, a.partitions)
        service.start()
        wait_until(lambda: service.starts[0]["api_up"], 180, "the service's /healthz")
        log(f"service up at {service.url} ({service.starts[0]['api_up'] - service.starts[0]['spawned']:.1f} s)")
        prod_out = (work / "producer.log").open("w")
        t_prod = time.time()
        producer = procs.start(["java", "-cp", broker.cp, str(HERE / "Producer.java"), broker.bootstrap,
                                str(work / "plan.tsv")], stdout=prod_out, stderr=subprocess.STDOUT)
        log(f"producer started (pid {producer.pid})")
        last_load = 0.0
        i = 0
        while i < len(plan) or producer.poll() is None:
            now = time.time()
            if now - last_load >= 5:
                loads.append((now, loadavg()))
                if len(loads) % 6 == 1:
                    lag = watcher.lag
                    log(f"load {loads[-1][1]:.2f}; lag {lag[1] if lag else '?'}; commits {len(watcher.commits)}")
                last_load = now
            assert service.proc
            if service.proc.poll() is not None:
                failures.append(f"service #{service.starts[-1]['n']} exited on its own ({service.proc.returncode})")
                log(failures[-1] + ": restarting it")
                service.start()
            if i < len(plan):
                p = plan[i]
                cur = service.starts[-1]
                if p["kind"] == "start-up":
                    if now >= cur["spawned"] + p["delay"]:
                        service.kill("start-up")
                        service.start()
                        i += 1
                else:
                    first = watcher.first_commit_after(cur["spawned"] + COMMIT_GUARD_S)
                    due = now >= t_prod + p["at"]
                    if due and first is not None and now >= first + p["extra"]:
                        service.kill("consuming")
                        service.start()
                        i += 1
                    elif due and producer.poll() is not None and now >= cur["spawned"] + 60:
                        # nothing left to consume, so no commit to wait for: kill it anyway, and say so
                        service.kill("after the stream, no commit seen")
                        service.start()
                        i += 1
            time.sleep(0.05)
        prod_rc = producer.wait()
        prod_out.close()
        done = [x for x in (work / "producer.log").read_text().splitlines() if x.startswith("producer: done")]
        log(f"producer exited {prod_rc}: " + (done[-1] if done else "(no summary line)"))
        if prod_rc != 0:
            failures.append(f"producer exited {prod_rc}")

        # settle: the group's lag 0, then two identical answers in a row
        def settled() -> bool:
            lag = watcher.lag
            if time.time() - last[0] >= 5:
                loads.append((time.time(), loadavg()))
                last[0] = time.time()
            return bool(lag and lag[0] > time.time() - 3 and lag[1] == 0)

        last = [0.0]
        wait_until(settled, a.settle_timeout, "the group's lag to reach 0", 0.5)
        log("lag 0")
        answers = check.all_answers(service.url, meta)
        while True:
            time.sleep(3)
            again = check.all_answers(service.url, meta)
            if again == answers and watcher.lag and watcher.lag[1] == 0:
                break
            answers = again
        log("answers stable")
        (work / "answers.json").write_text(json.dumps(answers, default=str))
        broker.tool("dlq", scenario.DLQ, str(work / "dlq.txt"), stdout=subprocess.DEVNULL)
        report = check.compare(work, answers)
        report["dlq"] = check.check_dlq(work, work / "dlq.txt")
        (work / "report.json").write_text(json.dumps(report, indent=1, default=str))

        # first committed offset of each restarted process, from its spawn
        restarts = []
        # The watcher sees a commit up to a poll (~0.2-0.4 s) after the broker stored it, so a commit the
        # killed process sent just before its SIGKILL can show up just after the restart's spawn; no
        # process here starts, joins its group and commits within COMMIT_GUARD_S of its spawn.
        for s in service.starts[1:]:
            first = watcher.first_commit_after(s["spawned"] + COMMIT_GUARD_S)
            if s.get("kill_kind") == "start-up" or (first and s["killed"] and first > s["killed"]):
                first = None
            restarts.append({"n": s["n"], "first_commit_s": None if first is None else round(first - s["spawned"], 2),
                             "api_s": None if s["api_up"] is None else round(s["api_up"] - s["spawned"], 2),
                             "killed_in": s.get("kill_kind")})
        s0 = service.starts[0]
        f0 = watcher.first_commit_after(s0["spawned"] + COMMIT_GUARD_S)
        times = [r["first_commit_s"] for r in restarts if r["first_commit_s"] is not None]
        ls = [x for _, x in loads]
        summary = {
            "seed": seed,
            "kafka": KAFKA_VERSION,
            "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
            "load_1min": {"min": min(ls), "mean": round(statistics.mean(ls), 2), "max": max(ls)} if ls else None,
            "counted_twice": report["double"], "lost": report["lost"], "misdated": report["misdated"],
            "unique_diffs": report["unique_diffs"], "money_diffs": report["money_diffs"],
            "dlq": report["dlq"],
            "first_start_first_commit_s": None if f0 is None else round(f0 - s0["spawned"], 2),
            "restarts": restarts,
            "first_commit_median_s": statistics.median(times) if times else None,
            "failures": failures,
            "starts": service.starts,
        }
        (work / "summary.json").write_text(json.dumps(summary, indent=1))
        for lid, r in report["lists"].items():
            log(f"list {lid} ({r['zone']}): {r['records_answered']} records answered for {r['records_expected']}, "
                f"{r['days_differing']} of {r['days_expected']} days differ")
            for f, d in r["fields"].items():
                log(f"    {f}: {d}")
            for d in r["first_differing_days"]:
                log(f"    {d}")
        log(f"DLQ: {report['dlq']}")
        for r in restarts:
            log(f"restart #{r['n']}: first commit {r['first_commit_s']} s after spawn "
                f"(API {r['api_s']} s){' — killed during start-up' if r['killed_in'] == 'start-up' else ''}")
        log(f"first commit after restart: median {summary['first_commit_median_s']} s of {len(times)} "
            f"(first start: {summary['first_start_first_commit_s']} s)")
        log(f"load average (1 min) during the run: {summary['load_1min']}")
        d = report["dlq"]
        if d["missing"] or d["foreign"]:
            failures.append(f"dead letters: {d['missing']} poison missing, {d['foreign']} foreign")
        if a.dlq_exactly_once and d["extra_copies"]:
            failures.append(f"dead letters: {d['extra_copies']} poison messages dead-lettered more than once")
        if report["double"] or report["lost"] or report["misdated"] or report["unique_diffs"] or report["money_diffs"]:
            failures.append("answers differ from the model")
        log(f"RESULT seed {seed}: counted twice {report['double']}, lost {report['lost']}, misdated "
            f"{report['misdated']}, unique diffs {report['unique_diffs']}, money diffs {report['money_diffs']}; "
            f"DLQ {d['present_once']}/{d['poison']} once, {d['missing']} missing, {d['extra_copies']} extra copies; "
            f"first commit median {summary['first_commit_median_s']} s"
            + (f"; FAILED: {failures}" if failures else "; OK"))
        return 1 if failures else 0
    finally:
        procs.stop_all()
        if not a.keep:
            for sub in ("kafka", "data"):
                subprocess.run(["rm", "-rf", str(work / sub)])


if __name__ == "__main__":
    sys.exit(main())
