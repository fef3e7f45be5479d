"""The independent model of what automation.stats must answer, and the comparison with the service's
answers and the dead-letter topic (Python 3.11 standard library only; no mailstats code).

The model follows docs/records.md "Dating" and docs/api.md "automation.stats": a record counts once (its
event_id), on the date in its list's FINAL zone (the `list` record of the highest version; no zone: the
default zone) of its `sent_at` when it has one, else of its `timestamp`; totals count records, uniques
count distinct subscribers of the day across all workflows, money sums exact decimals rounded half away
from zero to 2 decimals.

    python3 check.py WORKDIR BASE_URL [DLQ_DUMP]
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import sys
import urllib.request
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

COUNT_FIELDS = [
    "sends_total", "opens_total", "clicks_total", "purchase_count", "bounce_total", "unsub_total", "spam_total",
    "events_ok", "events_failed", "conditions_ok", "conditions_failed", "actions_ok", "actions_failed",
]
UNIQUE_FIELDS = ["sends_unique", "opens_unique", "clicks_unique"]
MONEY_FIELDS = ["purchases_value_ron", "purchases_value_eur"]
TOTAL_OF = {"send": "sends_total", "open": "opens_total", "click": "clicks_total", "purchase": "purchase_count",
            "bounce": "bounce_total", "unsubscribe": "unsub_total", "spam": "spam_total"}
UNIQUE_OF = {"send": "sends_unique", "open": "opens_unique", "click": "clicks_unique"}


def instant(v: object) -> dt.datetime:
    if isinstance(v, int):
        return dt.datetime.fromtimestamp(v / 1000, dt.timezone.utc)
    assert isinstance(v, str)
    t = dt.datetime.fromisoformat(v)
    assert t.tzinfo is not None, v
    return t


def final_zones(workdir: Path, default_zone: str) -> dict[int, str]:
    best: dict[int, tuple[int, int, str]] = {}
    for n, line in enumerate((workdir / "catalog.ndjson").read_text().splitlines()):
        rec = json.loads(line)
        if rec["type"] != "list":
            continue
        key = (rec.get("version", 0), n)
        if rec["list_id"] not in best or key >= best[rec["list_id"]][:2]:
            best[rec["list_id"]] = (*key, rec.get("timezone") or default_zone)
    return {k: v[2] for k, v in best.items()}


def model(workdir: Path) -> dict[int, dict[str, dict[str, object]]]:
    """list_id → date → field → value."""
    meta = json.loads((workdir / "meta.json").read_text())
    zones = {k: ZoneInfo(z) for k, z in final_zones(workdir, meta["default_zone"]).items()}
    days: dict[int, dict[str, dict[str, object]]] = defaultdict(dict)
    subs: dict[tuple[int, str, str], set[int]] = defaultdict(set)
    money: dict[tuple[int, str, str], Decimal] = defaultdict(Decimal)
    seen: set[str] = set()
    with (workdir / "records.ndjson").open() as f:
        for line in f:
            r = json.loads(line, parse_float=Decimal)
            if r["event_id"] in seen:
                continue
            seen.add(r["event_id"])
            lid = r["list_id"]
            when = instant(r.get("sent_at", r["timestamp"]))
            date = when.astimezone(zones[lid]).date().isoformat()
            row = days[lid].setdefault(date, defaultdict(int))
            typ = r["type"]
            if typ in TOTAL_OF:
                row[TOTAL_OF[typ]] += 1
            else:
                row[f"{typ}s_{r['status']}"] += 1
            if typ in UNIQUE_OF:
                subs[(lid, date, UNIQUE_OF[typ])].add(r["subscriber_id"])
            if typ == "purchase":
                money[(lid, date, "purchases_value_ron")] += Decimal(str(r["value_ron"]))
                money[(lid, date, "purchases_value_eur")] += Decimal(str(r["value_eur"]))
    for (lid, date, field), s in subs.items():
        days[lid][date][field] = len(s)
    for (lid, date, field), v in money.items():
        days[lid][date][field] = v.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return days


def fetch_answers(base_url: str, meta: dict, list_id: int) -> dict[str, dict]:
    start, stop = meta["period"]
    url = (f"{base_url}/api/1.2/rest/{meta['user_id']}/{meta['api_key']}/automation.stats.json"
           f"?list_id={list_id}&start_date={start}&stop_date={stop}")
    with urllib.request.urlopen(url, timeout=60) as res:
        rows = json.loads(res.read(), parse_float=Decimal)
    return {row["date"]: row for row in rows}


def all_answers(base_url: str, meta: dict) -> dict[int, dict[str, dict]]:
    return {ls["list_id"]: fetch_answers(base_url, meta, ls["list_id"]) for ls in meta["lists"]}


def compare(workdir: Path, answers: dict[int, dict[str, dict]]) -> dict:
    """Counted twice / lost / misdated per list and field, and the first differing days."""
    meta = json.loads((workdir / "meta.json").read_text())
    expected = model(workdir)
    report: dict = {"lists": {}, "double": 0, "lost": 0, "misdated": 0, "unique_diffs": 0, "money_diffs": 0}
    for ls in meta["lists"]:
        lid = ls["list_id"]
        exp, got = expected.get(lid, {}), answers.get(lid, {})
        dates = sorted(set(exp) | set(got))
        per_field = {}
        diff_days: list[str] = []
        for field in COUNT_FIELDS + UNIQUE_FIELDS + MONEY_FIELDS:
            zero = Decimal(0) if field in MONEY_FIELDS else 0
            over = under = zero
            se = sg = zero
            for d in dates:
                e = exp.get(d, {}).get(field, zero)
                g = got.get(d, {}).get(field, zero)
                if field in MONEY_FIELDS:
                    e, g = Decimal(str(e)), Decimal(str(g))
                se += e
                sg += g
                if g > e:
                    over += g - e
                elif e > g:
                    under += e - g
                if g != e and d not in diff_days:
                    diff_days.append(d)
            if over or under:
                per_field[field] = {
                    "expected": str(se), "answered": str(sg),
                    "counted_twice": str(max(sg - se, zero)), "lost": str(max(se - sg, zero)),
                    "misdated": str(min(over, under)),
                }
                if field in COUNT_FIELDS:
                    report["double"] += max(sg - se, 0)
                    report["lost"] += max(se - sg, 0)
                    report["misdated"] += min(over, under)
                elif field in UNIQUE_FIELDS:
                    report["unique_diffs"] += over + under
                else:
                    report["money_diffs"] += 1
        diff_days.sort()
        first = []
        for d in diff_days[:5]:
            first.append({"date": d, **{f: [str(exp.get(d, {}).get(f, 0)), str(got.get(d, {}).get(f, 0))]
                                        for f in COUNT_FIELDS + UNIQUE_FIELDS + MONEY_FIELDS
                                        if str(exp.get(d, {}).get(f, 0)) != str(got.get(d, {}).get(f, 0))}})
        report["lists"][lid] = {
            "zone": ls["final_zone"] or meta["default_zone"],
            "days_expected": len(exp), "days_answered": len(got), "days_differing": len(diff_days),
            "records_expected": sum(sum(exp[d].get(f, 0) for f in COUNT_FIELDS) for d in exp),
            "records_answered": sum(sum(got[d].get(f, 0) for f in COUNT_FIELDS) for d in got),
            "fields": per_field, "first_differing_days": first,
        }
    return report


def check_dlq(workdir: Path, dump: Path) -> dict:
    """Every poison message in the dead-letter topic; repeats told by their source coordinates."""
    poison = [base64.b64decode(line) for line in (workdir / "poison.txt").read_text().splitlines() if line]
    wanted = {v: 0 for v in poison}
    sources: dict[bytes, set[str]] = defaultdict(set)
    foreign = 0
    total = 0
    for line in dump.read_text().splitlines():
        parts = line.split(" ")
        if len(parts) < 5:
            continue
        total += 1
        value = b"" if parts[3] == "" else (None if parts[3] == "-" else base64.b64decode(parts[3]))
        headers = {}
        if parts[4] != "-":
            for h in parts[4].split(","):
                name, _, val = h.partition(":")
                headers[base64.b64decode(name).decode()] = base64.b64decode(val) if val != "-" else b""
        if value in wanted:
            wanted[value] += 1
            src = b"/".join(headers.get(k, b"?") for k in
                            ("mailstats-source-topic", "mailstats-source-partition", "mailstats-source-offset"))
            sources[value].add(src.decode(errors="replace"))
        else:
            foreign += 1
    missing = sum(1 for n in wanted.values() if n == 0)
    repeated = sum(n - 1 for n in wanted.values() if n > 1)
    distinct_sources_repeated = sum(len(s) - 1 for s in sources.values() if len(s) > 1)
    return {"dead_letters": total, "poison": len(poison), "missing": missing, "present_once":
            sum(1 for n in wanted.values() if n == 1), "extra_copies": repeated,
            "extra_copies_from_other_offsets": distinct_sources_repeated, "foreign": foreign}


def main() -> int:
    workdir, base_url = Path(sys.argv[1]), sys.argv[2]
    meta = json.loads((workdir / "meta.json").read_text())
    report = compare(workdir, all_answers(base_url, meta))
    if len(sys.argv) > 3:
        report["dlq"] = check_dlq(workdir, Path(sys.argv[3]))
    print(json.dumps(report, indent=1, default=str))
    bad = report["double"] or report["lost"] or report["misdated"] or report["unique_diffs"] or report["money_diffs"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
