"""The independent scenario's stream, written as files (Python 3.11 standard library only).

Shares no code with mailstats: the record shapes come from docs/records.md.

  plan.tsv         every message in send order: t_ms, topic, key, r|b (as written | base64), value
  records.ndjson   the valid activity records, each once (what the model counts)
  catalog.ndjson   the catalog records, in send order
  poison.txt       the poison messages' values, base64, one a line
  meta.json        seed, lists and zones, the reader's user id and api key, the period

The shape (docs/development.md, "The independent kill scenario"): valid records over several lists and
about 90 days, dated near the hours where a wrong zone moves them to another day; resends of the same
event_id and content keyed like the first copy (by list_id, docs/records.md "Ingest over Kafka"), in
the same batch, a few seconds later and much later; poison messages; catalog records, one list created
in Asia/Tokyo and moved to America/Los_Angeles while its records arrive, one list whose `list` record
comes after its first activity, one without a zone.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import random
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
EVENTS = "mailstats.events"
CATALOG = "mailstats.catalog"
DLQ = "mailstats.dlq"
FIRST_DAY = dt.date(2025, 9, 1)
DAYS = 91  # 2025-09-01 .. 2025-11-30: Europe's and the US's DST ends, Adelaide's DST start


def murmur2(data: bytes) -> int:
    """Kafka's default partitioner hash (Utils.murmur2), to spread the lists' keys over the partitions."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(length // 4):
        k = int.from_bytes(data[i * 4 : i * 4 + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    base = length & ~3
    if rest == 3:
        h ^= data[base + 2] << 16
    if rest >= 2:
        h ^= data[base + 1] << 8
    if rest >= 1:
        h ^= data[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def partition_of(key: str, partitions: int) -> int:
    return (murmur2(key.encode()) & 0x7FFFFFFF) % partitions


@dataclass
class ListSpec:
    list_id: int
    first_zone: str | None  # the zone of its first `list` record (None: no timezone field)
    final_zone: str | None
    share: float
    late: bool = False  # its `list` record comes after its first activity


ACTIVITY_TYPES = [
    ("send", 0.35),
    ("open", 0.20),
    ("click", 0.10),
    ("purchase", 0.04),
    ("bounce", 0.02),
    ("unsubscribe", 0.015),
    ("spam", 0.005),
    ("event", 0.10),
    ("condition", 0.09),
    ("action", 0.08),
]
REACTIONS = {"open", "click", "purchase", "bounce", "unsubscribe", "spam"}
STATUSED = {"event", "condition", "action"}


def pick_lists(partitions: int) -> list[ListSpec]:
    zones = [
        ("Europe/Bucharest", "Europe/Bucharest", 0.15, False),
        (None, None, 0.13, False),  # DEFAULT_TIMEZONE
        ("Asia/Tokyo", "America/Los_Angeles", 0.27, False),  # re-dated while records arrive
        ("Europe/London", "Europe/London", 0.15, True),  # `list` record after its activity
        ("Australia/Adelaide", "Australia/Adelaide", 0.15, False),
        ("America/New_York", "America/New_York", 0.15, False),
    ]
    ids: list[int] = []
    used: set[int] = set()
    n = 1
    while len(ids) < len(zones):
        p = partition_of(str(n), partitions)
        if p not in used or len(used) >= partitions:
            used.add(p)
            ids.append(n)
        n += 1
    return [ListSpec(i, z0, z1, s, late) for i, (z0, z1, s, late) in zip(ids, zones)]


def fmt_instant(rng: random.Random, ms: int) -> object:
    """One of the encodings docs/records.md accepts: RFC 3339 with Z or an offset, or epoch ms."""
    kind = rng.random()
    if kind < 0.3:
        return ms
    t = dt.datetime.fromtimestamp(ms / 1000, UTC)
    if kind < 0.6:
        s = t.strftime("%Y-%m-%dT%H:%M:%S")
        if ms % 1000:
            s += f".{ms % 1000:03d}"
        return s + "Z"
    off = rng.choice([-480, -420, -300, 0, 60, 120, 180, 330, 570, 630])
    local = t.astimezone(dt.timezone(dt.timedelta(minutes=off)))
    s = local.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        s += f".{ms % 1000:03d}"
    sign = "+" if off >= 0 else "-"
    return s + f"{sign}{abs(off) // 60:02d}:{abs(off) % 60:02d}"


def local_midnight_ms(zone: str, day: dt.date) -> int:
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(zone)).timestamp() * 1000)


def money(rng: random.Random) -> object:
    v = Decimal(rng.randint(0, 2_000_000)) / Decimal(10 ** rng.choice([0, 1, 2, 3, 4]))
    return str(v) if rng.random() < 0.6 else float(v)


def generate(
    out: Path,
    seed: int,
    valid: int = 300_000,
    dups: int = 15_000,
    poison: int = 1_000,
    duration_s: float = 240.0,
    partitions: int = 6,
    default_zone: str = "Europe/Bucharest",
) -> dict:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    lists = pick_lists(partitions)
    dur = int(duration_s * 1000)
    user_id = 7001
    api_key = hashlib.sha256(f"independent-kill-{seed}".encode()).hexdigest()[:40]
    msgs: list[tuple[int, int, str, str, str, str]] = []  # (t, seq, topic, key, flag, value)
    seq = 0

    def add(t: int, topic: str, key: str, value: str | bytes) -> None:
        nonlocal seq
        seq += 1
        if isinstance(value, bytes):
            msgs.append((t, seq, topic, key, "b", base64.b64encode(value).decode()))
        else:
            msgs.append((t, seq, topic, key, "r", value))

    # --- catalog: 69 records -------------------------------------------------------------------------
    catalog: list[dict] = []

    def cat(t: int, key: str, rec: dict) -> None:
        catalog.append(rec)
        add(t, CATALOG, key, json.dumps(rec, separators=(",", ":")))

    cat(0, f"user:{user_id}", {"type": "user", "user_id": user_id,
                               "api_key_sha256": hashlib.sha256(api_key.encode()).hexdigest()})
    late_t = int(dur * 0.20)
    redate_t = int(dur * 0.45)
    for ls in lists:
        rec = {"type": "list", "list_id": ls.list_id, "name": f"Independent list {ls.list_id}", "version": 1}
        if ls.first_zone:
            rec["timezone"] = ls.first_zone
        cat(late_t if ls.late else 0, f"list:{ls.list_id}", rec)
        cat(0, f"list_access:{user_id}:{ls.list_id}",
            {"type": "list_access", "user_id": user_id, "list_id": ls.list_id, "granted": True})
        cat(0, f"smtp_account:acc-{ls.list_id}",
            {"type": "smtp_account", "account_id": f"acc-{ls.list_id}", "list_id": ls.list_id,
             "active": True, "is_default": True})
        for w in range(1, 7):
            wid = ls.list_id * 100 + w
            cat(0, f"workflow:{wid}", {"type": "workflow", "workflow_id": wid, "list_id": ls.list_id,
                                       "name": f"Flow {wid}"})
    for ti in range(13):
        acc = f"acc-{lists[ti % len(lists)].list_id}"
        cat(0, f"template:{acc}/tpl-{ti}", {"type": "template", "account_id": acc, "template_id": f"tpl-{ti}",
                                            "content": f"<p>Hello {{{{name}}}}, template {ti}</p>"})
    moved = next(ls for ls in lists if ls.first_zone != ls.final_zone)
    cat(redate_t, f"list:{moved.list_id}", {"type": "list", "list_id": moved.list_id,
                                            "name": f"Independent list {moved.list_id}",
                                            "timezone": moved.final_zone, "version": 2})
    assert len(catalog) == 69, len(catalog)

    # --- activity -----------------------------------------------------------------------------------
    types = [t for t, _ in ACTIVITY_TYPES]
    weights = [w for _, w in ACTIVITY_TYPES]
    list_weights = [ls.share for ls in lists]
    records: list[tuple[int, str, str]] = []  # (t, key, json)
    with (out / "records.ndjson").open("w") as rf:
        for i in range(valid):
            ls = rng.choices(lists, list_weights)[0]
            typ = rng.choices(types, weights)[0]
            day = FIRST_DAY + dt.timedelta(days=rng.randrange(DAYS))
            zone = ls.final_zone or default_zone
            # the instant that dates the record: mostly within 2 h of a local midnight (of the final zone,
            # or of the first one for the re-dated list), so a wrong zone moves it to another day
            u = rng.random()
            if u < 0.6:
                base = local_midnight_ms(zone, day)
                at = base + rng.randint(-2 * 3600_000, 2 * 3600_000)
            elif u < 0.75 and ls.first_zone and ls.first_zone != zone:
                at = local_midnight_ms(ls.first_zone, day) + rng.randint(-2 * 3600_000, 2 * 3600_000)
            else:
                at = local_midnight_ms(zone, day) + rng.randrange(86_400_000)
            rec: dict = {"type": typ, "event_id": f"ik{seed}-{i}", "list_id": ls.list_id,
                         "workflow_id": ls.list_id * 100 + rng.randint(1, 6),
                         "subscriber_id": rng.randint(1, 4000)}
            if rng.random() < 0.3:
                rec["trigger_id"] = rng.randint(1, 3)
            if typ in REACTIONS and rng.random() < 0.5:
                rec["sent_at"] = fmt_instant(rng, at)
                rec["timestamp"] = fmt_instant(rng, at + rng.randint(0, 72 * 3600_000))
            else:
                rec["timestamp"] = fmt_instant(rng, at)
            if typ == "purchase":
                rec["order_id"] = f"o-{seed}-{i}"
                rec["value_ron"] = money(rng)
                rec["value_eur"] = money(rng)
            if typ in STATUSED:
                rec["status"] = "ok" if rng.random() < 0.8 else "failed"
                if rec["status"] == "failed" and rng.random() < 0.5:
                    rec["reason"] = "timeout"
            text = json.dumps(rec, separators=(",", ":"))
            rf.write(text + "\n")
            # the London list's activity starts before its `list` record
            t = rng.randrange(dur)
            records.append((t, str(ls.list_id), text))
    records.sort()
    for t, key, text in records:
        add(t, EVENTS, key, text)

    # --- resends: same event_id, same content, same key -------------------------------------------------
    for j in range(dups):
        t, key, text = records[rng.randrange(len(records))]
        kind = j % 10
        if kind < 4:
            t2 = t + rng.randint(0, 40)  # the same write, mostly
        elif kind < 7:
            t2 = t + rng.randint(1_000, 10_000)
        else:
            t2 = t + rng.randint(60_000, 200_000)  # much later
        add(min(t2, dur), EVENTS, key, text)

    # --- poison ---------------------------------------------------------------------------------------
    poison_values: list[bytes] = []
    for k in range(poison):
        ls = rng.choice(lists)
        tag = f"poison-{seed}-{k}"
        base = {"type": "send", "event_id": tag, "list_id": ls.list_id, "workflow_id": ls.list_id * 100 + 1,
                "subscriber_id": 1, "timestamp": "2025-10-01T10:00:00Z"}
        kind = k % 10
        if kind == 0:
            v = ('{"type":"send","event_id":"%s","list_id":%d' % (tag, ls.list_id)).encode()  # cut short
        elif kind == 1:
            v = json.dumps([tag]).encode()  # not an object
        elif kind == 2:
            b = dict(base)
            del b["event_id"]
            b["note"] = tag
            v = json.dumps(b).encode()
        elif kind == 3:
            v = json.dumps(dict(base, timestamp="2025-02-29T10:00:00Z")).encode()  # no such date
        elif kind == 4:
            v = json.dumps(dict(base, type="sendd")).encode()
        elif kind == 5:
            v = json.dumps(dict(base, list_id=-ls.list_id)).encode()
        elif kind == 6:
            v = json.dumps(dict(base, timestamp="2031-01-01T00:00:00Z")).encode()  # over 24 h ahead
        elif kind == 7:
            v = json.dumps(dict(base, type="purchase", order_id="o", value_ron="1.23456", value_eur="1")).encode()
        elif kind == 8:
            v = b"\xff\xfe" + tag.encode() + b"\x00 not json"
        else:
            v = json.dumps(dict(base, timestamp="2025-10-01T24:00:00Z")).encode()
        poison_values.append(v)
        add(rng.randrange(dur), EVENTS, str(ls.list_id), v)

    msgs.sort(key=lambda m: (m[0], m[1]))
    with (out / "plan.tsv").open("w") as pf:
        for t, _, topic, key, flag, value in msgs:
            pf.write(f"{t}\t{topic}\t{key}\t{flag}\t{value}\n")
    with (out / "catalog.ndjson").open("w") as cf:
        for rec in catalog:
            cf.write(json.dumps(rec) + "\n")
    with (out / "poison.txt").open("w") as pf:
        for v in poison_values:
            pf.write(base64.b64encode(v).decode() + "\n")
    meta = {
        "seed": seed,
        "messages": len(msgs),
        "valid": valid,
        "dups": dups,
        "poison": poison,
        "catalog": len(catalog),
        "duration_s": duration_s,
        "partitions": partitions,
        "lists": [{"list_id": ls.list_id, "first_zone": ls.first_zone, "final_zone": ls.final_zone,
                   "late": ls.late, "expected_partition": partition_of(str(ls.list_id), partitions)}
                  for ls in lists],
        "redated_list": moved.list_id,
        "user_id": user_id,
        "api_key": api_key,
        "default_zone": default_zone,
        "period": [(FIRST_DAY - dt.timedelta(days=10)).isoformat(),
                   (FIRST_DAY + dt.timedelta(days=DAYS + 10)).isoformat()],
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta
