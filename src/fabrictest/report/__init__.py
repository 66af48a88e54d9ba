"""Results -> tables, plots, regression verdicts (`fabric-report`).

    results: PerfRecord rows from JSON run reports, stored sessions (via ReFrame's CLI), perflogs
    compare: two result sets, or one against its references, flagged beyond tolerance
    plots:   PNGs (Agg): size curves with reference band, per-stream rates, sweep heatmap
    html:    one offline page
"""
