"""Graph document: nodes, ports, edges and composite Cells, with change events (headless)."""
