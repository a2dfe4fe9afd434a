"""Interactive tables (cdckit.viz.interactive, cdckit.notebook): offline, escaped, deterministic in notebooks."""

from __future__ import annotations

import base64
import re
import warnings

import pandas as pd
import pytest

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


def test_a_column_of_zoned_times_makes_a_table_without_a_warning():
    frame = pd.DataFrame({"at": pd.to_datetime(["2024-05-01 10:00"]).tz_localize("UTC"), "v": [1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = interactive.table_html(frame, "zoned")
    assert "2024-05-01" in html


def test_notebook_show_numbers_its_tables_and_says_what_it_left_out():
    events = cdckit.samples.load("canal/shop")
    first, second = notebook.show(events, max_rows=3), notebook.show(events.head(2))
    ids = [re.search(r'<table id="(cdckit-show-\d+)"', t.data).group(1) for t in (first, second)]
    assert int(ids[1].rsplit("-", 1)[1]) == int(ids[0].rsplit("-", 1)[1]) + 1
    assert "first 3 of 320 rows" in first.data and "of 320 rows" not in second.data
    assert not re.search(r"itables_[0-9a-f]{8}_", first.data)  # no random id: a re-run notebook shows the same output


SCRIPTLESS_NOTES = ("trusted", "<noscript", "\N{LOCK}", "\N{CIRCLED LATIN SMALL LETTER I}", "static preview")


@pytest.fixture
def ipython():
    """An IPython shell for the test (``setup()`` acts only in one), pandas' HTML reprs restored after."""
    from IPython.core.interactiveshell import InteractiveShell

    saved = {cls: cls.__dict__.get("_repr_html_") for cls in (pd.DataFrame, pd.Series)}
    shell = InteractiveShell.instance()
    try:
        yield shell
    finally:
        InteractiveShell.clear_instance()
        for cls, method in saved.items():
            if method is None:
                if "_repr_html_" in cls.__dict__:
                    delattr(cls, "_repr_html_")
            else:
                cls._repr_html_ = method


def test_setup_shows_one_output_that_defines_the_tables_module_before_using_it(ipython):
    from IPython.utils.capture import capture_output

    with capture_output() as shown:
        notebook.setup()
    assert len(shown.outputs) == 1  # one output: JupyterLab runs its scripts in order
    html = shown.outputs[0].data["text/html"]
    module = re.search(r"window\.(_itables_\w+)\s*=\s*injectModule", html).group(1)
    uses = [m.start() for m in re.finditer(rf"await window\.{module}\b", html)]
    assert uses and html.index(f"window.{module} = ") < min(uses)  # was: used first, "Cannot destructure ..."
    assert "set_or_remove_dark_class" in html and "https://" not in html


def test_saved_outputs_read_well_where_scripts_do_not_run(ipython):
    """A shipped notebook is untrusted: JupyterLab strips its scripts and shows <noscript> text."""
    from IPython.utils.capture import capture_output

    with capture_output() as shown:
        notebook.setup()
    frame = pd.DataFrame({"offset": [1, 2], "op": ["insert", "update"]})
    outputs = {"setup": shown.outputs[0].data["text/html"], "repr": frame._repr_html_(),
               "series": frame["op"]._repr_html_(), "show": notebook.show(frame).data,
               "table_html": interactive.table_html(frame, "plain"), "init_html": interactive.init_html()}
    for name, html in outputs.items():
        assert not [note for note in SCRIPTLESS_NOTES if note in html], name
    assert "new ITable" in outputs["repr"] and "<th style=\"border:1px solid #ddd;padding:8px\">offset</th>" in outputs["repr"]
