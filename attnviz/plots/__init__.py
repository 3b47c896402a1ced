"""Pure figure builders (Plotly), and the helpers of the What-if view beside its figure."""

from attnviz.plots.compare import difference_heatmap, encoder_attention_heatmaps, entropy_plot, js_plot, shared_range
from attnviz.plots.context import context_heatmap, context_projection, context_range
from attnviz.plots.cursor import cursor_data, has_cell
from attnviz.plots.data import gold_heatmap, length_histogram, metric_scatter, training_curves
from attnviz.plots.drift import drift_profile, drift_sentence
from attnviz.plots.explore import (
    align_tops,
    alignment_heatmap,
    attribution_heatmap,
    coverage_bar,
    explore_heatmap,
    step_animation,
)
from attnviz.plots.heads import GRID_SCALES, GridLayout, grid_layout, heads_grid
from attnviz.plots.heatmap import plot_config
from attnviz.plots.history import NARROW_PX as REPLAY_MIN_PX
from attnviz.plots.history import point_label, replay_figure, replay_html
from attnviz.plots.images import IMAGE_FORMATS, MIME, can_write_images, figure_html, figure_image, figure_images
from attnviz.plots.links import gold_figure, links_figure
from attnviz.plots.markup import SPAN_COLOURS, coloured_words, markup_figure, span_colour
from attnviz.plots.paper import paper_figure
from attnviz.plots.report import MEASURES, ReportSummary, report_html, worst_first
from attnviz.plots.rows import heatmap_rows, per_row
from attnviz.plots.scales import share_scales
from attnviz.plots.show import show, show_both, show_steps
from attnviz.plots.steps import context_bar, step_bar
from attnviz.plots.whatif import changed_steps, replace_word, source_words, step_table, whatif_figure

__all__ = [
    "GRID_SCALES",
    "IMAGE_FORMATS",
    "MEASURES",
    "MIME",
    "REPLAY_MIN_PX",
    "SPAN_COLOURS",
    "GridLayout",
    "ReportSummary",
    "align_tops",
    "alignment_heatmap",
    "attribution_heatmap",
    "can_write_images",
    "changed_steps",
    "coloured_words",
    "context_bar",
    "context_heatmap",
    "context_projection",
    "context_range",
    "coverage_bar",
    "cursor_data",
    "difference_heatmap",
    "drift_profile",
    "drift_sentence",
    "encoder_attention_heatmaps",
    "entropy_plot",
    "explore_heatmap",
    "figure_html",
    "figure_image",
    "figure_images",
    "gold_figure",
    "gold_heatmap",
    "grid_layout",
    "has_cell",
    "heads_grid",
    "heatmap_rows",
    "js_plot",
    "length_histogram",
    "links_figure",
    "markup_figure",
    "metric_scatter",
    "paper_figure",
    "per_row",
    "plot_config",
    "point_label",
    "replace_word",
    "replay_figure",
    "replay_html",
    "report_html",
    "share_scales",
    "shared_range",
    "show",
    "show_both",
    "show_steps",
    "source_words",
    "span_colour",
    "step_animation",
    "step_bar",
    "step_table",
    "training_curves",
    "whatif_figure",
    "worst_first",
]
