"""Reports: metrics over stored runs (Table 1, Table 2, Figure 2), table rendering, figures and export."""
