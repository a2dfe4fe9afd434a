"""The reference oracle for transactions: a plain walk over every event, one at a time.

It computes what ``cdckit.transactions`` and the transaction findings of the ordering report compute, from
the spec (issue 40) and written apart from the columnar code (``cdckit.analysis.ordering.transaction_members``):
dicts, lists and sorted() here, no integer codes. The property tests check that the two agree. It is not part
of the package.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cdckit.analysis.ordering.catalogue import FINDING_COLUMNS
from cdckit.analysis.transactions import TRANSACTION_COLUMNS
from cdckit.dialects import registry
from cdckit.frame import table_names

CHANGES = ("insert", "update", "delete", "read", "truncate")


def _missing(value: Any) -> Any:
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else value


@dataclass
class Txn:
    dialect: str
    txn_id: str | None
    begins: list[dict] = field(default_factory=list)
    commits: list[dict] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)


def _events(events: pd.DataFrame) -> list[dict]:
    """Each event as a dict: the columns read, its transaction key, table name and arrival key."""
    frame = events.reset_index(drop=True)
    names = table_names(frame)
    keys, ends, places = registry.transaction_keys(), registry.transaction_ends(), registry.transaction_places()
    out = []
    columns = ["dialect", "source", "partition", "offset", "op", "seq", "txn_id", "key", "after", "event_time"]
    for position, values in enumerate(zip(*(frame[c].tolist() for c in columns), names.tolist())):
        e = dict(zip([*columns, "table"], (_missing(v) for v in values)))
        e["row"] = position
        txn = e["txn_id"]
        if txn is not None and e["dialect"] in keys:
            found = re.search(keys[e["dialect"]], str(txn))
            if found and found.group(1) is not None:
                txn = found.group(1)
        e["txn"] = txn
        e["arrival"] = (e["source"] or "", e["partition"] is not None, e["partition"] or 0, e["offset"], position)
        e["end"] = e["op"] in CHANGES and e["seq"] is not None and e["dialect"] in ends and bool(
            re.search(ends[e["dialect"]], e["seq"]))
        place = None
        if e["op"] in CHANGES and not e["end"] and e["seq"] is not None and e["dialect"] in places:
            found = re.search(places[e["dialect"]], e["seq"])
            place = int(found.group(1)) if found else None
        e["place"] = place
        out.append(e)
    return out


def _change_order(e: dict) -> tuple:
    return (e["seq"] is None, e["seq"] or "", e["arrival"])


def _unnamed(events: list[dict]) -> list[Txn]:
    """Markers without a key and the changes between them, per dialect, source and partition (a stack)."""
    places: dict[tuple, list[dict]] = {}
    for e in sorted(events, key=lambda e: e["arrival"]):
        if e["txn"] is None and (e["op"] in CHANGES or e["op"] in ("begin", "commit")):
            places.setdefault((e["dialect"], e["source"] or "", e["partition"]), []).append(e)
    found = []
    for (dialect, _, _), rows in places.items():
        if not any(e["op"] in ("begin", "commit") for e in rows):
            continue
        stack: list[Txn] = []
        pending: list[dict] = []
        for e in rows:
            if e["op"] == "begin":
                txn = Txn(dialect, None, begins=[e])
                found.append(txn)
                stack.append(txn)
                pending = []
            elif e["op"] == "commit":
                if stack:
                    stack.pop().commits.append(e)
                else:
                    found.append(Txn(dialect, None, commits=[e], changes=pending))
                pending = []
            elif stack:
                stack[-1].changes.append(e)
            else:
                pending.append(e)
    return found


def _match(declared: list[str], held: list[str]) -> dict[str, str]:
    """Declared name -> held name: the same name, else the most trailing dotted parts shared (first on ties)."""
    out = {}
    for name in declared:
        if name in held:
            out[name] = name
    for name in declared:
        if name in out:
            continue
        taken = set(out.values())
        best = None
        for other in held:
            if other in taken:
                continue
            a, b = name.split("."), other.split(".")
            shared = 0
            while shared < min(len(a), len(b)) and a[-1 - shared] == b[-1 - shared]:
                shared += 1
            if shared and (best is None or shared > best[0]):
                best = (shared, other)
        if best:
            out[name] = best[1]
    return out


def walk(events: pd.DataFrame) -> list[dict]:
    """Every transaction as a dict of what the table says of it (its rows as event dicts), unsorted."""
    rows = _events(events)
    declaring = {e["dialect"] for e in rows if e["op"] in ("begin", "commit") or e["end"]}
    beginning = {e["dialect"] for e in rows if e["op"] == "begin"}
    named: dict[tuple, Txn] = {}
    for e in rows:
        if e["txn"] is None or e["op"] not in (*CHANGES, "begin", "commit"):
            continue
        txn = named.setdefault((e["dialect"], e["txn"]), Txn(e["dialect"], e["txn"]))
        {"begin": txn.begins, "commit": txn.commits}.get(e["op"], txn.changes).append(e)
    out = []
    for txn in [*named.values(), *_unnamed(rows)]:
        arrived = sorted(txn.changes, key=lambda e: e["arrival"])
        seen, held, redelivered = set(), [], 0
        for e in arrived:
            identity = (e["table"], e["op"], e["seq"], e["key"])
            if e["seq"] is not None and identity in seen:
                redelivered += 1
                continue
            seen.add(identity)
            held.append(e)
        tables = dict(sorted(Counter(e["table"] for e in held if e["table"] is not None).items()))
        misordered = []
        tops: dict[tuple, dict] = {}
        for e in arrived:
            if e["seq"] is None:
                continue
            place = (e["source"] or "", e["partition"], e["table"])
            top = tops.get(place)
            if top is not None and e["seq"] < top["seq"]:
                misordered.append((e, top))
            else:
                tops[place] = e
        begins = sorted(txn.begins, key=lambda e: e["arrival"])
        commits = sorted(txn.commits, key=lambda e: e["arrival"])
        ends = sorted((e for e in txn.changes if e["end"]), key=lambda e: e["arrival"])
        by_change = sorted(txn.changes, key=_change_order)
        declared_changes = declared_tables = None
        said = [e for e in commits if e["after"] is not None]
        if said:
            try:
                declared = json.loads(said[0]["after"])
            except ValueError:
                declared = None
            if isinstance(declared, dict):
                if type(declared.get("event_count")) is int:
                    declared_changes = declared["event_count"]
                if isinstance(declared.get("data_collections"), dict):
                    declared_tables = {k: v for k, v in sorted(declared["data_collections"].items())
                                       if type(v) is int}
        differ = []
        if declared_tables is not None:
            names = _match(list(declared_tables), list(tables))
            differ = [(n, d, tables.get(names.get(n), 0)) for n, d in declared_tables.items()]
            differ += [(n, 0, h) for n, h in tables.items() if n not in names.values()]
            differ = [d for d in differ if d[1] != d[2]]
        placed = {e["place"] for e in held if e["place"] is not None}
        gaps = max(placed) + 1 - len(placed) if placed else 0
        commit_count = len(commits) + len(ends)
        unseen = (txn.dialect in registry.transaction_ends() and not any(e["seq"] is not None for e in txn.changes)
                  and not begins and not commit_count)
        total = len(held)
        if txn.dialect not in declaring or unseen:
            status = "undeclared"
        elif commit_count == 0:
            status = "no_commit"
        elif ((declared_changes is not None and total < declared_changes) or any(h < d for _, d, h in differ)
              or gaps > 0):
            status = "missing_changes"
        elif (declared_changes is not None and total > declared_changes) or any(h > d for _, d, h in differ):
            status = "extra_changes"
        elif (txn.dialect in beginning and not begins and declared_changes is None and declared_tables is None):
            status = "no_begin"
        else:
            status = "complete"
        begin = begins[0] if begins else (by_change[0] if by_change else None)
        commit = commits[0] if commits else (ends[0] if ends else None)
        if commit is None and status == "undeclared" and by_change:
            commit = by_change[-1]
        out.append({
            "txn": txn, "status": status, "changes": total, "tables": tables, "redelivered": redelivered,
            "declared_changes": declared_changes, "declared_tables": declared_tables, "differ": differ,
            "gaps": gaps, "begin": begin, "commit": commit, "begins": begins, "commit_markers": commits,
            "commits": commit_count, "misordered": misordered, "by_change": by_change,
            "places": len({(e["source"] or "", e["partition"]) for e in txn.changes}),
            "unbegun": txn.dialect in beginning and not begins and bool(commits),
        })
    return out


def _text(tables: dict | None) -> str | None:
    return None if tables is None else json.dumps(tables, separators=(",", ":"), ensure_ascii=False)


def transactions(events: pd.DataFrame) -> pd.DataFrame:
    """The table of ``cdckit.transactions`` without its ``detail`` column, sorted as it sorts."""
    rows = []
    for t in walk(events):
        row = {"txn_id": t["txn"].txn_id, "dialect": t["txn"].dialect, "status": t["status"],
               "complete": None if t["status"] == "undeclared" else t["status"] == "complete",
               "changes": t["changes"], "tables": _text(t["tables"]), "declared_changes": t["declared_changes"],
               "declared_tables": _text(t["declared_tables"])}
        for end in ("begin", "commit"):
            e = t[end] or {}
            for column in ("source", "partition", "offset", "seq"):
                row[f"{end}_{column}"] = e.get(column)
            row[f"{end}_time"] = e.get("event_time")
        row.update(places=t["places"], redelivered=t["redelivered"], misordered=len(t["misordered"]),
                   begins=len(t["begins"]), commits=t["commits"])
        rows.append(row)

    def position(value: Any) -> tuple:
        return (value is None, value if value is not None else 0)

    rows.sort(key=lambda r: tuple(position(r[c]) for c in (
        "commit_seq", "commit_source", "commit_partition", "commit_offset", "begin_seq", "begin_source",
        "begin_partition", "begin_offset", "dialect", "txn_id")))
    columns = {c: d for c, d in TRANSACTION_COLUMNS.items() if c != "detail"}
    frame = pd.DataFrame(rows, columns=list(columns))
    frame["duration"] = pd.to_datetime(frame["commit_time"], utc=True) - pd.to_datetime(frame["begin_time"], utc=True)
    for column in ("begin_time", "commit_time"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame.astype(columns)


def _label(t: dict) -> str:
    txn_id = t["txn"].txn_id
    return f"transaction {txn_id}" if txn_id is not None else "a transaction without an id"


def _at(name: str, e: dict, other: dict | None = None, **extra: Any) -> dict:
    row = {"finding": name, "table": e["table"], "key": e["key"], "source": e["source"] or "",
           "offset": e["offset"], "partition": e["partition"], "seq": e["seq"], "op": e["op"]}
    if other is not None:
        row.update(other_source=other["source"] or "", other_offset=other["offset"], other_seq=other["seq"])
    row.update(extra)
    return row


def findings(events: pd.DataFrame) -> pd.DataFrame:
    """The transaction findings of the ordering report, as finding rows (FINDING_COLUMNS)."""
    out = []
    for t in walk(events):
        label = _label(t)
        if t["status"] in ("missing_changes", "extra_changes"):
            total = t["declared_changes"]
            if total is None and t["declared_tables"] is not None:
                total = sum(t["declared_tables"].values())
            if total is None:
                out.append(_at("incomplete_transactions", t["commit"], table=None, key=None, count=t["gaps"],
                               detail=f"{label} numbers its changes 0..n-1 in their seq; the capture holds "
                                      f"{t['changes']} and none at {t['gaps']} of those places"))
            else:
                said = ", ".join(f"{n} {c}" for n, c in (t["declared_tables"] or {}).items())
                holds = ", ".join(f"{n} {h}" for n, _, h in t["differ"])
                out.append(_at("incomplete_transactions", t["commit"], table=None, key=None,
                               count=total - t["changes"],
                               detail=f"{label} declares {total} change(s)" + (f" ({said})" if said else "")
                                      + f"; the capture holds {t['changes']}" + (f" ({holds})" if holds else "")))
        if t["unbegun"]:
            tail = " or a declared count: it began before the capture" if t["status"] == "no_begin" else ""
            out.append(_at("unbegun_transactions", t["commit_markers"][0], table=None, key=None,
                           detail=f"{label} commits here without its BEGIN in the capture{tail}"))
        for again in t["begins"][1:]:
            out.append(_at("repeated_begins", again, t["begins"][0], table=None, key=None,
                           detail=f"{label} begins again here: the producer restarted in it, and the changes "
                                  "between the two may come twice"))
        if t["status"] == "no_commit" and not t["begins"] and t["changes"]:
            out.append(_at("unended_transactions", t["by_change"][0], key=None, count=t["changes"],
                           detail=f"{label}: {t['changes']} change(s) from here, no BEGIN and no commit in the "
                                  "capture, though its dialect marks transaction ends there"))
        sources: dict[str, list[dict]] = {}
        for e in t["by_change"]:
            sources.setdefault(e["source"] or "", []).append(e)
        for source, changes in sources.items():
            parts = sorted({e["partition"] for e in changes}, key=lambda p: (p is not None, p or 0))
            if len(parts) > 1:
                names = ", ".join("<NA>" if p is None else str(p) for p in parts)
                out.append(_at("split_transactions", changes[0], table=None, key=None, op=None, count=len(parts),
                               detail=f"{label}: its changes in {source} lie in {len(parts)} partitions ({names}): "
                                      "consumers reading the partitions apart see it in parts"))
        for e, top in t["misordered"]:
            out.append(_at("misordered_transactions", e, top,
                           detail=f"{label}: this change arrived after a later one of its transaction "
                                  f"(seq {top['seq']})"))
    return pd.DataFrame({name: pd.array([row.get(name) for row in out], dtype=dtype)
                         for name, dtype in FINDING_COLUMNS.items()})
