"""The chart as Mermaid (``stateDiagram-v2``) and Graphviz DOT, for docs and issue reports.

Both are drawn from the chart's graph like the text drawing: every state (compound ones nested),
every region (Mermaid's ``--`` between concurrent regions, a DOT cluster each), the initial
states, and every transition labelled ``event [guard]`` with the chart's own names.
"""

from __future__ import annotations

import json

from agentcli.chart_drawing.canvas import EdgeLike, GraphLike, NodeLike


def transition_text(edge: EdgeLike) -> str:
    """``event [guard]``, either part left out when the transition has none."""
    parts = [edge.event] if edge.event else []
    if edge.cond:
        parts.append(f"[{edge.cond}]")
    return " ".join(parts)


def _children(graph: GraphLike) -> dict[str | None, list[NodeLike]]:
    children: dict[str | None, list[NodeLike]] = {}
    for node in graph.nodes:
        children.setdefault(node.parent, []).append(node)
    return children


def to_mermaid(graph: GraphLike) -> str:
    """A Mermaid ``stateDiagram-v2`` of the whole chart."""
    children = _children(graph)
    lines = ["stateDiagram-v2"]

    def block(node: NodeLike, depth: int) -> None:
        pad = "    " * depth
        kids = children.get(node.id, [])
        if not kids:
            lines.append(f'{pad}state "{_mermaid_text(node.name.rsplit(".", 1)[-1])}" as {node.id}')
            return
        lines.append(f'{pad}state "{_mermaid_text(node.name.rsplit(".", 1)[-1])}" as {node.id} {{')
        if node.kind == "parallel":
            for index, kid in enumerate(kids):
                if index:
                    lines.append(f"{pad}    --")
                block(kid, depth + 1)
        else:
            initial = next((kid for kid in kids if kid.initial), kids[0])
            lines.append(f"{pad}    [*] --> {initial.id}")
            for kid in kids:
                block(kid, depth + 1)
        lines.append(f"{pad}}}")

    for root in children.get(None, []):
        lines.append(f"    [*] --> {root.id}")
        block(root, 1)
    for edge in graph.edges:
        label = transition_text(edge)
        lines.append(f"    {edge.source} --> {edge.target}" + (f" : {_mermaid_text(label)}" if label else ""))
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # A label runs to the end of the line; '#' starts an entity code and ';' ends a statement.
    return text.replace("#", "＃").replace(";", ",").replace('"', "'")


def to_dot(graph: GraphLike, name: str = "chart") -> str:
    """A Graphviz digraph: a cluster per region and compound state, an edge per transition."""
    children = _children(graph)
    lines = [f"digraph {json.dumps(name)} {{", "    compound=true;", "    rankdir=TB;",
             '    node [shape=box, style=rounded, fontname="monospace"];',
             '    edge [fontname="monospace", fontsize=10];']

    def anchor(node_id: str) -> str:
        """A compound state's edges attach to its first atomic descendant (clipped at the cluster)."""
        kids = children.get(node_id, [])
        return anchor(next((kid for kid in kids if kid.initial), kids[0]).id) if kids else node_id

    def block(node: NodeLike, depth: int) -> None:
        pad = "    " * depth
        kids = children.get(node.id, [])
        if not kids:
            lines.append(f"{pad}{json.dumps(node.id)} [label={json.dumps(node.name.rsplit('.', 1)[-1])}];")
            return
        lines.append(f"{pad}subgraph {json.dumps('cluster_' + node.id)} {{")
        lines.append(f"{pad}    label={json.dumps(node.name.rsplit('.', 1)[-1])};")
        if node.kind != "parallel":
            initial = next((kid for kid in kids if kid.initial), kids[0])
            start = f"start_{node.id}"
            lines.append(f'{pad}    {json.dumps(start)} [shape=point, label=""];')
            lines.append(f"{pad}    {json.dumps(start)} -> {json.dumps(anchor(initial.id))}"
                         + (f" [lhead={json.dumps('cluster_' + initial.id)}];" if children.get(initial.id) else ";"))
        for kid in kids:
            block(kid, depth + 1)
        lines.append(f"{pad}}}")

    for root in children.get(None, []):
        block(root, 1)
    for edge in graph.edges:
        attributes = [f"label={json.dumps(transition_text(edge))}"]
        if children.get(edge.source):
            attributes.append(f"ltail={json.dumps('cluster_' + edge.source)}")
        if children.get(edge.target):
            attributes.append(f"lhead={json.dumps('cluster_' + edge.target)}")
        lines.append(f"    {json.dumps(anchor(edge.source))} -> {json.dumps(anchor(edge.target))}"
                     f" [{', '.join(attributes)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
