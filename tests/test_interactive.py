"""Interactive tables (cdckit.viz.interactive, cdckit.notebook): offline, escaped, deterministic in notebooks."""

from __future__ import annotations

import base64
import re

import pandas as pd

import cdckit
from cdckit import notebook
from cdckit.viz import interactive


def test_the_bundle_is_embedded_compressed_and_offers_what_itables_imports():
    html = interactive.init_html()
    assert len(html) < 400_000  # itables' own offline cell is about 950 KB
    stub = base64.b64decode(re.search(r'injectModule\("([A-Za-z0-9+/=]+)"\)', html).group(1)).decode("utf-8")
    assert stub == interactive.bundle()
    assert "export const { DateTime, ITable, jQuery, set_or_remove_dark_class } = bundle;" in stub
    assert "https://" not in stub and "import(url)" in stub


def test_cells_are_escaped_and_long_ones_get_their_value_as_tooltip_through_the_dom():
    html = interactive.table_html(pd.DataFrame({"<th>": ["</script><script>alert(1)</script>"]}), "hostile")
    assert "</script><script>alert(1)" not in html and "<th>&lt;th&gt;</th>" in html
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "td.title = td.textContent" in html  # a DOM property: never parsed as markup


def test_notebook_show_numbers_its_tables_and_says_what_it_left_out():
    events = cdckit.samples.load("canal/shop")
    first, second = notebook.show(events, max_rows=3), notebook.show(events.head(2))
    ids = [re.search(r'<table id="(cdckit-show-\d+)"', t.data).group(1) for t in (first, second)]
    assert int(ids[1].rsplit("-", 1)[1]) == int(ids[0].rsplit("-", 1)[1]) + 1
    assert "first 3 of 320 rows" in first.data and "of 320 rows" not in second.data
    assert not re.search(r"itables_[0-9a-f]{8}_", first.data)  # no random id: a re-run notebook shows the same output
