"""Drawing the statechart as text: a layered picture of its regions, a trail, and exports.

Pure (no Textual, no rich, nothing of the session layer): it reads anything shaped like
``agentcli.session.chart.ChartGraph``, so the TUI pane, ``agentcli workflows show`` and the
tests draw the same chart from the chart class itself.
"""

from agentcli.chart_drawing.canvas import Drawing, Span
from agentcli.chart_drawing.chart import draw_chart
from agentcli.chart_drawing.export import to_dot, to_mermaid
from agentcli.chart_drawing.labels import edge_label, format_trail

__all__ = ["Drawing", "Span", "draw_chart", "edge_label", "format_trail", "to_dot", "to_mermaid"]
