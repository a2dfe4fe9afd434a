"""``cdckit keys``: the keys infer_keys proposes for a value-only capture, with evidence and the --keys options."""

from __future__ import annotations

import re

import cdckit
from cdckit import samples
from cdckit.cli import main


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out


def test_keys_proposes_each_keyless_tables_key_with_its_evidence(capsys):
    path = str(samples.path("debezium/postgres_values"))  # Kafka values only: no key anywhere
    code, out = run(capsys, "keys", path, "--width", "200")
    assert code == 0
    proposal = cdckit.infer_keys(cdckit.read(path))
    options = re.search(r"give these keys to any command that reads: (.*)", out).group(1).split()
    given = dict(option.split("=") for option in options if option != "--keys")
    assert {table: columns.split(",") for table, columns in given.items()} == dict(proposal)
    assert given["sales.order_lines"] == "order_id,line_no" and given["public.customers"] == "id"
    assert "replica identity" in out and "runner-up" in out


def test_keys_of_a_keyed_capture_says_every_table_names_its_key(capsys):
    code, out = run(capsys, "keys", str(samples.path("canal/shop")))
    assert code == 0 and "named by the capture" in out and "no key proposed" in out
    assert "--keys" not in out


def test_keys_follows_the_filters(capsys):
    code, out = run(capsys, "keys", str(samples.path("debezium/postgres_values")), "--table", "customers")
    assert code == 0 and "--keys public.customers=id" in out and "order_lines" not in out
