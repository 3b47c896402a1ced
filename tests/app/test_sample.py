"""Explore's Alignment view, a sample of the corpus (AppTest, the tiny toy-fr models): N pairs of a split
read and scored against gold, the worst listed, the whole report offered as HTML."""

from __future__ import annotations

import re

from tests.support.app import TEXT, start


def _worst_tables(at) -> list:
    return [d for d in at.dataframe if "AER" in d.value.columns]


def _sampled(**state):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="sample", **state)
    assert not at.exception, at.exception
    at.number_input(key="explore_sample_n").set_value(6)
    at.segmented_control(key="explore_sample_split").set_value("test")
    at.button(key="explore_sample_run").click().run()
    assert not at.exception, at.exception
    return at


def test_a_sample_is_scored_against_gold_worst_first(app_env):
    at = _sampled()
    line = re.sub(r"\\(.)", r"\1", next(m.value for m in at.markdown if "mean AER" in m.value))
    assert "6 pairs of toy-fr (test), mean AER against gold" in line
    (table,) = [t.value for t in _worst_tables(at)]
    assert list(table.columns) == ["pair", "AER", "source", "target"] and len(table) == 6
    assert list(table["AER"]) == sorted(table["AER"], reverse=True)  # worst first
    assert any((b.key or "").startswith("explore_sample_report_") for b in at.get("download_button"))


def test_the_sample_stays_across_reruns_and_both_styles_get_one_each(app_env):
    at = _sampled(explore_style="both")
    assert len(_worst_tables(at)) == 2
    assert [
        n for n in ("Bahdanau", "Luong") if any(f"**{n}**" in m.value and "mean AER" in m.value for m in at.markdown)
    ]
    at.run()  # another rerun: the results are kept, not recomputed or lost
    assert len(_worst_tables(at)) == 2
    at.number_input(key="explore_sample_seed").set_value(3).run()  # another sample is asked for, not shown yet
    assert not _worst_tables(at)


def test_symmetric_links_are_read_as_argmax_with_a_note(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="sample", explore_align_method="dtw")
    assert not at.exception, at.exception
    assert not [c for c in at.caption if "read as argmax" in c.value]  # dtw is one a report reads


def test_the_table_holds_the_pairs_of_the_split_and_seed_asked_for(app_env):
    """The worst pairs shown are those the library draws for the split and seed chosen (the line's
    "(test)" comes from the control, so only the pairs show which split was read)."""
    from attnviz.links.report import sample_alignments
    from attnviz.store import catalog

    def shown(at) -> list[str]:
        (table,) = [t.value for t in _worst_tables(at)]
        return list(table["source"])

    def drawn(split: str, seed: int) -> list[str]:
        sample = sample_alignments(catalog.load(name), split=split, n=6, seed=seed, method="argmax")
        return sorted(" ".join(s.source_words) for s in sample.sentences)

    at = _sampled()
    line = re.sub(r"\\(.)", r"\1", next(m.value for m in at.markdown if "mean AER" in m.value))
    name = re.search(r"· (\S+): 6 pairs", line).group(1)
    assert sorted(shown(at)) == drawn("test", 0) != drawn("train", 0)
    at.number_input(key="explore_sample_seed").set_value(3)
    at.button(key="explore_sample_run").click().run()
    assert not at.exception, at.exception
    assert sorted(shown(at)) == drawn("test", 3) != drawn("test", 0)
